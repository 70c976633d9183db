//! The main loops of a pool's own threads: a worker's (search, run, sleep, for the pool's
//! whole life) and a spare's (search and run while it holds a run slot, then idle until it is
//! reused or times out; spare.rs).

use super::Participant;
use crate::deque::Worker;
use crate::placement::Placement;
use crate::registry::Registry;
use crate::sleep::{Parker, Wake};
use crate::sync::Arc;

/// The main loop of worker `index`.
pub(crate) fn worker_main(
    registry: Arc<Registry>,
    index: usize,
    deque: Worker,
    placement: Option<Placement>,
) {
    registry.holders.record(index);
    let home = placement.as_ref().and_then(Placement::home);
    let parker = Arc::new(Parker::with_home(home));
    let me = Participant::new(&registry, Some(index), parker.clone(), Some(deque));
    let me = me.with_placement(placement);
    let _current = me.enter();
    let _home = me.enter_home();
    // Before the first search: mail posted from here on wakes this worker (`Registry::post`).
    registry.register_worker(index, &parker);
    let sleep = &registry.sleep;
    let mut searching = sleep.try_activate_searching();
    loop {
        if !searching {
            match me.sleep_idle_without_slot() {
                Wake::Searching => searching = true,
                Wake::Exit => return exit_check(&registry, index),
            }
        }
        match me.search() {
            Some((job, taken)) => {
                let before = sleep.transition_from_searching();
                if before.searching() == 1 && registry.has_work() {
                    // We were the last searcher and more work waits: pass the baton.
                    registry.publish_wake();
                }
                if sleep.over_limit() {
                    // The limit fell while we searched: wait for a slot with the job in hand.
                    me.pause_for_limit();
                }
                me.execute_found(job, taken);
                if sleep.over_limit() && {
                    me.give_back_number();
                    sleep.yield_if_over_limit()
                } {
                    searching = false;
                    continue;
                }
                sleep.transition_to_searching();
            }
            None => match me.sleep_idle() {
                Wake::Searching => {}
                Wake::Exit => return exit_check(&registry, index),
            },
        }
    }
}

/// A worker leaves only when its pool is dropped, and a broadcast borrows the pool until every
/// worker ran its share: no mail can be left behind.
fn exit_check(registry: &Registry, index: usize) {
    debug_assert!(!registry.has_mail(index), "a worker exits with mail");
}

/// The main loop of a spare: while it can take a slot, search and run like a worker (counted
/// as searching while it looks, so publishers know someone will find their work); then idle.
#[cfg(not(loom))]
pub(crate) fn spare_main(registry: Arc<Registry>) {
    let parker = Arc::new(Parker::for_current_thread());
    let me = Participant::guest(&registry, parker.clone());
    let _current = me.enter();
    let _spare = me.enter_spare();
    let sleep = &registry.sleep;
    'life: loop {
        while sleep.try_activate_searching() {
            while let Some((job, taken)) = me.find_work() {
                sleep.transition_from_searching();
                me.execute_found(job, taken);
                if sleep.over_limit() && {
                    me.give_back_number();
                    sleep.yield_if_over_limit()
                } {
                    // The limit fell: our slot went to a thread with work in hand.
                    if registry.spares.idle_wait(&parker) {
                        continue 'life;
                    }
                    break 'life;
                }
                sleep.transition_to_searching();
            }
            me.give_back_number();
            sleep.release_searching();
            // Pairs with a publisher's fence: it saw us searching and woke nobody, or we see
            // its work now.
            crate::barrier::heavy();
            if !registry.has_work() {
                break;
            }
        }
        if !registry.spares.idle_wait(&parker) {
            break;
        }
    }
}
