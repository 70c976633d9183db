//! Jobs: type-erased pointers to work, on the stack (forks) or on the heap (spawns).

use crate::latch::JobLatch;
use std::any::Any;
use std::cell::UnsafeCell;
use std::mem::ManuallyDrop;
use std::panic::{self, AssertUnwindSafe};

/// A pointer to a job and the function that runs it. Two `JobRef`s are the same job when their
/// pointers are equal.
///
/// The pointer's lowest bit tags a *fork*: a [`StackJob`], whose [`JobLatch`] sits at its start
/// (`#[repr(C)]`), so a thief can record itself in the latch before it runs the job
/// ([`JobRef::fork_latch`]). Jobs are at least 8-byte aligned, so the bit is free.
#[derive(Clone, Copy, Debug)]
pub(crate) struct JobRef {
    pointer: *const (),
    execute_fn: unsafe fn(*const ()),
}

impl PartialEq for JobRef {
    fn eq(&self, other: &JobRef) -> bool {
        // The data pointer alone identifies a job: two live jobs never share an address.
        self.pointer == other.pointer
    }
}

impl Eq for JobRef {}

// SAFETY: a JobRef is a pointer to a job whose closure is `Send` ([1] `StackJob` requires
// `F: Send`, [2] `HeapJob` requires `F: Send`); whoever creates one promises (see `JobRef::new`)
// that the job stays alive until it has been executed or taken back, so moving the pointer to
// another thread is sound.
unsafe impl Send for JobRef {}

/// The tag bit of a fork's pointer (see [`JobRef`]).
const FORK_TAG: usize = 1;

impl JobRef {
    /// # Safety
    /// `data` must stay valid until the job is executed (exactly once) or taken back by its owner
    /// and never executed.
    pub(crate) unsafe fn new<T: Job>(data: *const T) -> JobRef {
        debug_assert_eq!(data as usize & FORK_TAG, 0, "jobs are aligned");
        JobRef {
            pointer: data.cast(),
            execute_fn: |p| {
                // SAFETY: `p` came from a `*const T` in `new` (untagged by `execute`), whose
                // caller promised validity.
                unsafe { T::execute(p.cast()) }
            },
        }
    }

    /// The untagged pointer to the job.
    fn untagged(self) -> *const () {
        // `wrapping_byte_sub` keeps the pointer's provenance (the job's allocation).
        self.pointer
            .wrapping_byte_sub(self.pointer as usize & FORK_TAG)
    }

    /// The latch at the start of a fork, if this is one.
    pub(crate) fn fork_latch(self) -> Option<*const JobLatch> {
        (self.pointer as usize & FORK_TAG != 0).then(|| self.untagged().cast())
    }

    /// The job's two words, for a deque slot.
    pub(crate) fn into_raw(self) -> (*mut (), *mut ()) {
        (self.pointer.cast_mut(), self.execute_fn as *mut ())
    }

    /// A job from the two words [`JobRef::into_raw`] gave. For the deque, which keeps the words
    /// in atomics; a pair read from a slot that was being overwritten is never executed (the
    /// steal's compare-exchange fails and the pair is dropped).
    pub(crate) fn from_raw(pointer: *mut (), execute: *mut ()) -> JobRef {
        JobRef {
            pointer,
            // SAFETY: a fn pointer round-trips through a data pointer of the same size on every
            // platform Rust supports; the pair is only executed if it came from `into_raw`
            // unchanged (see above).
            execute_fn: unsafe { std::mem::transmute::<*mut (), unsafe fn(*const ())>(execute) },
        }
    }

    /// Runs the job.
    ///
    /// # Safety
    /// The job must not have been executed or taken back before; see `JobRef::new`.
    pub(crate) unsafe fn execute(self) {
        // SAFETY: forwarded to the caller.
        unsafe { (self.execute_fn)(self.untagged()) }
    }
}

/// Something a `JobRef` can point at.
pub(crate) trait Job {
    /// # Safety
    /// `this` points at a live job that has not run yet.
    unsafe fn execute(this: *const Self);
}

/// The work a [`StackJob`] holds: any closure, or a type of the caller's that also offers a
/// cheaper way to run it where it was made (a fork's second half, run by its owner with the
/// owner's participant at hand instead of a thread-local lookup: `join.rs`).
pub(crate) trait Task: Send {
    /// What the work returns.
    type Output: Send;
    /// Runs the work on the thread that took it from a queue.
    fn run(self) -> Self::Output;
}

impl<F: FnOnce() -> R + Send, R: Send> Task for F {
    type Output = R;
    #[inline(always)]
    fn run(self) -> R {
        self()
    }
}

