//! `Context`: fork-join with the pool passed along instead of looked up.
//!
//! The free [`join`](crate::join) finds the calling thread's pool in a thread-local on every
//! fork. On recursions whose leaves cost a nanosecond or two that lookup is a visible share of
//! the time, so, as chili and spice do, a [`Context`] carries the thread's membership into the
//! closures: `cx.join(|cx| .., |cx| ..)` costs a countdown on most forks and nothing else.

use crate::join::join_in;
use crate::worker::Participant;

/// The calling thread's membership in a pool, handed to fork-join closures by
/// [`Pool::install_cx`](crate::Pool::install_cx) and [`Context::join`].
///
/// A `Context` is tied to its thread (it is neither `Send` nor `Sync`): each half of a join gets
/// the context of the thread that runs it.
///
/// # Examples
/// ```
/// use throttle::Context;
///
/// fn fib(cx: &Context, n: u64) -> u64 {
///     if n < 2 {
///         return n;
///     }
///     let (a, b) = cx.join(|cx| fib(cx, n - 1), |cx| fib(cx, n - 2));
///     a + b
/// }
///
/// let pool = throttle::Pool::new(2).unwrap();
/// assert_eq!(pool.install_cx(|cx| fib(cx, 20)), 6765);
/// ```
#[repr(transparent)]
pub struct Context {
    /// `&Context` is `&Participant` (transparent): a fork reads the participant through the
    /// one pointer the closures pass along. Not `Send`/`Sync` (the participant's cells).
    p: Participant,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context").finish_non_exhaustive()
    }
}

impl Context {
    #[inline(always)]
    pub(crate) fn of(p: &Participant) -> &Context {
        // SAFETY: `Context` is a `repr(transparent)` wrapper of `Participant`, so the two
        // references have the same layout and the lifetime is carried over unchanged.
        unsafe { &*(p as *const Participant as *const Context) }
    }

    /// Runs `a` and `b`, potentially in parallel, like [`join`](crate::join); each closure gets
    /// the context of the thread that runs it.
    ///
    /// # Panics
    /// Resumes a panic of `a` or `b` (after both are done or `b` was dropped unrun).
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::new(2).unwrap();
    /// let (a, b) = pool.install_cx(|cx| cx.join(|_| 1 + 1, |_| "two"));
    /// assert_eq!((a, b), (2, "two"));
    /// ```
    // Not inlined: the join's body is big, and inlined into a recursive caller (fib) it made
    // every call, the leaves' too, save all the registers the join needs before the leaf test.
    // Kept out of line, each instance of the join inlines the caller's small closures instead,
    // as the free `join` does. `throttle-bench --instructions`: fib 107.0 → 89.6 instructions
    // per join, tree_sum 83.5 → 86.5; fib(32) at 1 thread 22.6–23.5 → 17.6–18.2 ms in three
    // alternated runs of each build (`--bench fib --reps 7`), tree_sum unchanged (41.0–41.7
    // → 41.0–42.2 ms).
    #[inline(never)]
    pub fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce(&Context) -> RA + Send,
        B: FnOnce(&Context) -> RB + Send,
        RA: Send,
        RB: Send,
    {
        join_in(&self.p, |p| a(Context::of(p)), |p| b(Context::of(p)))
    }
}
