//! A macro for parallel iterator types that wrap another (rayon's names for iterators that
//! throttle builds from its own): every method forwards to `inner`.

/// `delegate!(Name[generics] => Inner, Item, [bounds])`: a struct `Name` holding
/// `inner: Inner`, and `ParallelIterator` and `IndexedParallelIterator` impls that forward to
/// it.
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
        impl<$($g)*> $crate::iter::ParallelIterator for $name<$($g)*> where $($bounds)* {
            type Item = $item;

            fn drive_unindexed<C>(self, consumer: C) -> C::Result
            where
                C: $crate::iter::plumbing::UnindexedConsumer<Self::Item>,
            {
                self.inner.drive_unindexed(consumer)
            }

            fn opt_len(&self) -> Option<usize> {
                self.inner.opt_len()
            }
        }

        impl<$($g)*> $crate::iter::IndexedParallelIterator for $name<$($g)*> where $($bounds)* {
            fn drive<C>(self, consumer: C) -> C::Result
            where
                C: $crate::iter::plumbing::Consumer<Self::Item>,
            {
                self.inner.drive(consumer)
            }

            fn len(&self) -> usize {
                self.inner.len()
            }

            fn with_producer<CB>(self, callback: CB) -> CB::Output
            where
                CB: $crate::iter::plumbing::ProducerCallback<Self::Item>,
            {
                self.inner.with_producer(callback)
            }
        }
    };
}
