//! Outside load: how many CPUs other programs kept busy while an experiment ran.
//!
//! The machine's busy time comes from the `cpu` line of `/proc/stat` (every state but idle and
//! iowait, steal included: a hypervisor that runs another guest takes CPUs as surely as a
//! process does); this process's own CPU time, its children's included, comes from
//! `getrusage`. The difference, divided by the wall time, is the average number of CPUs that
//! something else used. An experiment that measured concurrency on a machine where that number
//! is large measured the other programs too, and says so.

use std::time::Instant;

/// A reading to compare against a later one.
#[derive(Debug, Clone, Copy)]
pub struct LoadMark {
    at: Instant,
    machine_busy: Option<f64>,
    own: f64,
}

/// The machine's busy CPU seconds since boot, from `/proc/stat`.
fn machine_busy_seconds() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let ticks: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|t| t.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal [guest guest_nice]; guest time is already
    // counted in user, so only the first eight fields are summed.
    if ticks.len() < 8 {
        return None;
    }
    let busy: u64 = ticks[..8].iter().sum::<u64>() - ticks[3] - ticks[4];
    // SAFETY: sysconf has no memory-safety preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (hz > 0).then(|| busy as f64 / hz as f64)
}

/// This process's CPU seconds, reaped children included.
fn own_seconds() -> f64 {
    let mut total = 0.0;
    for who in [libc::RUSAGE_SELF, libc::RUSAGE_CHILDREN] {
        // SAFETY: `usage` is a valid, writable rusage; getrusage only writes to it.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: as above; `who` is one of the two documented constants.
        if unsafe { libc::getrusage(who, &mut usage) } == 0 {
            let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
            total += tv(usage.ru_utime) + tv(usage.ru_stime);
        }
    }
    total
}

impl LoadMark {
    /// Takes a reading now.
    pub fn now() -> LoadMark {
        LoadMark {
            at: Instant::now(),
            machine_busy: machine_busy_seconds(),
            own: own_seconds(),
        }
    }

    /// The average number of CPUs other programs kept busy since this mark; `None` when
    /// `/proc/stat` cannot be read or no time passed.
    pub fn outside_cpus(&self) -> Option<f64> {
        let wall = self.at.elapsed().as_secs_f64();
        let busy = machine_busy_seconds()? - self.machine_busy?;
        let own = own_seconds() - self.own;
        // Tick accounting is coarse (10 ms per CPU): never report less than nothing.
        (wall > 0.0).then(|| ((busy - own) / wall).max(0.0))
    }
}

/// Outside load worth a warning: a fifth of one CPU, on average, or a tenth of the CPUs,
/// whichever is more. Below that, tick rounding and system daemons explain it.
pub fn is_disturbing(outside_cpus: f64, usable_cpus: usize) -> bool {
    outside_cpus >= (0.1 * usable_cpus as f64).max(0.2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_idle_wait_shows_little_outside_load() {
        let mark = LoadMark::now();
        std::thread::sleep(std::time::Duration::from_millis(50));
        let outside = mark
            .outside_cpus()
            .expect("/proc/stat is readable on Linux");
        assert!(outside >= 0.0);
    }

    #[test]
    fn threshold() {
        assert!(!is_disturbing(0.1, 2));
        assert!(is_disturbing(0.5, 2));
        assert!(!is_disturbing(1.0, 64));
    }
}
