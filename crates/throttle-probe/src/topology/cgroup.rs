//! The cgroup CPU quota: how many CPUs' worth of time the process's control group may use.
//!
//! Detection: find the process's cgroup path in `/proc/self/cgroup`, find where the hierarchy is
//! mounted in `/proc/self/mountinfo` (falling back to `/sys/fs/cgroup`), and read the quota files in
//! that directory and every ancestor up to the mount point (a parent's limit binds its children;
//! the smallest wins):
//! - cgroup v2: `cpu.max`, `"<quota> <period>"` in microseconds or `"max <period>"`;
//! - cgroup v1 (the `cpu` controller): `cpu.cfs_quota_us` (`-1` = none) and `cpu.cfs_period_us`.

use std::fs;
use std::path::{Path, PathBuf};

use crate::ProbeError;

/// Parses a cgroup v2 `cpu.max` file into a quota in CPUs; `None` means unlimited (`max`).
///
/// # Errors
///
/// [`ProbeError::Parse`] for malformed text or a zero period.
///
/// # Examples
///
/// ```
/// use throttle_probe::topology::parse_cpu_max;
///
/// assert_eq!(parse_cpu_max("max 100000\n").unwrap(), None);
/// assert_eq!(parse_cpu_max("150000 100000\n").unwrap(), Some(1.5));
/// assert!(parse_cpu_max("fast").is_err());
/// ```
pub fn parse_cpu_max(text: &str) -> Result<Option<f64>, ProbeError> {
    let mut it = text.split_whitespace();
    let quota = it
        .next()
        .ok_or_else(|| ProbeError::parse("cpu.max", "empty file"))?;
    // The period may be omitted when written; the kernel default is 100 ms.
    let period = it.next().unwrap_or("100000");
    if quota == "max" {
        return Ok(None);
    }
    quota_from(quota, period, "cpu.max")
}

/// Parses cgroup v1 `cpu.cfs_quota_us` and `cpu.cfs_period_us` into a quota in CPUs; `None` means
/// unlimited (a negative quota, normally `-1`).
///
/// # Errors
///
/// [`ProbeError::Parse`] for malformed text or a zero period.
///
/// # Examples
///
/// ```
/// use throttle_probe::topology::parse_cfs_quota;
///
/// assert_eq!(parse_cfs_quota("-1\n", "100000\n").unwrap(), None);
/// assert_eq!(parse_cfs_quota("200000", "100000").unwrap(), Some(2.0));
/// ```
pub fn parse_cfs_quota(quota_us: &str, period_us: &str) -> Result<Option<f64>, ProbeError> {
    let q = quota_us.trim();
    if q.starts_with('-') {
        return Ok(None);
    }
    quota_from(q, period_us.trim(), "cpu.cfs_quota_us")
}

fn quota_from(quota: &str, period: &str, what: &str) -> Result<Option<f64>, ProbeError> {
    let q: u64 = quota
        .parse()
        .map_err(|e| ProbeError::parse(what, format!("quota {quota:?}: {e}")))?;
    let p: u64 = period
        .parse()
        .map_err(|e| ProbeError::parse(what, format!("period {period:?}: {e}")))?;
    if p == 0 {
        return Err(ProbeError::parse(what, "period is zero"));
    }
    Ok(Some(q as f64 / p as f64))
}

/// One line of `/proc/<pid>/cgroup`: `hierarchy-id:controller-list:path`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CgroupLine {
    /// Hierarchy id; 0 for the cgroup v2 unified hierarchy.
    pub hierarchy: u32,
    /// Controllers bound to the hierarchy (empty for v2).
    pub controllers: Vec<String>,
    /// The cgroup path relative to the hierarchy's root.
    pub path: String,
}

