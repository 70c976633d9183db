//! A worker's pending forks: its owner pushes and pops at one end (newest first), other threads
//! steal at the other end (oldest first: the biggest pieces of a recursion).
//!
//! This is crossbeam's Chase–Lev deque, the structure made for exactly this job: a push is two
//! plain stores, a pop one fence, a steal one compare-exchange. crossbeam model-checks it with
//! loom itself; under `--cfg loom` we substitute a locked `VecDeque` with the same semantics, so
//! that our loom models explore the protocol *around* the deque (sleep/wake, latches, the
//! limit) with every interleaving of pushes, pops and steals.

#[cfg(not(loom))]
mod imp {
    use crossbeam_deque::Steal;

    /// The owner's end.
    pub(crate) struct Worker<T>(crossbeam_deque::Worker<T>);

    /// Another thread's end.
    pub(crate) struct Stealer<T>(crossbeam_deque::Stealer<T>);

    impl<T> Worker<T> {
        pub(crate) fn new() -> Self {
            Worker(crossbeam_deque::Worker::new_lifo())
        }
        pub(crate) fn stealer(&self) -> Stealer<T> {
            Stealer(self.0.stealer())
        }
        #[inline(always)]
        pub(crate) fn push(&self, value: T) {
            self.0.push(value);
        }
        #[inline(always)]
        pub(crate) fn pop(&self) -> Option<T> {
            self.0.pop()
        }
        #[inline(always)]
        pub(crate) fn len(&self) -> usize {
            self.0.len()
        }
    }

    impl<T> Stealer<T> {
        /// Takes the oldest item; `None` if the deque is empty. Retries a steal that lost a race
        /// with another thief or the owner (one of them made progress, so this ends).
        pub(crate) fn steal(&self) -> Option<T> {
            loop {
                match self.0.steal() {
                    Steal::Success(v) => return Some(v),
                    Steal::Empty => return None,
                    Steal::Retry => std::hint::spin_loop(),
                }
            }
        }
        pub(crate) fn is_empty(&self) -> bool {
            self.0.is_empty()
        }
    }

    impl<T> std::fmt::Debug for Stealer<T> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("Stealer")
        }
    }
}

#[cfg(loom)]
mod imp {
    use crate::sync::{lock, Arc, Mutex};
    use std::collections::VecDeque;

    pub(crate) struct Worker<T>(Arc<Mutex<VecDeque<T>>>);
    pub(crate) struct Stealer<T>(Arc<Mutex<VecDeque<T>>>);

    impl<T> Worker<T> {
        pub(crate) fn new() -> Self {
            Worker(Arc::new(Mutex::new(VecDeque::new())))
        }
        pub(crate) fn stealer(&self) -> Stealer<T> {
            Stealer(self.0.clone())
        }
        pub(crate) fn push(&self, value: T) {
            lock(&self.0).push_back(value);
        }
        pub(crate) fn pop(&self) -> Option<T> {
            lock(&self.0).pop_back()
        }
        pub(crate) fn len(&self) -> usize {
            lock(&self.0).len()
        }
    }

    impl<T> Stealer<T> {
        pub(crate) fn steal(&self) -> Option<T> {
            lock(&self.0).pop_front()
        }
        pub(crate) fn is_empty(&self) -> bool {
            lock(&self.0).is_empty()
        }
    }

    impl<T> std::fmt::Debug for Stealer<T> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("Stealer")
        }
    }
}

pub(crate) use imp::{Stealer, Worker};
