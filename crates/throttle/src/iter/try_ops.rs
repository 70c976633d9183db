//! `try_for_each` and `try_reduce`: the fallible consumers, over `Result` and `Option`.

use std::ops::ControlFlow;

mod sealed {
    pub trait Sealed {}
    impl<T, E> Sealed for Result<T, E> {}
    impl<T> Sealed for Option<T> {}
}

/// A type that is either a value to go on with or a reason to stop: `Result<T, E>` (stop on
/// `Err`) and `Option<T>` (stop on `None`). Stable Rust's stand-in for the unstable
/// `std::ops::Try`, as in rayon; implemented for those two only (sealed).
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let r: Result<(), String> = (0..10u32).into_par_iter().try_for_each(|x| {
///     if x < 100 { Ok(()) } else { Err(format!("{x} is too big")) }
/// });
/// assert!(r.is_ok());
/// ```
pub trait Try: sealed::Sealed {
    /// The value to go on with (`T`).
    type Output;
    /// What a stop carries (`E` for `Result`, `()` for `Option`).
    type Residual;
    /// Go on with the output, or stop with the residual.
    fn branch(self) -> ControlFlow<Self::Residual, Self::Output>;
    /// Wraps a value to go on with (`Ok`, `Some`).
    fn from_output(output: Self::Output) -> Self;
    /// Wraps a reason to stop (`Err`, `None`).
    fn from_residual(residual: Self::Residual) -> Self;
}

impl<T, E> Try for Result<T, E> {
    type Output = T;
    type Residual = E;
    fn branch(self) -> ControlFlow<E, T> {
        match self {
            Ok(t) => ControlFlow::Continue(t),
            Err(e) => ControlFlow::Break(e),
        }
    }
    fn from_output(output: T) -> Self {
        Ok(output)
    }
    fn from_residual(residual: E) -> Self {
        Err(residual)
    }
}

impl<T> Try for Option<T> {
    type Output = T;
    type Residual = ();
    fn branch(self) -> ControlFlow<(), T> {
        match self {
            Some(t) => ControlFlow::Continue(t),
            None => ControlFlow::Break(()),
        }
    }
    fn from_output(output: T) -> Self {
        Some(output)
    }
    fn from_residual((): ()) -> Self {
        None
    }
}