/// Parses `/proc/<pid>/cgroup`. Malformed lines are skipped.
///
/// # Examples
///
/// ```
/// use throttle_probe::topology::parse_proc_cgroup;
///
/// let lines = parse_proc_cgroup("2:cpu,cpuacct:/docker/ab\n0::/user.slice\n");
/// assert_eq!(lines[0].controllers, vec!["cpu", "cpuacct"]);
/// assert_eq!(lines[1].hierarchy, 0);
/// assert_eq!(lines[1].path, "/user.slice");
/// ```
pub fn parse_proc_cgroup(text: &str) -> Vec<CgroupLine> {
    text.lines()
        .filter_map(|line| {
            let mut parts = line.splitn(3, ':');
            let hierarchy = parts.next()?.parse().ok()?;
            let controllers = parts.next()?;
            let path = parts.next()?;
            Some(CgroupLine {
                hierarchy,
                controllers: controllers
                    .split(',')
                    .filter(|c| !c.is_empty())
                    .map(String::from)
                    .collect(),
                path: path.to_string(),
            })
        })
        .collect()
}

/// A cgroup mount from `/proc/<pid>/mountinfo`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CgroupMount {
    /// The cgroup path that is mounted (field 4, "root").
    pub root: String,
    /// Where it is mounted (field 5).
    pub mount_point: String,
    /// `cgroup` (v1) or `cgroup2`.
    pub fs_type: String,
    /// Super options; for v1 they name the controllers, e.g. `rw,cpu,cpuacct`.
    pub super_options: Vec<String>,
}

/// Parses the cgroup mounts out of `/proc/<pid>/mountinfo` (other mounts are skipped).
///
/// # Examples
///
/// ```
/// use throttle_probe::topology::parse_cgroup_mounts;
///
/// let text = "30 25 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n";
/// let m = parse_cgroup_mounts(text);
/// assert_eq!(m[0].mount_point, "/sys/fs/cgroup");
/// assert_eq!(m[0].fs_type, "cgroup2");
/// ```
pub fn parse_cgroup_mounts(text: &str) -> Vec<CgroupMount> {
    text.lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let left: Vec<&str> = left.split(' ').collect();
            let mut right = right.split(' ');
            let fs_type = right.next()?;
            if fs_type != "cgroup" && fs_type != "cgroup2" {
                return None;
            }
            let _source = right.next()?;
            let super_options = right.next().unwrap_or("");
            Some(CgroupMount {
                root: unescape(left.get(3)?),
                mount_point: unescape(left.get(4)?),
                fs_type: fs_type.to_string(),
                super_options: super_options.split(',').map(String::from).collect(),
            })
        })
        .collect()
}

