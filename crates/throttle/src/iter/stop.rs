//! Adapters whose pieces share a state during a run: `while_some`, `panic_fuse`, `take_any`,
//! `skip_any`, `take_any_while` and `skip_any_while`.
//!
//! The state is made when a run first splits or runs the adapter (not when the adapter is
//! built), so a clone of an adapter that has not run starts afresh. Once the state says the
//! adapter yields nothing more, [`Producer::stopped`] tells the run to stop splitting; pieces
//! that still run see the state and end at once, dropping their items.

use super::plumbing::Producer;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

/// A state shared by the pieces of one run, made on first use.
struct Shared<S>(Option<Arc<S>>);

impl<S> Shared<S> {
    fn new() -> Self {
        Shared(None)
    }
    fn get(&mut self, make: impl FnOnce() -> S) -> Arc<S> {
        self.0.get_or_insert_with(|| Arc::new(make())).clone()
    }
    fn peek(&self) -> Option<&S> {
        self.0.as_deref()
    }
}

impl<S> Clone for Shared<S> {
    /// A clone of an adapter that has not run starts afresh; pieces of a run share the state
    /// (they get it through `split_at`, not through `clone`).
    fn clone(&self) -> Self {
        Shared(None)
    }
}

impl<S> std::fmt::Debug for Shared<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Shared(running)"
        } else {
            "Shared"
        })
    }
}

/// Generates an adapter struct over `base` with a lazily made shared state.
macro_rules! shared_adapter {
    ($(#[$m:meta])* $name:ident [$($c:ident),*] [$($u:ident),*] { $($field:ident: $ty:ty),* }
     state: $st:ty) => {
        $(#[$m])*
        pub struct $name<$($c,)* $($u,)*> {
            base: P,
            $($field: $ty,)*
            state: Shared<$st>,
        }

        impl<$($c: Clone,)* $($u,)*> Clone for $name<$($c,)* $($u,)*> {
            fn clone(&self) -> Self {
                $name {
                    base: self.base.clone(),
                    $($field: self.$field.clone(),)*
                    state: self.state.clone(),
                }
            }
        }

        impl<$($c: std::fmt::Debug,)* $($u,)*> std::fmt::Debug for $name<$($c,)* $($u,)*> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($name))
                    .field("base", &self.base)
                    .finish_non_exhaustive()
            }
        }
    };
}

/// Splits an adapter made by `shared_adapter!`, sharing its state between the halves.
macro_rules! split_shared {
    ($self:ident, $index:ident, $name:ident, $make:expr, { $($field:ident),* }) => {{
        let state = $self.state.get($make);
        let (l, r) = $self.base.split_at($index);
        (
            $name { base: l, $($field: $self.$field.clone(),)* state: Shared(Some(state.clone())) },
            $name { base: r, $($field: $self.$field,)* state: Shared(Some(state)) },
        )
    }};
}

shared_adapter!(
    /// The `Some` values of an iterator over `Option`s, stopping once a `None` is seen; see
    /// [`ParallelIterator::while_some`](super::ParallelIterator::while_some).
    WhileSome [P] [] {} state: AtomicBool
);