/// The outcome of a job run by another thread.
pub(crate) enum JobResult<R> {
    None,
    Ok(R),
    Panic(Box<dyn Any + Send>),
}

/// A fork's second half, living in the forking thread's stack frame.
///
/// `#[repr(C)]` with the latch first, so a pointer to the job is also a pointer to its latch.
#[repr(C)]
pub(crate) struct StackJob<T: Task> {
    pub(crate) latch: JobLatch,
    func: UnsafeCell<Option<T>>,
    result: UnsafeCell<JobResult<T::Output>>,
}

impl<T: Task> StackJob<T> {
    #[inline(always)]
    pub(crate) fn new(func: T) -> Self {
        StackJob {
            latch: JobLatch::new(),
            func: UnsafeCell::new(Some(func)),
            result: UnsafeCell::new(JobResult::None),
        }
    }

    /// A reference to hand to other threads. The caller keeps `self` alive and in place until the
    /// job ran (its latch is set) or was taken back.
    #[inline(always)]
    pub(crate) fn as_job_ref(&self) -> JobRef {
        // SAFETY: the owner (join, install) never returns before the job has run or been taken
        // back; that is the contract `JobRef::new` asks for.
        let job = unsafe { JobRef::new(self) };
        // Tagged as a fork: the latch is the first field (`#[repr(C)]`).
        JobRef {
            pointer: job.pointer.wrapping_byte_add(FORK_TAG),
            ..job
        }
    }

    /// Takes the work out to run it on this thread (the job was never shared, or was taken
    /// back).
    ///
    /// # Safety
    /// The job must not have run, and no other thread may hold it (never published, or taken
    /// back from its queue).
    #[inline(always)]
    pub(crate) unsafe fn take_task(&self) -> T {
        // SAFETY: exclusive access (caller's contract), and `func` is Some until the job runs.
        unsafe { (*self.func.get()).take().unwrap_unchecked() }
    }

    /// The result after the latch was set, with the job's panic as an `Err`.
    pub(crate) fn into_thread_result(self) -> std::thread::Result<T::Output> {
        match self.result.into_inner() {
            JobResult::Ok(r) => Ok(r),
            JobResult::Panic(p) => Err(p),
            JobResult::None => unreachable!("a job's result is read only after its latch is set"),
        }
    }

    /// Runs the work on the thread that took the job from a queue and stores its result, or
    /// its panic; the latch is left for the caller to set (`Job for StackJob` in `worker/run.rs`,
    /// which first counts the forks the work made).
    ///
    /// # Safety
    /// `self` is live and has not run; only the thread that took the job from a queue calls
    /// this, once, and the owner touches neither `func` nor `result` until the latch is set.
    #[inline(always)]
    pub(crate) unsafe fn run_stolen(&self) {
        // SAFETY: exclusive access (the caller's contract).
        let func = unsafe { (*self.func.get()).take() }.expect("a job runs once");
        let result = match panic::catch_unwind(AssertUnwindSafe(|| func.run())) {
            Ok(r) => JobResult::Ok(r),
            Err(p) => JobResult::Panic(p),
        };
        // SAFETY: exclusive access, as above; the write happens-before the owner's read through
        // the latch's Release/Acquire once the caller sets it.
        unsafe { *self.result.get() = result };
    }
}

/// A boxed job for work that outlives its spawner's stack frame (scope spawns).
pub(crate) struct HeapJob<F> {
    func: ManuallyDrop<F>,
}

impl<F: FnOnce() + Send> HeapJob<F> {
    /// Boxes `func` and leaks it as a `JobRef`; running the job frees it.
    ///
    /// # Safety
    /// Everything `func` borrows must outlive its execution, and the returned job must be executed
    /// exactly once (a scope guarantees both by waiting for all its spawns).
    pub(crate) unsafe fn into_job_ref(func: F) -> JobRef {
        let boxed = Box::new(HeapJob {
            func: ManuallyDrop::new(func),
        });
        // SAFETY: the box is leaked and only freed by `execute`; the caller guarantees the rest.
        unsafe { JobRef::new(Box::into_raw(boxed)) }
    }
}

impl<F: FnOnce() + Send> Job for HeapJob<F> {
    unsafe fn execute(this: *const Self) {
        // SAFETY: `this` came from `Box::into_raw` in `into_job_ref` and runs exactly once.
        let mut boxed = unsafe { Box::from_raw(this.cast_mut()) };
        // SAFETY: `func` is taken exactly once, here, and the ManuallyDrop is not used again.
        let func = unsafe { ManuallyDrop::take(&mut boxed.func) };
        drop(boxed);
        func();
    }
}
