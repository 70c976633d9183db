//! Loom models of the real fork, steal and wait paths: `join_in` pushing on the real
//! deque seam, `Participant::wait_until` and `wait_for_scope` (spin, release the slot,
//! re-check, sleep on the `JobLatch`, be woken by a spawn, queue for a slot again), a thief's
//! `find_work`/`execute_found`, and the real worker loop `worker_main` with its search and idle sleep. Only time is abstracted: under
//! loom every spin is one round (`sync::spin_over`). The deque is the real one (`deque.rs`,
//! a ring of 4 slots under loom), and the asymmetric fence takes its symmetric form.
//!
//! `RUSTFLAGS="--cfg loom" cargo test -p throttle --release --lib loom_models`.

use crate::job::HeapJob;
use crate::join::join_in;
use crate::latch::JobLatch;
use crate::registry::Registry;
use crate::scope::Scope;
use crate::sleep::Parker;
use crate::sync::{Arc, AtomicBool, AtomicUsize, Ordering};
use crate::worker::threads::worker_main;
use crate::worker::Participant;
use loom::thread;

/// Explores every interleaving with up to three preemptions (loom's advice for models of this
/// size; unbounded exploration of the worker loop does not finish in CI time).
fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(f);
}

/// A registry of two workers, with the owner ends of their deques.
fn two_workers() -> (Arc<Registry>, crate::deque::Worker, crate::deque::Worker) {
    let (registry, mut deques) = Registry::new(2, false);
    let d1 = deques.pop().expect("two deques");
    let d0 = deques.pop().expect("two deques");
    (Arc::new(registry), d0, d1)
}

/// A fork's second half may be stolen while its owner runs the first half. Whether the owner
/// takes it back, finds it running, or sleeps on its latch before the thief sets it, the owner
/// returns both results, and every slot is given back.
#[test]
fn a_stolen_fork_is_waited_for_and_its_result_seen() {
    model(|| {
        let (registry, d0, d1) = two_workers();
        let r = registry.clone();
        let thief = thread::spawn(move || {
            let me = Participant::new(
                &r,
                Some(1),
                Arc::new(Parker::for_current_thread()),
                Some(d1),
            );
            let _current = me.enter();
            assert!(r.sleep.try_activate());
            if let Some((job, taken)) = me.find_work() {
                me.execute_found(job, taken);
            }
            r.release_slot();
        });
        let me = Participant::new(
            &registry,
            Some(0),
            Arc::new(Parker::for_current_thread()),
            Some(d0),
        );
        let current = me.enter();
        assert!(registry.sleep.try_activate());
        let (a, b) = join_in(&me, |_| 1, |_| 2);
        assert_eq!((a, b), (1, 2));
        registry.release_slot();
        drop(current);
        thief.join().unwrap();
        assert_eq!(registry.sleep.load().active(), 0);
    });
}

/// No hidden work and no lost wake-up with the real worker loop: the first half of a join
/// waits until the second half has run, which only the other worker can do (it may be
/// searching, going to sleep, or asleep when the fork is pushed). If the push could be missed
/// by a worker on its way to sleep, this model would spin forever and loom would fail it.
#[test]
fn a_pushed_fork_reaches_a_sleeping_worker() {
    model(|| {
        let (registry, d0, d1) = two_workers();
        let r = registry.clone();
        let worker = thread::spawn(move || worker_main(r, 1, d1, None));
        let me = Participant::new(
            &registry,
            Some(0),
            Arc::new(Parker::for_current_thread()),
            Some(d0),
        );
        let current = me.enter();
        assert!(registry.sleep.try_activate());
        let b_ran = AtomicBool::new(false);
        join_in(
            &me,
            |_| {
                while !b_ran.load(Ordering::SeqCst) {
                    thread::yield_now();
                }
            },
            |_| b_ran.store(true, Ordering::SeqCst),
        );
        registry.release_slot();
        drop(current);
        registry.terminate();
        worker.join().unwrap();
    });
}

/// Isolated helping with the real wait path: worker 0's fork is stolen by worker 1 (the real
/// worker loop), which inside it forks `set` and then waits until `set` has run. Only worker 0
/// can run it, by helping with its stolen fork's descendants, and it may be spinning, going to
/// sleep, or asleep (registered with its thief) when `set` is pushed. A wake-up lost between
/// the thief's push and the owner's sleep would leave both spinning or parked forever, which
/// loom reports.
#[test]
fn a_waiting_owner_helps_its_thief_with_descendants() {
    waiting_owner_model(false);
}

