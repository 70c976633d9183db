//! What the benchmarks ran on: logical CPUs, physical cores, kernel.

use std::collections::BTreeSet;
use std::ffi::CStr;
use std::fs;

use serde::Serialize;

/// The machine description exported with the results.
#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    /// CPUs this process may use (`available_parallelism`: affinity mask and
    /// cgroup quota).
    pub logical_cpus: usize,
    /// Distinct (package, core) pairs in `/sys/devices/system/cpu/cpu*/topology`;
    /// `None` where sysfs does not tell.
    pub physical_cores: Option<usize>,
    /// The kernel release from `uname`.
    pub kernel: String,
}

impl Machine {
    /// Detects the machine.
    pub fn detect() -> Machine {
        Machine {
            logical_cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            physical_cores: physical_cores(),
            kernel: kernel_release().unwrap_or_else(|| "unknown".to_string()),
        }
    }

    /// One line for the top of the output.
    pub fn describe(&self) -> String {
        let cores = self
            .physical_cores
            .map_or("unknown".to_string(), |c| c.to_string());
        format!(
            "machine: {} logical CPUs usable, {} physical cores, Linux {}",
            self.logical_cpus, cores, self.kernel
        )
    }
}

fn physical_cores() -> Option<usize> {
    let mut cores = BTreeSet::new();
    for entry in fs::read_dir("/sys/devices/system/cpu").ok()?.flatten() {
        let name = entry.file_name();
        let Some(id) = name.to_str().and_then(|n| n.strip_prefix("cpu")) else {
            continue;
        };
        if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let topology = entry.path().join("topology");
        let read = |file: &str| fs::read_to_string(topology.join(file)).ok();
        // Offline CPUs have no topology directory; skip them.
        if let (Some(package), Some(core)) = (read("physical_package_id"), read("core_id")) {
            cores.insert((package.trim().to_string(), core.trim().to_string()));
        }
    }
    (!cores.is_empty()).then_some(cores.len())
}

fn kernel_release() -> Option<String> {
    // SAFETY: `utsname` is plain old data (arrays of `c_char`), so all-zero
    // bytes are a valid value.
    let mut uts: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `uts` is a valid, writable `utsname` that `uname` fills in.
    if unsafe { libc::uname(&mut uts) } != 0 {
        return None;
    }
    // SAFETY: on success `release` holds a NUL-terminated string within the
    // array, and `uts` outlives the borrow.
    let release = unsafe { CStr::from_ptr(uts.release.as_ptr()) };
    Some(release.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_something_plausible() {
        let m = Machine::detect();
        assert!(m.logical_cpus >= 1);
        if let Some(c) = m.physical_cores {
            assert!(c >= 1);
        }
        assert!(!m.kernel.is_empty());
        let osrelease = fs::read_to_string("/proc/sys/kernel/osrelease").expect("procfs");
        assert_eq!(m.kernel, osrelease.trim());
    }
}
