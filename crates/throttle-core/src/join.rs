//! `join`: run two closures, potentially in parallel, and return both results.

use crate::job::{StackJob, Task};
use crate::worker::Participant;
use std::panic::{self, AssertUnwindSafe};

/// Jobs run only on threads that take part in a pool (workers, or callers inside a call).
const ON_PARTICIPANT: &str = "pool jobs run on a participant thread";

/// A fork's second half as its job holds it: run by a thief, it looks up the thief's
/// participant; run by its owner, it gets the owner's directly ([`StackJob::take_task`]).
struct ForkHalf<B>(B);

impl<B, RB> Task for ForkHalf<B>
where
    B: FnOnce(&Participant) -> RB + Send,
    RB: Send,
{
    type Output = RB;

    fn run(self) -> RB {
        Participant::with_current(|q| (self.0)(q.expect(ON_PARTICIPANT)))
    }
}

/// Forks `b`, runs `a`, then runs `b` here unless another thread took it meanwhile: `b` sits on
/// this thread's deque, where any idle thread can steal it, until `a` is done.
///
/// `a` always runs on this thread (so it needs no `Send`); `b` may run elsewhere. Each gets the
/// participant it runs on.
///
/// If `a` panics, the panic is caught, `b` is taken back (dropped unrun) or, if another thread
/// runs it, waited for, and only then is `a`'s panic resumed: nothing runs on this thread while
/// a panic unwinds, and `b` never outlives the stack frame it borrows from.
///
/// Inlined: it is every fork's path, and its fast part (a push, a load, a pop) is a few
/// instructions once the closures are known; the rare parts (a wake-up, a wait) are out of line.
#[inline(always)]
pub(crate) fn join_in<A, B, RA, RB>(p: &Participant, a: A, b: B) -> (RA, RB)
where
    A: FnOnce(&Participant) -> RA,
    B: FnOnce(&Participant) -> RB + Send,
    RB: Send,
{
    let job_b = StackJob::new(ForkHalf(b));
    let job_ref = job_b.as_job_ref();
    // SAFETY: `job_b` lives in this frame, and we return (or unwind) only after `take_fork`
    // returned true or its latch is set (`wait_for_fork` below): nothing between here and there
    // can unwind, because `a` runs under `catch_unwind`.
    let Some(pushed) = (unsafe { p.push_fork(job_ref) }) else {
        // The deque is full (a thousand forks pending): a plain call.
        let ra = a(p);
        // SAFETY: the job was never published.
        let b = unsafe { job_b.take_task() };
        return (ra, (b.0)(p));
    };
    let ra = panic::catch_unwind(AssertUnwindSafe(|| a(p)));
    if p.take_fork(pushed, job_ref) {
        let ra = match ra {
            Ok(ra) => ra,
            // `b` never ran and never will: it is dropped with `job_b`.
            Err(payload) => panic::resume_unwind(payload),
        };
        // SAFETY: we just took the fork back: nobody else holds it.
        let b = unsafe { job_b.take_task() };
        // Nothing left to drop: the task is out, no result was stored, and no parker was
        // registered (we never slept on the latch). Skipping the drop glue saves an out-of-line
        // call per fork.
        std::mem::forget(job_b);
        return (ra, (b.0)(p));
    }
    // Another thread runs (or ran) `b`: wait for it, helping only with its descendants.
    p.wait_for_fork(&job_b.latch);
    let rb = job_b.into_thread_result();
    match (ra, rb) {
        (Ok(ra), Ok(rb)) => (ra, rb),
        (Err(payload), _) | (Ok(_), Err(payload)) => panic::resume_unwind(payload),
    }
}