impl<T, P: Producer<Item = Option<T>>> Producer for WhileSome<P> {
    type Item = T;
    type IntoSeq = WhileSomeSeq<P::IntoSeq>;
    fn base_len(&self) -> usize {
        self.base.base_len()
    }
    fn split_at(mut self, index: usize) -> (Self, Self) {
        split_shared!(self, index, WhileSome, || AtomicBool::new(false), {})
    }
    fn into_seq(mut self) -> Self::IntoSeq {
        WhileSomeSeq {
            stop: self.state.get(|| AtomicBool::new(false)),
            iter: self.base.into_seq(),
        }
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
    fn stopped(&self) -> bool {
        self.base.stopped() || self.state.peek().is_some_and(|s| s.load(Ordering::Relaxed))
    }
}

/// The sequential iterator of a [`WhileSome`] leaf.
pub struct WhileSomeSeq<I> {
    iter: I,
    stop: Arc<AtomicBool>,
}

impl<T, I: Iterator<Item = Option<T>>> Iterator for WhileSomeSeq<I> {
    type Item = T;
    fn next(&mut self) -> Option<T> {
        if self.stop.load(Ordering::Relaxed) {
            return None;
        }
        match self.iter.next()? {
            Some(x) => Some(x),
            None => {
                self.stop.store(true, Ordering::Relaxed);
                None
            }
        }
    }
}

shared_adapter!(
    /// Stops every piece once one panicked; see
    /// [`ParallelIterator::panic_fuse`](super::ParallelIterator::panic_fuse).
    PanicFuse [P] [] {} state: AtomicBool
);

impl<P: Producer> Producer for PanicFuse<P> {
    type Item = P::Item;
    type IntoSeq = PanicFuseSeq<P::IntoSeq>;
    fn base_len(&self) -> usize {
        self.base.base_len()
    }
    fn split_at(mut self, index: usize) -> (Self, Self) {
        split_shared!(self, index, PanicFuse, || AtomicBool::new(false), {})
    }
    fn into_seq(mut self) -> Self::IntoSeq {
        PanicFuseSeq {
            panicked: self.state.get(|| AtomicBool::new(false)),
            iter: self.base.into_seq(),
        }
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
    fn stopped(&self) -> bool {
        self.base.stopped() || self.state.peek().is_some_and(|s| s.load(Ordering::Relaxed))
    }
    fn exact_len(&self) -> Option<usize> {
        self.base.exact_len()
    }
}

/// The sequential iterator of a [`PanicFuse`] leaf: ends once any piece panicked, and sets
/// the fuse if it is dropped while its thread unwinds.
pub struct PanicFuseSeq<I> {
    iter: I,
    panicked: Arc<AtomicBool>,
}

impl<I: Iterator> Iterator for PanicFuseSeq<I> {
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        if self.panicked.load(Ordering::Relaxed) {
            return None;
        }
        self.iter.next()
    }
}

impl<I: DoubleEndedIterator> DoubleEndedIterator for PanicFuseSeq<I> {
    fn next_back(&mut self) -> Option<I::Item> {
        if self.panicked.load(Ordering::Relaxed) {
            return None;
        }
        self.iter.next_back()
    }
}

/// Exact as its base: it ends early only while a panic is on its way to the caller, whose
/// result is never seen.
impl<P: super::plumbing::IndexedProducer> super::plumbing::IndexedProducer for PanicFuse<P> {}

impl<I> Drop for PanicFuseSeq<I> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.panicked.store(true, Ordering::Relaxed);
        }
    }
}

shared_adapter!(
    /// At most `n` items, any of them; see
    /// [`ParallelIterator::take_any`](super::ParallelIterator::take_any).
    TakeAny [P] [] { n: usize } state: AtomicUsize
);

impl<P: Producer> Producer for TakeAny<P> {
    type Item = P::Item;
    type IntoSeq = TakeAnySeq<P::IntoSeq>;
    fn base_len(&self) -> usize {
        self.base.base_len()
    }
    fn split_at(mut self, index: usize) -> (Self, Self) {
        let n = self.n;
        split_shared!(self, index, TakeAny, || AtomicUsize::new(n), { n })
    }
    fn into_seq(mut self) -> Self::IntoSeq {
        let n = self.n;
        TakeAnySeq {
            left: self.state.get(|| AtomicUsize::new(n)),
            iter: self.base.into_seq(),
        }
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
    fn stopped(&self) -> bool {
        let left = self
            .state
            .peek()
            .map_or(self.n, |s| s.load(Ordering::Relaxed));
        self.base.stopped() || left == 0
    }
}

/// Takes one from `left` unless it is 0.
fn take_one(left: &AtomicUsize) -> bool {
    left.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
        .is_ok()
}

/// The sequential iterator of a [`TakeAny`] leaf.
pub struct TakeAnySeq<I> {
    iter: I,
    left: Arc<AtomicUsize>,
}

impl<I: Iterator> Iterator for TakeAnySeq<I> {
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        if self.left.load(Ordering::Relaxed) == 0 {
            return None;
        }
        let x = self.iter.next()?;
        take_one(&self.left).then_some(x)
    }
}

shared_adapter!(
    /// All items but `n` of them, any `n`; see
    /// [`ParallelIterator::skip_any`](super::ParallelIterator::skip_any).
    SkipAny [P] [] { n: usize } state: AtomicUsize
);

impl<P: Producer> Producer for SkipAny<P> {
    type Item = P::Item;
    type IntoSeq = SkipAnySeq<P::IntoSeq>;
    fn base_len(&self) -> usize {
        self.base.base_len()
    }
    fn split_at(mut self, index: usize) -> (Self, Self) {
        let n = self.n;
        split_shared!(self, index, SkipAny, || AtomicUsize::new(n), { n })
    }
    fn into_seq(mut self) -> Self::IntoSeq {
        let n = self.n;
        SkipAnySeq {
            left: self.state.get(|| AtomicUsize::new(n)),
            iter: self.base.into_seq(),
        }
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
    fn stopped(&self) -> bool {
        self.base.stopped()
    }
}

/// The sequential iterator of a [`SkipAny`] leaf.
pub struct SkipAnySeq<I> {
    iter: I,
    left: Arc<AtomicUsize>,
}

impl<I: Iterator> Iterator for SkipAnySeq<I> {
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        loop {
            let x = self.iter.next()?;
            if self.left.load(Ordering::Relaxed) == 0 || !take_one(&self.left) {
                return Some(x);
            }
        }
    }
}

