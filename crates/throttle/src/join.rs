//! `join`: run two closures, potentially in parallel, and return both results.

use crate::job::StackJob;
use crate::worker::{Frame, Participant};

/// Forks `b`, runs `a`, then runs `b` here unless a thief took it meanwhile.
///
/// `a` always runs on this thread (so it needs no `Send`); `b` may run elsewhere. Most forks run
/// as plain calls (see `Participant::fork_privately`); the rest are shareable.
#[inline(always)]
pub(crate) fn join_in<A, B, RA, RB>(p: &Participant, a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA,
    B: FnOnce() -> RB + Send,
    RB: Send,
{
    if p.fork_privately() {
        let ra = a();
        return (ra, b());
    }
    p.count_fork();
    join_shareable(p, a, b)
}

/// Forks `b` as a shareable private fork: it stays on this thread's frame stack, where a hungry
/// thread can have it shared, until `a` is done.
#[inline(always)]
pub(crate) fn join_shareable<A, B, RA, RB>(p: &Participant, a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA,
    B: FnOnce() -> RB + Send,
    RB: Send,
{
    let job_b = StackJob::new(b);
    let frame = Frame {
        job: job_b.as_job_ref(),
        latch: &job_b.latch,
    };
    let index = p.push_frame(frame);
    p.poll();
    // If `a` unwinds, the guard pops our fork and, if a thief holds it, waits for it: the thief
    // borrows this stack frame.
    let guard = UnwindGuard { p, index, frame };
    let ra = a();
    std::mem::forget(guard);
    if !p.pop_frame(index) || p.take_back(frame.job) {
        // Running `b` is a task boundary: honour a lowered limit first.
        p.poll();
        // SAFETY: the fork never left this thread, or we just took it back from the queue.
        let rb = unsafe { job_b.run_inline() };
        return (ra, rb);
    }
    // A thief runs `b`: wait for it, helping meanwhile.
    p.wait_until(&job_b.latch);
    (ra, job_b.into_result())
}

/// Cleans up a fork whose first half panicked.
struct UnwindGuard<'a> {
    p: &'a Participant,
    index: usize,
    frame: Frame,
}

impl Drop for UnwindGuard<'_> {
    #[cold]
    fn drop(&mut self) {
        if self.p.pop_frame(self.index) && !self.p.take_back(self.frame.job) {
            // SAFETY: the frame's latch lives in the `join_in` frame that is unwinding through
            // us, so it is still alive here.
            self.p.wait_until(unsafe { &*self.frame.latch });
            // The thief's result (or panic) is dropped with the job; `a`'s panic goes on.
        }
    }
}
