//! The traits a data-parallel program needs in scope: `use throttle::prelude::*;` (the
//! counterpart of `use rayon::prelude::*;`).
//!
//! # Examples
//! ```
//! use throttle::prelude::*;
//! let v = vec![1, 2, 3, 4];
//! let doubled: Vec<i32> = v.par_iter().map(|x| x * 2).collect();
//! assert_eq!(doubled, [2, 4, 6, 8]);
//! ```

pub use crate::iter::slice::{ParallelSlice, ParallelSliceMut};
pub use crate::iter::str::ParallelString;
pub use crate::iter::{
    FromParallelIterator, IndexedParallelIterator, IntoParallelIterator, IntoParallelRefIterator,
    IntoParallelRefMutIterator, ParallelExtend, ParallelIterator,
};
pub use crate::iter::{ParallelBridge, ParallelDrainFull, ParallelDrainRange};
