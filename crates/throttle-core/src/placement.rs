//! Where a woken worker starts to run: on its home CPU, not stacked on the waker's.
//!
//! Measured on the 2-CPU VM this project runs on: when a thread wakes a sleeping worker, Linux
//! often puts the worker on the *waker's* CPU while the other CPU sits idle (a halted virtual CPU
//! looks busy to the scheduler), and the two threads share one CPU until the next load balance, a
//! 4 ms tick later. `/proc/self/task/*/schedstat` showed the caller and the worker each waiting
//! ~4 ms in the run queue in every slow fib(32) run (10 ms instead of 5 ms).
//!
//! The fix keeps the kernel free to balance running threads and only steers the wake-up: a
//! worker narrows its CPU affinity to its *home* CPU while it sleeps, and widens it back to the
//! full mask as soon as it runs again; the waker picks a sleeper whose home is not the CPU it is
//! running on. The kernel must then start the sleeper on its (idle) home CPU. It costs four
//! affinity calls per sleep (read and narrow before, read and restore after), on the path that
//! already sleeps in a futex.
//!
//! The user's placement always wins: a worker narrows the mask it has *when it goes to sleep*
//! (so a `taskset`, cpuset change or `sched_setaffinity` made after the pool started is what it
//! returns to), narrows only if its home is in that mask, and restores it on waking only if the
//! mask is still the one-CPU mask it set (anyone who changed it meanwhile keeps their change).
//! Homes are spread over the CPUs allowed when the pool is built, each new pool starting one CPU
//! further, so two pools do not pile their workers on the same CPUs. It is off by default
//! (a library changes no thread's affinity unasked): `PoolBuilder::placement(true)` or
//! `THROTTLE_PLACEMENT=1` turns it on; `throttle-bench --bench placement` measures what it is
//! worth.

/// The CPU the calling thread runs on, if the OS says.
pub(crate) fn current_cpu() -> Option<usize> {
    imp::current_cpu()
}

/// The CPUs a new pool's workers take as homes.
#[derive(Debug)]
pub(crate) struct Homes {
    cpus: Vec<usize>,
    offset: usize,
}

impl Homes {
    /// Where worker `index` sleeps.
    pub(crate) fn for_worker(&self, index: usize) -> Placement {
        Placement {
            home: self.cpus[(index + self.offset) % self.cpus.len()],
        }
    }
}

/// Where one worker sleeps.
#[derive(Debug)]
pub(crate) struct Placement {
    home: usize,
}

/// The mask a worker had when it went to sleep, to restore on waking.
pub(crate) struct Saved(imp::CpuSet);

impl Placement {
    /// Homes for a new pool, or `None` where steering cannot help (one CPU, or no affinity API).
    pub(crate) fn homes_for_new_pool() -> Option<Homes> {
        static POOLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let (_, cpus) = imp::allowed()?;
        if cpus.len() < 2 {
            return None;
        }
        let offset = POOLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Some(Homes { cpus, offset })
    }

    pub(crate) fn home(&self) -> Option<usize> {
        Some(self.home)
    }

    /// Narrows this thread's affinity to its home CPU if the home is in its current mask and the
    /// mask has other CPUs. Returns the mask to restore.
    pub(crate) fn before_sleep(&self) -> Option<Saved> {
        let mask = imp::get()?;
        if mask.count() < 2 || !mask.contains(self.home) {
            return None;
        }
        imp::set_single(self.home).then_some(Saved(mask))
    }

    /// Restores the mask saved by `before_sleep`, unless somebody changed the affinity meanwhile.
    pub(crate) fn after_wake(&self, saved: Saved) {
        if let Some(now) = imp::get() {
            if now.count() == 1 && now.contains(self.home) {
                imp::set(&saved.0);
            }
        }
    }
}

#[cfg(all(target_os = "linux", not(loom), not(miri)))]
mod imp {
    use std::mem;

    /// A copy of a `cpu_set_t`.
    pub(crate) struct CpuSet(libc::cpu_set_t);