/// The same, while the controller asks the fork owners for their counts
/// (`Registry::request_flush`): the request shares the word that the owner's push reads for
/// its fork waiters, and answering it (clearing the bit, publishing the counts) must neither
/// hide a waiter from the push nor wake one that is not there.
#[test]
fn a_flush_request_beside_a_fork_waiter_loses_no_wake_up() {
    waiting_owner_model(true);
}

fn waiting_owner_model(flush_requests: bool) {
    model(move || {
        let (registry, d0, d1) = two_workers();
        let r = registry.clone();
        let worker = thread::spawn(move || worker_main(r, 1, d1, None));
        let asker = flush_requests.then(|| {
            let r = registry.clone();
            thread::spawn(move || r.request_flush())
        });
        let me = Participant::new(
            &registry,
            Some(0),
            Arc::new(Parker::for_current_thread()),
            Some(d0),
        );
        let current = me.enter();
        assert!(registry.sleep.try_activate());
        let started = AtomicBool::new(false);
        join_in(
            &me,
            |_| {
                // Let worker 1 take the second half, so that we wait for it.
                while !started.load(Ordering::SeqCst) {
                    thread::yield_now();
                }
            },
            |q| {
                started.store(true, Ordering::SeqCst);
                let set = AtomicBool::new(false);
                join_in(
                    q,
                    |_| {
                        while !set.load(Ordering::SeqCst) {
                            thread::yield_now();
                        }
                    },
                    |_| set.store(true, Ordering::SeqCst),
                );
            },
        );
        registry.release_slot();
        drop(current);
        registry.terminate();
        worker.join().unwrap();
        if let Some(asker) = asker {
            asker.join().unwrap();
        }
    });
}

/// Isolated helping: a thread waiting for its stolen fork runs none of a stranger's work.
/// Worker 0 queues an unrelated job (as a spawn from elsewhere is queued), then forks; worker 1
/// (the real worker loop) takes the fork's second half, and may take the stranger's job before
/// or after it. Worker 0's wait may spin, look for help, sleep on its latch or be woken while
/// the stranger's job is queued, and must never run it (rayon's waiter would: rayon#592's
/// deadlock). The job then runs on worker 1, and worker 0 sees it done.
#[test]
fn a_waiting_owner_runs_no_strangers_job() {
    model(|| {
        let (registry, d0, d1) = two_workers();
        let r = registry.clone();
        let worker = thread::spawn(move || worker_main(r, 1, d1, None));
        let me = Participant::new(
            &registry,
            Some(0),
            Arc::new(Parker::for_current_thread()),
            Some(d0),
        );
        let current = me.enter();
        assert!(registry.sleep.try_activate());
        // 0: not run yet; 1: run by another participant; 2: run by worker 0.
        let ran = AtomicUsize::new(0);
        let (at, owner) = (
            SendPtr(&ran as *const AtomicUsize),
            SendPtr(&me as *const _),
        );
        // SAFETY: the job runs once, by whoever takes it out of the injector, and this frame
        // (which owns `ran` and `me`) outlives it: we wait below until it ran.
        let job = unsafe {
            HeapJob::into_job_ref(move || {
                let on_owner =
                    Participant::with_current(|q| q.is_some_and(|q| std::ptr::eq(q, owner.get())));
                // SAFETY: `ran` outlives the job (see above).
                let ran = &*at.get();
                ran.store(if on_owner { 2 } else { 1 }, Ordering::SeqCst);
            })
        };
        registry.publish(&registry.injector, job);
        let started = AtomicBool::new(false);
        join_in(
            &me,
            |_| {
                // Let worker 1 take the second half, so that we wait for it.
                while !started.load(Ordering::SeqCst) {
                    thread::yield_now();
                }
            },
            |_| started.store(true, Ordering::SeqCst),
        );
        assert_ne!(
            ran.load(Ordering::SeqCst),
            2,
            "the waiter ran a stranger's job"
        );
        registry.release_slot();
        while ran.load(Ordering::SeqCst) == 0 {
            thread::yield_now();
        }
        assert_eq!(ran.load(Ordering::SeqCst), 1);
        drop(current);
        registry.terminate();
        worker.join().unwrap();
    });
}

