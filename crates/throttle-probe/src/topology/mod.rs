//! What CPUs this process really has: logical CPUs, physical cores and SMT siblings, the affinity
//! mask, the cgroup CPU quota, and the concurrency all that recommends.
//!
//! The parse functions take text, so they can be checked on sample inputs from other machines.

mod affinity;
mod cgroup;
mod cpus;

pub use cgroup::{
    parse_cfs_quota, parse_cgroup_mounts, parse_cpu_max, parse_proc_cgroup, CgroupLine, CgroupMount,
};
pub use cpus::{parse_cpu_list, CpuPlace};

/// The CPU resources visible to this process.
///
/// # Examples
///
/// ```
/// use throttle_probe::Topology;
///
/// let t = Topology::detect();
/// assert!(t.recommended >= 1);
/// assert!(t.recommended <= t.affinity.len().max(1));
/// println!("{} logical CPUs, {} physical cores; use {}: {}",
///          t.logical_cpus, t.physical_cores, t.recommended, t.reason);
/// ```
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Topology {
    /// Online logical CPUs (hardware threads) in the machine.
    pub logical_cpus: usize,
    /// Distinct physical cores (distinct package, die and core ids) among the online CPUs.
    pub physical_cores: usize,
    /// Distinct CPU packages (sockets).
    pub packages: usize,
    /// Logical CPUs per physical core (2 with SMT / Hyper-Threading, else 1).
    pub threads_per_core: usize,
    /// The CPUs this process may run on (`sched_getaffinity`, narrowed by any cgroup cpuset).
    pub affinity: Vec<usize>,
    /// The cgroup CPU quota in CPUs (e.g. 1.5), `None` when there is no quota.
    pub cgroup_quota: Option<f64>,
    /// Which cgroup file was read (the one that sets the quota, or one that says there is none);
    /// `None` when no cgroup CPU controller was found.
    pub cgroup_source: Option<String>,
    /// The concurrency to use for CPU-bound work: `min(affinity, ceil(quota))`, at least 1.
    pub recommended: usize,
    /// Why `recommended` has its value, in one sentence, plus any data that could not be read.
    pub reason: String,
}

impl Topology {
    /// Detects the topology of this machine and process. Never fails: missing data falls back to
    /// conservative values and is named in [`Topology::reason`].
    pub fn detect() -> Topology {
        let mut notes = Vec::new();
        let online = cpus::online().unwrap_or_else(|e| {
            notes.push(format!("{e}; counted CPUs with sysconf instead"));
            (0..sysconf_cpus()).collect()
        });
        let logical_cpus = online.len().max(1);
        let shape = match cpus::places(&online) {
            Ok(places) if !places.is_empty() => cpus::shape(&places),
            Ok(_) | Err(_) => {
                notes.push("no sysfs CPU topology; assuming one core per logical CPU".to_string());
                cpus::Shape {
                    physical_cores: logical_cpus,
                    packages: 1,
                    threads_per_core: 1,
                }
            }
        };
        let affinity = affinity::current().unwrap_or_else(|e| {
            notes.push(format!(
                "sched_getaffinity failed ({e}); assuming all online CPUs"
            ));
            online.clone()
        });
        let quota = cgroup::detect();
        let cgroup_quota = quota.as_ref().and_then(|q| q.cpus);
        let cgroup_source = quota.map(|q| q.source);
        let (recommended, mut reason) =
            recommend(affinity.len(), cgroup_quota, cgroup_source.as_deref());
        for n in notes {
            reason.push_str("; ");
            reason.push_str(&n);
        }
        Topology {
            logical_cpus,
            physical_cores: shape.physical_cores,
            packages: shape.packages,
            threads_per_core: shape.threads_per_core,
            affinity,
            cgroup_quota,
            cgroup_source,
            recommended,
            reason,
        }
    }
}

/// `sysconf(_SC_NPROCESSORS_ONLN)`, at least 1.
fn sysconf_cpus() -> usize {
    // SAFETY: sysconf only reads a system constant.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    usize::try_from(n).unwrap_or(1).max(1)
}

/// The recommended concurrency for CPU-bound work and the reason, from the number of CPUs in the
/// affinity mask and the cgroup quota (in CPUs) with the file it came from.
///
/// A quota of 1.5 CPUs recommends 2 threads: the rounding up keeps the quota fully usable, at the
/// price of some throttling inside each period.
///
/// # Examples
///
/// ```
/// use throttle_probe::topology::recommend;
///
/// assert_eq!(recommend(8, Some(1.5), Some("cpu.max")).0, 2);
/// assert_eq!(recommend(2, Some(4.0), Some("cpu.max")).0, 2);
/// let (n, why) = recommend(4, None, None);
/// assert_eq!(n, 4);
/// assert!(why.contains("affinity"));
/// ```
pub fn recommend(affinity: usize, quota: Option<f64>, source: Option<&str>) -> (usize, String) {
    let affinity = affinity.max(1);
    let plural = |n: usize| if n == 1 { "CPU" } else { "CPUs" };
    match quota {
        Some(q) if q.is_finite() && q > 0.0 => {
            let ceil = q.ceil();
            // `ceil` is a small positive whole number here; the cast cannot truncate.
            let by_quota = if ceil >= affinity as f64 {
                affinity
            } else {
                (ceil as usize).max(1)
            };
            let from = source.unwrap_or("cgroup");
            if by_quota < affinity {
                (
                    by_quota,
                    format!(
                        "the cgroup quota of {q:.2} CPUs ({from}) allows {by_quota} of the \
                         {affinity} {} in the affinity mask",
                        plural(affinity)
                    ),
                )
            } else {
                (
                    affinity,
                    format!(
                        "{affinity} {} in the affinity mask; the cgroup quota of {q:.2} CPUs \
                         ({from}) does not limit it further",
                        plural(affinity)
                    ),
                )
            }
        }
        _ => {
            let cg = match source {
                Some(s) => format!("no cgroup CPU quota ({s})"),
                None => "no cgroup CPU controller found".to_string(),
            };
            (
                affinity,
                format!("{affinity} {} in the affinity mask; {cg}", plural(affinity)),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quota_rounds_up_and_caps() {
        assert_eq!(recommend(16, Some(0.2), None).0, 1);
        assert_eq!(recommend(16, Some(2.0), None).0, 2);
        assert_eq!(recommend(16, Some(2.01), None).0, 3);
        assert_eq!(recommend(3, Some(100.0), None).0, 3);
        assert_eq!(recommend(0, None, None).0, 1);
    }

    #[test]
    fn reason_names_the_limit() {
        let (_, why) = recommend(8, Some(1.5), Some("cgroup v2 /sys/fs/cgroup/x/cpu.max"));
        assert!(why.contains("1.50"), "{why}");
        assert!(why.contains("cpu.max"), "{why}");
    }

    #[test]
    fn detect_is_consistent() {
        let t = Topology::detect();
        assert!(t.physical_cores >= 1 && t.physical_cores <= t.logical_cpus);
        assert!(t.threads_per_core >= 1);
        assert!(!t.affinity.is_empty());
        assert!(t.recommended >= 1 && t.recommended <= t.affinity.len());
    }
}