shared_adapter!(
    /// Items while a predicate holds, from anywhere; stops once it failed for any item; see
    /// [`ParallelIterator::take_any_while`](super::ParallelIterator::take_any_while).
    TakeAnyWhile [P] [F] { f: Arc<F> } state: AtomicBool
);

impl<P, F> Producer for TakeAnyWhile<P, F>
where
    P: Producer,
    F: Fn(&P::Item) -> bool + Sync + Send,
{
    type Item = P::Item;
    type IntoSeq = TakeAnyWhileSeq<P::IntoSeq, F>;
    fn base_len(&self) -> usize {
        self.base.base_len()
    }
    fn split_at(mut self, index: usize) -> (Self, Self) {
        split_shared!(self, index, TakeAnyWhile, || AtomicBool::new(false), { f })
    }
    fn into_seq(mut self) -> Self::IntoSeq {
        TakeAnyWhileSeq {
            stop: self.state.get(|| AtomicBool::new(false)),
            iter: self.base.into_seq(),
            f: self.f,
        }
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
    fn stopped(&self) -> bool {
        self.base.stopped() || self.state.peek().is_some_and(|s| s.load(Ordering::Relaxed))
    }
}

/// The sequential iterator of a [`TakeAnyWhile`] leaf.
pub struct TakeAnyWhileSeq<I, F> {
    iter: I,
    f: Arc<F>,
    stop: Arc<AtomicBool>,
}

impl<I: Iterator, F: Fn(&I::Item) -> bool> Iterator for TakeAnyWhileSeq<I, F> {
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        if self.stop.load(Ordering::Relaxed) {
            return None;
        }
        let x = self.iter.next()?;
        if (self.f)(&x) {
            Some(x)
        } else {
            self.stop.store(true, Ordering::Relaxed);
            None
        }
    }
}

shared_adapter!(
    /// Skips items while a predicate holds, from anywhere; once it failed for any item, yields
    /// all the rest; see
    /// [`ParallelIterator::skip_any_while`](super::ParallelIterator::skip_any_while).
    SkipAnyWhile [P] [F] { f: Arc<F> } state: AtomicBool
);

impl<P, F> Producer for SkipAnyWhile<P, F>
where
    P: Producer,
    F: Fn(&P::Item) -> bool + Sync + Send,
{
    type Item = P::Item;
    type IntoSeq = SkipAnyWhileSeq<P::IntoSeq, F>;
    fn base_len(&self) -> usize {
        self.base.base_len()
    }
    fn split_at(mut self, index: usize) -> (Self, Self) {
        split_shared!(self, index, SkipAnyWhile, || AtomicBool::new(false), { f })
    }
    fn into_seq(mut self) -> Self::IntoSeq {
        SkipAnyWhileSeq {
            yielding: self.state.get(|| AtomicBool::new(false)),
            iter: self.base.into_seq(),
            f: self.f,
        }
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
    fn stopped(&self) -> bool {
        self.base.stopped()
    }
}

/// The sequential iterator of a [`SkipAnyWhile`] leaf.
pub struct SkipAnyWhileSeq<I, F> {
    iter: I,
    f: Arc<F>,
    yielding: Arc<AtomicBool>,
}

impl<I: Iterator, F: Fn(&I::Item) -> bool> Iterator for SkipAnyWhileSeq<I, F> {
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        loop {
            let x = self.iter.next()?;
            if self.yielding.load(Ordering::Relaxed) || !(self.f)(&x) {
                self.yielding.store(true, Ordering::Relaxed);
                return Some(x);
            }
        }
    }
}

impl<P> WhileSome<P> {
    pub(crate) fn new(base: P) -> Self {
        WhileSome {
            base,
            state: Shared::new(),
        }
    }
}

impl<P> PanicFuse<P> {
    pub(crate) fn new(base: P) -> Self {
        PanicFuse {
            base,
            state: Shared::new(),
        }
    }
}

impl<P> TakeAny<P> {
    pub(crate) fn new(base: P, n: usize) -> Self {
        TakeAny {
            base,
            n,
            state: Shared::new(),
        }
    }
}

impl<P> SkipAny<P> {
    pub(crate) fn new(base: P, n: usize) -> Self {
        SkipAny {
            base,
            n,
            state: Shared::new(),
        }
    }
}

impl<P, F> TakeAnyWhile<P, F> {
    pub(crate) fn new(base: P, f: F) -> Self {
        TakeAnyWhile {
            base,
            f: Arc::new(f),
            state: Shared::new(),
        }
    }
}

impl<P, F> SkipAnyWhile<P, F> {
    pub(crate) fn new(base: P, f: F) -> Self {
        SkipAnyWhile {
            base,
            f: Arc::new(f),
            state: Shared::new(),
        }
    }
}
