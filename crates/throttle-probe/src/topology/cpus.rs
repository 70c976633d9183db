//! CPUs as sysfs describes them: the online list and each CPU's package, die and core ids.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;

use crate::ProbeError;

/// Parses a kernel CPU list such as `0-3,8,10-11` (the format of
/// `/sys/devices/system/cpu/online` and `Cpus_allowed_list`).
///
/// # Errors
///
/// [`ProbeError::Parse`] for malformed text.
///
/// # Examples
///
/// ```
/// use throttle_probe::topology::parse_cpu_list;
///
/// assert_eq!(parse_cpu_list("0-2,5\n").unwrap(), vec![0, 1, 2, 5]);
/// assert!(parse_cpu_list("3-1").is_err());
/// ```
pub fn parse_cpu_list(text: &str) -> Result<Vec<usize>, ProbeError> {
    let bad = |detail: String| ProbeError::parse("CPU list", detail);
    let mut cpus = BTreeSet::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let num = |s: &str| {
            s.trim()
                .parse::<usize>()
                .map_err(|e| bad(format!("{s:?} in {text:?}: {e}")))
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(bad(format!("range {part:?} runs backwards")));
                }
                cpus.extend(a..=b);
            }
            None => {
                cpus.insert(num(part)?);
            }
        }
    }
    Ok(cpus.into_iter().collect())
}

/// Where one logical CPU sits: package (socket), die and core ids from
/// `/sys/devices/system/cpu/cpuN/topology/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct CpuPlace {
    /// The logical CPU number.
    pub cpu: usize,
    /// `physical_package_id`.
    pub package: i64,
    /// `die_id` (0 when the kernel does not report dies).
    pub die: i64,
    /// `core_id` (unique only within a package and die).
    pub core: i64,
}

/// Counts derived from [`CpuPlace`]s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shape {
    pub(crate) physical_cores: usize,
    pub(crate) packages: usize,
    pub(crate) threads_per_core: usize,
}

/// Physical cores are distinct `(package, die, core)` triples; threads per core is the largest
/// number of logical CPUs sharing one (SMT siblings).
pub(crate) fn shape(places: &[CpuPlace]) -> Shape {
    let mut per_core: BTreeMap<(i64, i64, i64), usize> = BTreeMap::new();
    for p in places {
        *per_core.entry((p.package, p.die, p.core)).or_default() += 1;
    }
    let packages: BTreeSet<i64> = places.iter().map(|p| p.package).collect();
    Shape {
        physical_cores: per_core.len(),
        packages: packages.len(),
        threads_per_core: per_core.values().copied().max().unwrap_or(1),
    }
}

/// Reads one integer file under a CPU's `topology/` directory.
fn read_id(cpu: usize, name: &str) -> Result<i64, ProbeError> {
    let path = format!("/sys/devices/system/cpu/cpu{cpu}/topology/{name}");
    let text = fs::read_to_string(&path).map_err(|e| ProbeError::io(&path, e))?;
    text.trim()
        .parse::<i64>()
        .map_err(|e| ProbeError::parse(path, e.to_string()))
}

/// The online CPUs: `/sys/devices/system/cpu/online`.
pub(crate) fn online() -> Result<Vec<usize>, ProbeError> {
    let path = "/sys/devices/system/cpu/online";
    let text = fs::read_to_string(path).map_err(|e| ProbeError::io(path, e))?;
    parse_cpu_list(&text)
}

/// The place of each CPU in `cpus`. A missing `die_id` (kernels before 5.2) counts as die 0.
pub(crate) fn places(cpus: &[usize]) -> Result<Vec<CpuPlace>, ProbeError> {
    cpus.iter()
        .map(|&cpu| {
            Ok(CpuPlace {
                cpu,
                package: read_id(cpu, "physical_package_id")?,
                die: read_id(cpu, "die_id").unwrap_or(0),
                core: read_id(cpu, "core_id")?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(cpu: usize, package: i64, core: i64) -> CpuPlace {
        CpuPlace {
            cpu,
            package,
            die: 0,
            core,
        }
    }

    #[test]
    fn smt_machine_shape() {
        // 4 cores with 2 threads each, siblings numbered n and n+4 (the usual Intel layout).
        let p: Vec<_> = (0..8).map(|c| place(c, 0, (c % 4) as i64)).collect();
        let s = shape(&p);
        assert_eq!(
            (s.physical_cores, s.packages, s.threads_per_core),
            (4, 1, 2)
        );
    }

    #[test]
    fn core_ids_repeat_across_packages() {
        let p = vec![
            place(0, 0, 0),
            place(1, 0, 1),
            place(2, 1, 0),
            place(3, 1, 1),
        ];
        let s = shape(&p);
        assert_eq!(
            (s.physical_cores, s.packages, s.threads_per_core),
            (4, 2, 1)
        );
    }

    #[test]
    fn cpu_list_forms() {
        assert_eq!(parse_cpu_list("0").unwrap(), vec![0]);
        assert_eq!(parse_cpu_list("").unwrap(), Vec::<usize>::new());
        assert_eq!(parse_cpu_list("2,0-1").unwrap(), vec![0, 1, 2]);
        assert!(parse_cpu_list("a-b").is_err());
    }
}
