//! `join`: run two closures, potentially in parallel, and return both results.

use crate::job::StackJob;
use crate::worker::Participant;
use std::panic::{self, AssertUnwindSafe};

/// Jobs run only on threads that take part in a pool (workers, or callers inside a call).
const ON_PARTICIPANT: &str = "pool jobs run on a participant thread";

/// Forks `b`, runs `a`, then runs `b` here unless another thread took it meanwhile.
///
/// `a` always runs on this thread (so it needs no `Send`); `b` may run elsewhere. Each gets the
/// participant it runs on. Most forks run as plain calls (see `Participant::fork_privately`);
/// the rest are shareable.
#[inline(always)]
pub(crate) fn join_in<A, B, RA, RB>(p: &Participant, a: A, b: B) -> (RA, RB)
where
    A: FnOnce(&Participant) -> RA,
    B: FnOnce(&Participant) -> RB + Send,
    RB: Send,
{
    if p.fork_privately() {
        let ra = a(p);
        return (ra, b(p));
    }
    join_shareable(p, a, b)
}

/// Forks `b` as a shareable fork: it sits on this thread's deque, where any idle thread can
/// steal it, until `a` is done.
///
/// If `a` panics, the panic is caught, `b` is taken back (dropped unrun) or, if another thread
/// runs it, waited for, and only then is `a`'s panic resumed: nothing runs on this thread while
/// a panic unwinds, and `b` never outlives the stack frame it borrows from.
///
/// Kept out of line: it runs for one fork in 64 or fewer, and inlined into every recursive frame
/// it would bloat the frame of the plain-call path that runs for all the others.
#[inline(never)]
pub(crate) fn join_shareable<A, B, RA, RB>(p: &Participant, a: A, b: B) -> (RA, RB)
where
    A: FnOnce(&Participant) -> RA,
    B: FnOnce(&Participant) -> RB + Send,
    RB: Send,
{
    // Wherever `b` runs, it gets that thread's participant (a thread-local lookup, paid only by
    // shareable forks).
    let job_b = StackJob::new(move || Participant::with_current(|q| b(q.expect(ON_PARTICIPANT))));
    let job_ref = job_b.as_job_ref();
    // SAFETY: `job_b` lives in this frame, and we return (or unwind) only after `take_fork`
    // returned true or its latch is set (`wait_until` below): nothing between here and there
    // can unwind, because `a` runs under `catch_unwind`.
    if !unsafe { p.push_fork(job_ref) } {
        // The deque is full (thousands of forks pending): a plain call.
        let ra = a(p);
        // SAFETY: the job was never published.
        return (ra, unsafe { job_b.run_inline() });
    }
    let ra = panic::catch_unwind(AssertUnwindSafe(|| a(p)));
    if p.take_fork(job_ref) {
        let ra = match ra {
            Ok(ra) => ra,
            // `b` never ran and never will: it is dropped with `job_b`.
            Err(payload) => panic::resume_unwind(payload),
        };
        // SAFETY: the fork never left this thread, or we just took it back.
        let rb = unsafe { job_b.run_inline() };
        return (ra, rb);
    }
    // Another thread runs (or ran) `b`: wait for it, helping only with its descendants.
    p.wait_for_fork(&job_b.latch);
    let rb = job_b.into_thread_result();
    match (ra, rb) {
        (Ok(ra), Ok(rb)) => (ra, rb),
        (Err(payload), _) | (Ok(_), Err(payload)) => panic::resume_unwind(payload),
    }
}