/// A scope's owner is woken for its scope's spawns (sleep/README.md, "Waiting for a scope"): a
/// pool's only worker waits for a scope whose body runs on another thread (an outside thread
/// holding the body's count, as a body that hands its `&Scope` to a thread of its own does),
/// and only that worker may run the spawn the body makes. The worker may spin, give back its
/// slot, register on the scope's latch, or sleep there when the spawn is published; a spawn
/// that did not wake a sleeping owner (as before 2026-11-28: spawns unparked nobody, and the
/// owner's look before sleeping searched for the latch's address, not the scope's) would leave
/// it parked forever, which loom reports.
#[test]
fn a_scope_owner_asleep_is_woken_for_its_spawn() {
    model(|| {
        let (home, mut deques) = Registry::new(1, false);
        let home = Arc::new(home);
        let d0 = deques.pop().expect("one deque");
        let scope: Scope<'static> = Scope::new(&home);
        let ran = AtomicBool::new(false);
        let (sc, h) = (SendPtr(&scope as *const Scope<'static>), home.clone());
        let worker = thread::spawn(move || {
            // SAFETY: the scope outlives this thread (joined below before the scope drops).
            let scope = unsafe { &*sc.get() };
            let parker = Arc::new(Parker::for_current_thread());
            let me = Participant::new(&h, Some(0), parker.clone(), Some(d0));
            let _current = me.enter();
            let _home = me.enter_home();
            h.register_worker(0, &parker);
            assert!(h.sleep.try_activate());
            scope.wait(&me);
            h.release_slot();
        });
        let r = SendPtr(&ran as *const AtomicBool);
        scope.spawn(move |_| {
            // SAFETY: `ran` outlives the scope's spawns (the worker runs this before its
            // wait returns, and we join the worker first).
            unsafe { &*r.get() }.store(true, Ordering::Relaxed);
        });
        scope.body_done();
        worker.join().unwrap();
        assert!(ran.load(Ordering::Relaxed));
        assert_eq!(home.sleep.load().active(), 0);
    });
}

/// Away workers come home (sleep/README.md, "Away workers"): pool H's only worker waits, as a
/// caller in pool B (as `Pool::in_pool` makes it, holding no H slot), for a latch that only a
/// job queued in H sets, and nobody but that worker may run it. H's publisher may queue the job
/// while the worker spins in B, registers as away, or sleeps in B's idle list; a lost wake-up
/// would leave the worker parked forever, which loom reports.
#[test]
fn an_away_worker_comes_home_for_work_only_it_can_run() {
    only_runner_model(|_home, _me, latch| {
        let away = Registry::new(1, false).0;
        let caller = Participant::new(&away, None, Arc::new(Parker::for_current_thread()), None);
        assert!(away.sleep.try_activate());
        let in_b = caller.enter();
        caller.wait_until(latch);
        away.release_slot();
        drop(in_b);
    });
}

/// The shape of the model above: a pool's only worker (registered, at home) calls `wait`
/// with its registry, its participant and a latch that only a job queued in its pool from
/// another thread sets, so the worker is that job's only runner. Checks that the latch was set
/// and that every slot of the pool was given back.
fn only_runner_model(wait: fn(&Registry, &Participant, &JobLatch)) {
    model(move || {
        let (home, mut deques) = Registry::new(1, false);
        let home = Arc::new(home);
        let d0 = deques.pop().expect("one deque");
        let latch = JobLatch::new();
        let l = SendPtr(&latch as *const JobLatch);
        let h = home.clone();
        let worker = thread::spawn(move || {
            // SAFETY: the latch outlives this thread (joined below before the latch drops).
            let l = unsafe { &*l.get() };
            let parker = Arc::new(Parker::for_current_thread());
            let me = Participant::new(&h, Some(0), parker.clone(), Some(d0));
            let _current = me.enter();
            let _home = me.enter_home();
            h.register_worker(0, &parker);
            wait(&h, &me, l);
        });
        let set = SendPtr(&latch as *const JobLatch);
        // SAFETY: the latch outlives the job (the worker runs it before its wait returns, and
        // we join the worker first), and the job is run exactly once, by whoever takes it out
        // of the injector; the latch is set once, here.
        let job = unsafe { HeapJob::into_job_ref(move || JobLatch::set(set.get())) };
        home.publish(&home.injector, job);
        worker.join().unwrap();
        assert!(latch.probe());
        assert_eq!(home.sleep.load().active(), 0);
    });
}

/// A pointer shared with a loom thread or a job, to something the model keeps alive until
/// both are done (a latch, a counter, a participant).
struct SendPtr<T>(*const T);

impl<T> Clone for SendPtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for SendPtr<T> {}

// SAFETY: the models share only things made to be used from several threads (latches, atomics)
// or compared by address (participants), and keep them alive until every user is done.
unsafe impl<T> Send for SendPtr<T> {}

impl<T> SendPtr<T> {
    /// The pointer (a method, so that closures capture the whole `Send` wrapper).
    fn get(self) -> *const T {
        self.0
    }
}

/// Broadcast with the real worker loop and the real `broadcast_in`: worker 0 (this thread,
/// holding a slot) broadcasts while worker 1 may be starting, searching, going to sleep or
/// asleep. With a limit of 2 the post wakes worker 1 with a free slot; with a limit of 1 the
/// only slot is ours, so the post must move worker 1 from the idle list to the limit queue, and
/// our wait must give the slot back to it. A lost wake-up or a slot counted for a sleeper
/// would leave this thread waiting forever, which loom reports.
fn broadcast_model(limit: usize) {
    model(move || {
        let (registry, d0, d1) = two_workers();
        registry.sleep.set_limit(limit);
        let r = registry.clone();
        let worker = thread::spawn(move || worker_main(r, 1, d1, None));
        let parker = Arc::new(Parker::for_current_thread());
        let me = Participant::new(&registry, Some(0), parker.clone(), Some(d0));
        let current = me.enter();
        let home = me.enter_home();
        registry.register_worker(0, &parker);
        // Worker 1 may hold the only slot (it starts searching): queue for it as callers do.
        registry.wait_for_slot(&parker);
        let out = crate::broadcast::broadcast_in(&me, &|ctx: crate::BroadcastContext<'_>| {
            (ctx.index(), crate::current_thread_index())
        });
        assert_eq!(out, [(0, Some(0)), (1, Some(1))]);
        registry.release_slot();
        drop(home);
        drop(current);
        // Not checked here: the slot counts after shutdown (a worker woken with a slot just as
        // the pool stops exits without giving it back; nothing runs after that).
        registry.terminate();
        worker.join().unwrap();
    });
}

#[test]
fn a_broadcast_reaches_a_worker_with_a_free_slot() {
    broadcast_model(2);
}

#[test]
fn a_broadcast_at_limit_one_hands_the_slot_over() {
    broadcast_model(1);
}

/// The trace ring (`trace/ring.rs`, protocol in `trace/README.md`): a writer appending while the
/// collector copies a session never yields a torn or half-written event or a gap, and a second
/// session started while the writer still runs sees only whole events too.
#[test]
fn ring_events_are_never_torn() {
    use crate::trace::ring::Ring;
    model(|| {
        let ring = Arc::new(Ring::new(2));
        ring.allocate();
        let mark = ring.begin();
        let w = ring.clone();
        let writer = thread::spawn(move || {
            for i in 1..=3u64 {
                w.push(i << 8, i * 7);
            }
        });
        let (events, dropped) = ring.collect(mark);
        for (k, e) in events.iter().enumerate() {
            assert_eq!(e[0], (k as u64 + 1) << 8, "events in order, none missing");
            assert_eq!(e[1], (k as u64 + 1) * 7, "a torn event");
        }
        assert!(events.len() as u64 + dropped <= 3);
        let second = ring.begin();
        let (events, _) = ring.collect(second);
        for e in &events {
            assert_eq!(e[1], (e[0] >> 8) * 7, "a torn event in the second session");
        }
        writer.join().unwrap();
        // Every event was either written in some session or counted as dropped.
        let (written, dropped) = ring.collect(mark);
        let third = ring.begin();
        assert!(ring.collect(third).0.is_empty());
        assert!(written.len() as u64 + dropped >= 2);
    });
}
