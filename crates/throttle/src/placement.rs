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
//! running on. The kernel must then start the sleeper on its (idle) home CPU. It costs two
//! `sched_setaffinity` calls per sleep, on the path that already sleeps in a futex.

/// The CPU the calling thread runs on, if the OS says.
pub(crate) fn current_cpu() -> Option<usize> {
    imp::current_cpu()
}

/// One worker's placement: its home CPU and the affinity mask it runs with.
#[derive(Debug)]
pub(crate) struct Placement {
    home: Option<usize>,
    full: Option<imp::CpuSet>,
}

impl Placement {
    /// Worker `index`'s placement: home = the `index`-th CPU of the calling thread's affinity
    /// mask (round-robin). No steering when the mask has a single CPU or cannot be read.
    pub(crate) fn for_worker(index: usize) -> Placement {
        match imp::allowed() {
            Some((full, cpus)) if cpus.len() > 1 => Placement {
                home: Some(cpus[index % cpus.len()]),
                full: Some(full),
            },
            _ => Placement {
                home: None,
                full: None,
            },
        }
    }

    /// The home CPU, if steering is on.
    pub(crate) fn home(&self) -> Option<usize> {
        self.home
    }

    /// Called just before the worker sleeps: pin it to its home CPU.
    pub(crate) fn before_sleep(&self) {
        if let Some(home) = self.home {
            imp::set_single(home);
        }
    }

    /// Called as soon as the worker runs again: give the kernel the full mask back.
    pub(crate) fn after_wake(&self) {
        if let Some(full) = &self.full {
            imp::set(full);
        }
    }
}

#[cfg(all(target_os = "linux", not(loom)))]
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

    pub(crate) fn set(set: &CpuSet) {
        // SAFETY: pid 0 is the calling thread; the pointer and size describe a valid cpu_set_t.
        // A failure (e.g. a cpuset that changed under us) only loses the steering, so it is
        // ignored.
        unsafe {
            libc::sched_setaffinity(0, mem::size_of::<libc::cpu_set_t>(), &set.0);
        }
    }

    pub(crate) fn set_single(cpu: usize) {
        if cpu >= libc::CPU_SETSIZE as usize {
            return;
        }
        // SAFETY: an all-zero cpu_set_t is a valid (empty) set.
        let mut one: libc::cpu_set_t = unsafe { mem::zeroed() };
        // SAFETY: `cpu` is below CPU_SETSIZE (checked above).
        unsafe { libc::CPU_SET(cpu, &mut one) };
        set(&CpuSet(one));
    }
}

#[cfg(not(all(target_os = "linux", not(loom))))]
mod imp {
    #[derive(Debug)]
    pub(crate) struct CpuSet;
    pub(crate) fn current_cpu() -> Option<usize> {
        None
    }
    pub(crate) fn allowed() -> Option<(CpuSet, Vec<usize>)> {
        None
    }
    pub(crate) fn set(_: &CpuSet) {}
    pub(crate) fn set_single(_: usize) {}
}
