//! [`bridge_unindexed`](super::bridge_unindexed): runs an [`UnindexedProducer`], which splits
//! only where it chooses and cannot say how much it holds. Such a producer cannot be cut into
//! claimed pieces or blocks, so it runs as a fork tree: rayon's adaptive budget (about two
//! pieces per thread, refilled when a piece is stolen), and one more split whenever a thread of
//! the pool is hungry and the producer still splits.

use super::engine::thread_token;
use super::{Folder, Reducer, UnindexedConsumer, UnindexedProducer};
use crate::iter::runtime;

/// Runs `producer` into `consumer` on the current pool (or the global pool).
pub(crate) fn drive<P, C>(producer: P, consumer: C) -> C::Result
where
    P: UnindexedProducer,
    C: UnindexedConsumer<P::Item>,
{
    // The length is unknown, so the call site's memory (which counts cost per unit) is not
    // consulted; the site is dropped so that a nested run does not take it.
    let _ = runtime::take_site();
    runtime::in_pool(move || {
        let threads = throttle_core::current_num_threads();
        split(producer, consumer, threads, threads)
    })
}

fn split<P, C>(producer: P, consumer: C, splits: usize, refill: usize) -> C::Result
where
    P: UnindexedProducer,
    C: UnindexedConsumer<P::Item>,
{
    if consumer.full() {
        return consumer.into_folder().complete();
    }
    if splits == 0 && !runtime::poll_hungry() {
        return producer.fold_with(consumer.into_folder()).complete();
    }
    match producer.split() {
        (left, Some(right)) => {
            let splits = splits / 2;
            let reducer = consumer.to_reducer();
            let left_consumer = consumer.split_off_left();
            let forked_on = thread_token();
            let (a, b) = throttle_core::join(
                || split(left, left_consumer, splits, refill),
                move || {
                    // Stolen: the thief gets a fresh budget, as in rayon.
                    let splits = if thread_token() != forked_on {
                        refill.max(splits / 2)
                    } else {
                        splits
                    };
                    split(right, consumer, splits, refill)
                },
            );
            reducer.reduce(a, b)
        }
        (whole, None) => whole.fold_with(consumer.into_folder()).complete(),
    }
}
