//! The CPUs this process may run on: `sched_getaffinity(2)`.

use std::io;

/// The CPUs in the calling thread's affinity mask (which a cgroup `cpuset` also narrows).
///
/// Covers CPUs 0..`CPU_SETSIZE` (1024); machines with more CPUs report only the first 1024.
pub(crate) fn current() -> io::Result<Vec<usize>> {
    // SAFETY: `cpu_set_t` is a plain bit array; all-zero bytes is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is valid and writable and its exact size is passed; pid 0 means the calling
    // thread.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    let max = usize::try_from(libc::CPU_SETSIZE).unwrap_or(1024);
    // SAFETY: `CPU_ISSET` only reads bit `cpu` of `set`, and `cpu < CPU_SETSIZE`.
    Ok((0..max)
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect())
}