/// Undoes mountinfo's octal escapes (`\040` for a space, etc.).
fn unescape(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| bytes[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match octal {
            Some(d) => {
                let v = d.iter().fold(0u32, |acc, c| acc * 8 + u32::from(c - b'0'));
                out.push(u8::try_from(v).unwrap_or(b'?'));
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The binding quota found, in CPUs, with the file that set it; or the directory checked when
/// there is no quota.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Quota {
    pub(crate) cpus: Option<f64>,
    pub(crate) source: String,
}

/// The directory of the process's cgroup inside a mount, and the mount point (the walk's end).
fn cgroup_dir(line: &CgroupLine, mount: &CgroupMount) -> (PathBuf, PathBuf) {
    let top = PathBuf::from(&mount.mount_point);
    let relative = if mount.root == "/" {
        Some(line.path.as_str())
    } else {
        line.path.strip_prefix(mount.root.as_str())
    };
    let dir = relative
        .map(|r| top.join(r.trim_start_matches('/')))
        .filter(|d| d.is_dir())
        // In a container without a cgroup namespace the host path is not visible; the mount
        // point is then the container's own cgroup.
        .unwrap_or_else(|| top.clone());
    (dir, top)
}

/// Walks from `dir` up to `top`, reading the quota at each level with `read`, keeping the smallest.
fn walk(
    dir: &Path,
    top: &Path,
    read: impl Fn(&Path) -> Option<(Option<f64>, String)>,
) -> Option<Quota> {
    let mut best: Option<Quota> = None;
    let mut cur = Some(dir);
    while let Some(d) = cur {
        if let Some((cpus, source)) = read(d) {
            let better = match (&best, cpus) {
                (None, _) => true,
                (Some(b), Some(c)) => b.cpus.map_or(true, |bc| c < bc),
                (Some(_), None) => false,
            };
            if better {
                best = Some(Quota { cpus, source });
            }
        }
        if d == top {
            break;
        }
        cur = d.parent().filter(|p| p.starts_with(top));
    }
    best
}

fn read_v2(dir: &Path) -> Option<(Option<f64>, String)> {
    let path = dir.join("cpu.max");
    let text = fs::read_to_string(&path).ok()?;
    let cpus = parse_cpu_max(&text).ok()?;
    Some((cpus, format!("cgroup v2 {}", path.display())))
}

fn read_v1(dir: &Path) -> Option<(Option<f64>, String)> {
    let qpath = dir.join("cpu.cfs_quota_us");
    let quota = fs::read_to_string(&qpath).ok()?;
    let period = fs::read_to_string(dir.join("cpu.cfs_period_us")).ok()?;
    let cpus = parse_cfs_quota(&quota, &period).ok()?;
    Some((cpus, format!("cgroup v1 {}", qpath.display())))
}

/// Finds the process's CPU quota from the given `/proc/self/cgroup` and `/proc/self/mountinfo`
/// texts. `None` when no cgroup CPU controller could be found at all.
pub(crate) fn detect_from(proc_cgroup: &str, mountinfo: &str) -> Option<Quota> {
    let lines = parse_proc_cgroup(proc_cgroup);
    let mut mounts = parse_cgroup_mounts(mountinfo);
    if mounts.is_empty() {
        // No mountinfo (unusual): assume the conventional locations.
        mounts = vec![
            conventional("/sys/fs/cgroup", "cgroup2", ""),
            conventional("/sys/fs/cgroup/unified", "cgroup2", ""),
            conventional("/sys/fs/cgroup/cpu,cpuacct", "cgroup", "cpu"),
            conventional("/sys/fs/cgroup/cpu", "cgroup", "cpu"),
        ];
    }
    let mut found: Vec<Quota> = Vec::new();
    for line in &lines {
        let v2 = line.hierarchy == 0 && line.controllers.is_empty();
        let v1_cpu = line.controllers.iter().any(|c| c == "cpu");
        for m in &mounts {
            let quota = if v2 && m.fs_type == "cgroup2" {
                let (dir, top) = cgroup_dir(line, m);
                walk(&dir, &top, read_v2)
            } else if v1_cpu && m.fs_type == "cgroup" && m.super_options.iter().any(|o| o == "cpu")
            {
                let (dir, top) = cgroup_dir(line, m);
                walk(&dir, &top, read_v1)
            } else {
                None
            };
            found.extend(quota);
        }
    }
    // A limit anywhere binds; prefer the smallest limit, else report a place we looked.
    found
        .iter()
        .filter(|q| q.cpus.is_some())
        .min_by(|a, b| {
            a.cpus
                .unwrap_or(f64::MAX)
                .total_cmp(&b.cpus.unwrap_or(f64::MAX))
        })
        .or(found.first())
        .cloned()
}

fn conventional(mount_point: &str, fs_type: &str, option: &str) -> CgroupMount {
    CgroupMount {
        root: "/".into(),
        mount_point: mount_point.into(),
        fs_type: fs_type.into(),
        super_options: vec![option.into()],
    }
}

/// Detects the quota of the calling process.
pub(crate) fn detect() -> Option<Quota> {
    let cgroup = fs::read_to_string("/proc/self/cgroup").ok()?;
    let mountinfo = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    detect_from(&cgroup, &mountinfo)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_max_forms() {
        assert_eq!(parse_cpu_max("max 100000").unwrap(), None);
        assert_eq!(parse_cpu_max("max").unwrap(), None);
        assert_eq!(parse_cpu_max("150000 100000").unwrap(), Some(1.5));
        assert_eq!(parse_cpu_max("50000").unwrap(), Some(0.5));
        assert!(parse_cpu_max("").is_err());
        assert!(parse_cpu_max("1 0").is_err());
        assert!(parse_cpu_max("x 100000").is_err());
    }

    #[test]
    fn cfs_forms() {
        assert_eq!(parse_cfs_quota("-1", "100000").unwrap(), None);
        assert_eq!(parse_cfs_quota("50000", "100000").unwrap(), Some(0.5));
        assert!(parse_cfs_quota("50000", "0").is_err());
        assert!(parse_cfs_quota("abc", "100000").is_err());
    }

    #[test]
    fn mountinfo_v1_and_escapes() {
        let text = "\
35 25 0:30 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:10 - cgroup cgroup rw,cpu,cpuacct
36 25 0:31 /docker/x /sys/fs/cgroup/my\\040dir rw - cgroup cgroup rw,memory
40 25 8:1 / / rw - ext4 /dev/sda1 rw
";
        let m = parse_cgroup_mounts(text);
        assert_eq!(m.len(), 2);
        assert!(m[0].super_options.contains(&"cpu".to_string()));
        assert_eq!(m[1].mount_point, "/sys/fs/cgroup/my dir");
        assert_eq!(m[1].root, "/docker/x");
    }

    #[test]
    fn proc_cgroup_skips_garbage() {
        let l = parse_proc_cgroup("garbage\n4:memory:/a:b\n");
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].path, "/a:b");
    }

    #[test]
    fn walk_takes_the_smallest_limit_of_the_ancestors() {
        let top = std::env::temp_dir().join(format!("throttle-probe-cg-{}", std::process::id()));
        let leaf = top.join("parent").join("leaf");
        fs::create_dir_all(&leaf).unwrap();
        fs::write(top.join("cpu.max"), "max 100000\n").unwrap();
        fs::write(top.join("parent").join("cpu.max"), "150000 100000\n").unwrap();
        fs::write(leaf.join("cpu.max"), "300000 100000\n").unwrap();
        let mountinfo = format!(
            "30 25 0:26 / {} rw shared:4 - cgroup2 cgroup2 rw\n",
            top.display()
        );
        let q = detect_from("0::/parent/leaf\n", &mountinfo).unwrap();
        assert_eq!(q.cpus, Some(1.5));
        assert!(q.source.ends_with("parent/cpu.max"), "{}", q.source);

        // A path that is not visible (no cgroup namespace) falls back to the mount point.
        let q = detect_from("0::/elsewhere\n", &mountinfo).unwrap();
        assert_eq!(q.cpus, None);
        fs::remove_dir_all(&top).unwrap();
    }

    #[test]
    fn v1_cpu_controller_is_found() {
        let top = std::env::temp_dir().join(format!("throttle-probe-v1-{}", std::process::id()));
        let dir = top.join("docker").join("c1");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("cpu.cfs_quota_us"), "250000\n").unwrap();
        fs::write(dir.join("cpu.cfs_period_us"), "100000\n").unwrap();
        let mountinfo = format!(
            "35 25 0:30 / {} rw - cgroup cgroup rw,cpu,cpuacct\n",
            top.display()
        );
        let q = detect_from("3:cpu,cpuacct:/docker/c1\n1:memory:/x\n", &mountinfo).unwrap();
        assert_eq!(q.cpus, Some(2.5));
        assert!(q.source.starts_with("cgroup v1"));
        fs::remove_dir_all(&top).unwrap();
    }

    #[test]
    fn detect_on_this_machine_does_not_panic() {
        let q = detect();
        if let Some(q) = q {
            assert!(!q.source.is_empty());
            assert!(q.cpus.map_or(true, |c| c > 0.0));
        }
    }
}