    impl std::fmt::Debug for CpuSet {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("CpuSet")
        }
    }

    pub(crate) fn current_cpu() -> Option<usize> {
        // SAFETY: sched_getcpu takes no arguments and only returns a value.
        let cpu = unsafe { libc::sched_getcpu() };
        usize::try_from(cpu).ok()
    }

    /// The calling thread's affinity mask and the CPUs in it.
    impl CpuSet {
        pub(crate) fn contains(&self, cpu: usize) -> bool {
            // SAFETY: `cpu` is checked to be below CPU_SETSIZE, the capacity of the set.
            cpu < libc::CPU_SETSIZE as usize && unsafe { libc::CPU_ISSET(cpu, &self.0) }
        }
        pub(crate) fn count(&self) -> usize {
            // SAFETY: CPU_COUNT only reads the set.
            unsafe { libc::CPU_COUNT(&self.0) as usize }
        }
    }

    /// The calling thread's affinity mask.
    pub(crate) fn get() -> Option<CpuSet> {
        // SAFETY: an all-zero cpu_set_t is a valid (empty) set.
        let mut set: libc::cpu_set_t = unsafe { mem::zeroed() };
        // SAFETY: [1] pid 0 is the calling thread; [2] the size and pointer describe `set`, a
        // properly sized and aligned cpu_set_t we own.
        let rc = unsafe { libc::sched_getaffinity(0, mem::size_of::<libc::cpu_set_t>(), &mut set) };
        (rc == 0).then_some(CpuSet(set))
    }

    pub(crate) fn allowed() -> Option<(CpuSet, Vec<usize>)> {
        // SAFETY: an all-zero cpu_set_t is a valid (empty) set.
        let mut set: libc::cpu_set_t = unsafe { mem::zeroed() };
        // SAFETY: [1] pid 0 is the calling thread; [2] the size and pointer describe `set`, a
        // properly sized and aligned cpu_set_t we own.
        let rc = unsafe { libc::sched_getaffinity(0, mem::size_of::<libc::cpu_set_t>(), &mut set) };
        if rc != 0 {
            return None;
        }
        let cpus = (0..libc::CPU_SETSIZE as usize)
            // SAFETY: `i` is below CPU_SETSIZE, the capacity of `set`.
            .filter(|&i| unsafe { libc::CPU_ISSET(i, &set) })
            .collect();
        Some((CpuSet(set), cpus))
    }

    /// Returns false if the kernel refused (e.g. a cpuset that changed under us): that only
    /// loses the steering.
    pub(crate) fn set(set: &CpuSet) -> bool {
        // SAFETY: pid 0 is the calling thread; the pointer and size describe a valid cpu_set_t.
        unsafe { libc::sched_setaffinity(0, mem::size_of::<libc::cpu_set_t>(), &set.0) == 0 }
    }

    pub(crate) fn set_single(cpu: usize) -> bool {
        if cpu >= libc::CPU_SETSIZE as usize {
            return false;
        }
        // SAFETY: an all-zero cpu_set_t is a valid (empty) set.
        let mut one: libc::cpu_set_t = unsafe { mem::zeroed() };
        // SAFETY: `cpu` is below CPU_SETSIZE (checked above).
        unsafe { libc::CPU_SET(cpu, &mut one) };
        set(&CpuSet(one))
    }
}

#[cfg(not(all(target_os = "linux", not(loom), not(miri))))]
mod imp {
    #[derive(Debug)]
    pub(crate) struct CpuSet;
    impl CpuSet {
        pub(crate) fn contains(&self, _: usize) -> bool {
            false
        }
        pub(crate) fn count(&self) -> usize {
            0
        }
    }
    pub(crate) fn get() -> Option<CpuSet> {
        None
    }
    pub(crate) fn current_cpu() -> Option<usize> {
        None
    }
    pub(crate) fn allowed() -> Option<(CpuSet, Vec<usize>)> {
        None
    }
    pub(crate) fn set(_: &CpuSet) -> bool {
        false
    }
    pub(crate) fn set_single(_: usize) -> bool {
        false
    }
}
