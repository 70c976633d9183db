//! A macro for parallel iterator types that wrap another producer (rayon's names for
//! iterators that throttle builds from its own): every producer method forwards to `inner`.

/// `delegate!(Name[generics] => Inner, Item, bounds)`: a struct `Name` holding `inner: Inner`,
/// a `Producer` that forwards to it, and an `IndexedProducer` impl.
macro_rules! delegate {
    ($(#[$m:meta])* $name:ident [$($g:tt)*] => $inner:ty, $item:ty, [$($bounds:tt)*]) => {
        $(#[$m])*
        #[derive(Debug, Clone)]
        pub struct $name<$($g)*> {
            pub(crate) inner: $inner,
        }

        delegate_impls!($name [$($g)*] => $inner, $item, [$($bounds)*]);
    };
}

/// The impls of [`delegate!`] alone, for a struct declared by hand.
macro_rules! delegate_impls {
    ($name:ident [$($g:tt)*] => $inner:ty, $item:ty, [$($bounds:tt)*]) => {
        impl<$($g)*> $crate::iter::plumbing::Producer for $name<$($g)*> where $($bounds)* {
            type Item = $item;
            type IntoSeq = <$inner as $crate::iter::plumbing::Producer>::IntoSeq;
            fn base_len(&self) -> usize {
                self.inner.base_len()
            }
            fn split_at(self, index: usize) -> (Self, Self) {
                let (l, r) = self.inner.split_at(index);
                ($name { inner: l }, $name { inner: r })
            }
            fn into_seq(self) -> Self::IntoSeq {
                self.inner.into_seq()
            }
            fn min_len(&self) -> usize {
                self.inner.min_len()
            }
            fn max_len(&self) -> usize {
                self.inner.max_len()
            }
            fn stopped(&self) -> bool {
                self.inner.stopped()
            }
            fn exact_len(&self) -> Option<usize> {
                self.inner.exact_len()
            }
        }

        impl<$($g)*> $crate::iter::plumbing::IndexedProducer for $name<$($g)*> where $($bounds)* {}
    };
}
