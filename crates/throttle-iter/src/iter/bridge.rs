//! `par_bridge`: a sequential iterator as a parallel iterator. The pool's threads take its
//! items one at a time under a lock, so the items are processed in no particular order; it
//! pays when each item costs much more than the lock.
//!
//! A piece of work pulls at most its number of units (the run's block) and then lets the run
//! decide, like any other source; once the iterator is exhausted every piece stops. A thread
//! that is inside the iterator's `next` (which may itself run pool work, and so a piece of the
//! same bridge) never waits for the lock it holds: such a nested piece stops at once and leaves
//! the items to the others.

use super::plumbing::engine::Pieces;
use super::plumbing::Folder;
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

thread_local! {
    static TOKEN: Cell<u8> = const { Cell::new(0) };
}

/// A number that identifies the calling thread among live threads (never 0).
fn me() -> usize {
    TOKEN.with(|t| t as *const Cell<u8> as usize)
}

/// What the pieces of a running bridge share.
struct Source<I> {
    iter: Mutex<I>,
    /// The iterator returned `None`.
    done: AtomicBool,
    /// The thread inside `next`, or 0.
    holder: AtomicUsize,
}

impl<I: Iterator> Source<I> {
    fn lock(&self) -> MutexGuard<'_, I> {
        // A panic in `next` poisons the lock; the panic itself reaches the caller, and the
        // iterator is not touched again (`done` is set below).
        self.iter
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The next item, or `None` if the iterator is exhausted or this thread is already inside
    /// its `next`.
    fn pull(&self) -> Option<I::Item> {
        if self.done.load(Ordering::Relaxed) || self.holder.load(Ordering::Relaxed) == me() {
            return None;
        }
        let mut iter = self.lock();
        self.holder.store(me(), Ordering::Relaxed);
        let item = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| iter.next()));
        self.holder.store(0, Ordering::Relaxed);
        match item {
            Ok(Some(x)) => Some(x),
            Ok(None) => {
                self.done.store(true, Ordering::Relaxed);
                None
            }
            Err(panic) => {
                self.done.store(true, Ordering::Relaxed);
                drop(iter);
                std::panic::resume_unwind(panic)
            }
        }
    }
}

/// A sequential iterator as a parallel iterator; from [`ParallelBridge::par_bridge`].
pub struct IterBridge<I> {
    /// The iterator, until a run starts.
    iter: Option<I>,
    /// Shared by the pieces of a run.
    source: Option<Arc<Source<I>>>,
    /// Units this piece may pull.
    len: usize,
}

impl<I: Clone> Clone for IterBridge<I> {
    fn clone(&self) -> Self {
        IterBridge {
            iter: self.iter.clone(),
            source: self.source.clone(),
            len: self.len,
        }
    }
}

impl<I: std::fmt::Debug> std::fmt::Debug for IterBridge<I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IterBridge")
            .field("iter", &self.iter)
            .finish_non_exhaustive()
    }
}

impl<I> IterBridge<I> {
    fn source(&mut self) -> Arc<Source<I>> {
        let iter = &mut self.iter;
        self.source
            .get_or_insert_with(|| {
                Arc::new(Source {
                    iter: Mutex::new(iter.take().expect("an unstarted bridge has its iterator")),
                    done: AtomicBool::new(false),
                    holder: AtomicUsize::new(0),
                })
            })
            .clone()
    }
}

units_iterator!(impl[I: Iterator<Item: Send> + Send] IterBridge<I> => I::Item, where [],
    units: |it| it.len);

impl<I> Pieces for IterBridge<I>
where
    I: Iterator + Send,
    I::Item: Send,
{
    type Item = I::Item;
    fn split_at(mut self, index: usize) -> (Self, Self) {
        let source = self.source();
        let index = index.min(self.len);
        let left = IterBridge {
            iter: None,
            source: Some(source.clone()),
            len: index,
        };
        let right = IterBridge {
            iter: None,
            source: Some(source),
            len: self.len - index,
        };
        (left, right)
    }
    fn fold_with<F: Folder<I::Item>>(mut self, folder: F) -> F {
        folder.consume_iter(BridgeSeq {
            source: self.source(),
            left: self.len,
        })
    }
    fn stopped(&self) -> bool {
        self.source.as_ref().is_some_and(|s| {
            s.done.load(Ordering::Relaxed) || s.holder.load(Ordering::Relaxed) == me()
        })
    }
}

/// The sequential iterator of an [`IterBridge`] piece: pulls at most its units' worth.
struct BridgeSeq<I> {
    source: Arc<Source<I>>,
    left: usize,
}

impl<I: Iterator> Iterator for BridgeSeq<I> {
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        self.source.pull()
    }
}

/// `par_bridge()` for every sequential iterator that can move between threads.
///
/// # Examples
/// ```
/// use std::sync::mpsc::channel;
/// use throttle::prelude::*;
/// let (tx, rx) = channel();
/// std::thread::spawn(move || for i in 0..100u32 { tx.send(i).unwrap(); });
/// let mut got: Vec<u32> = rx.into_iter().par_bridge().map(|x| x * 2).collect();
/// got.sort();
/// assert_eq!(got, (0..100).map(|x| x * 2).collect::<Vec<_>>());
/// ```
pub trait ParallelBridge: Sized {
    /// Turns the iterator into a parallel iterator (items in no particular order).
    fn par_bridge(self) -> IterBridge<Self>;
}

impl<I> ParallelBridge for I
where
    I: Iterator + Send,
    I::Item: Send,
{
    fn par_bridge(self) -> IterBridge<Self> {
        IterBridge {
            iter: Some(self),
            source: None,
            len: usize::MAX,
        }
    }
}
