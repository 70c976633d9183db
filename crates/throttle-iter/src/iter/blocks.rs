//! `by_exponential_blocks` and `by_uniform_blocks`: the items run in blocks one after another,
//! each block a parallel run of its own, until the consumer is full. A short-circuiting consumer
//! (`find_first`, `any`, ...) then never starts the blocks after the one where it stopped.

use super::plumbing::{
    bridge_producer_consumer, Consumer, Folder, Producer, ProducerCallback, Reducer,
    UnindexedConsumer,
};
use super::{IndexedParallelIterator, ParallelIterator};

/// Runs the items in blocks that double in size; see
/// [`IndexedParallelIterator::by_exponential_blocks`].
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let hit = (0..1_000_000u32).into_par_iter().by_exponential_blocks().find_first(|&x| x > 10);
/// assert_eq!(hit, Some(11));
/// ```
#[derive(Debug, Clone)]
#[must_use = "iterator adaptors are lazy and do nothing unless consumed"]
pub struct ExponentialBlocks<I> {
    base: I,
}

impl<I> ExponentialBlocks<I> {
    pub(super) fn new(base: I) -> Self {
        ExponentialBlocks { base }
    }
}

impl<I: IndexedParallelIterator> ParallelIterator for ExponentialBlocks<I> {
    type Item = I::Item;

    fn drive_unindexed<C: UnindexedConsumer<I::Item>>(self, consumer: C) -> C::Result {
        let first = throttle_core::current_num_threads();
        let sizes = std::iter::successors(Some(first), |&n| Some(n.saturating_mul(2)));
        run_blocks(self.base, consumer, sizes)
    }

    fn opt_len(&self) -> Option<usize> {
        Some(self.base.len())
    }
}

/// Runs the items in blocks of one size; see [`IndexedParallelIterator::by_uniform_blocks`].
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let v: Vec<u32> = (0..10u32).into_par_iter().by_uniform_blocks(3).collect();
/// assert_eq!(v, (0..10).collect::<Vec<_>>());
/// ```
#[derive(Debug, Clone)]
#[must_use = "iterator adaptors are lazy and do nothing unless consumed"]
pub struct UniformBlocks<I> {
    base: I,
    block_size: usize,
}

impl<I> UniformBlocks<I> {
    pub(super) fn new(base: I, block_size: usize) -> Self {
        UniformBlocks { base, block_size }
    }
}

impl<I: IndexedParallelIterator> ParallelIterator for UniformBlocks<I> {
    type Item = I::Item;

    fn drive_unindexed<C: UnindexedConsumer<I::Item>>(self, consumer: C) -> C::Result {
        let sizes = std::iter::repeat(self.block_size);
        run_blocks(self.base, consumer, sizes)
    }

    fn opt_len(&self) -> Option<usize> {
        Some(self.base.len())
    }
}

/// Runs `base` into `consumer` block by block, block `k` holding `sizes`' `k`-th number of
/// items (the last what is left).
fn run_blocks<I, C, S>(base: I, consumer: C, sizes: S) -> C::Result
where
    I: IndexedParallelIterator,
    C: UnindexedConsumer<I::Item>,
    S: Iterator<Item = usize>,
{
    /// Cuts the base's producer into blocks and runs them in turn.
    struct Callback<C, S> {
        consumer: C,
        sizes: S,
        len: usize,
    }

    impl<T, C, S> ProducerCallback<T> for Callback<C, S>
    where
        C: Consumer<T>,
        S: Iterator<Item = usize>,
    {
        type Output = C::Result;

        fn callback<P: Producer<Item = T>>(self, producer: P) -> C::Result {
            let Callback {
                mut consumer,
                mut sizes,
                mut len,
            } = self;
            let mut producer = Some(producer);
            // The blocks' results so far, and the reducer that joins them to the next.
            let mut done: Option<(C::Result, C::Reducer)> = None;
            loop {
                let size = sizes.next().unwrap_or(len).max(1).min(len);
                let whole = producer.take().expect("a producer per block");
                if len == 0 || consumer.full() {
                    let rest = consumer.into_folder().complete();
                    return match done {
                        Some((acc, reducer)) => reducer.reduce(acc, rest),
                        None => rest,
                    };
                }
                let (block, tail) = whole.split_at(size);
                let (block_consumer, tail_consumer, reducer) = consumer.split_at(size);
                let r = bridge_producer_consumer(size, block, block_consumer);
                done = Some(match done {
                    None => (r, reducer),
                    Some((acc, previous)) => (previous.reduce(acc, r), reducer),
                });
                producer = Some(tail);
                consumer = tail_consumer;
                len -= size;
            }
        }
    }

    let len = base.len();
    base.with_producer(Callback {
        consumer,
        sizes,
        len,
    })
}
