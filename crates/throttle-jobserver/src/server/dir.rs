//! The server's private directory (`throttle-js-PID-…`, mode 0700, under `TMPDIR`): where its
//! fifo and socket live, and the clean-up of directories left by servers killed with SIGKILL.

use std::io;
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

/// Where the private directory goes: `TMPDIR`, unless its path has whitespace or a backslash and
/// `/tmp` is there instead. make 4.4 reads the escaped path (`fifo:/a\ b/...`), but ninja 1.13
/// does not unescape it and runs without the jobserver.
fn temp_base() -> PathBuf {
    let base = std::env::temp_dir();
    let awkward = base
        .to_string_lossy()
        .chars()
        .any(|c| c.is_ascii_whitespace() || c == '\\');
    if awkward && Path::new("/tmp").is_dir() {
        PathBuf::from("/tmp")
    } else {
        base
    }
}

/// Removes the private directories of servers that no longer run (a `throttle run` killed with
/// SIGKILL cannot remove its own): `throttle-js-PID-…` owned by this user whose PID is gone and
/// whose socket nobody listens on.
/// Returns how many it removed. A pid reused since only keeps a stale directory a while longer.
fn remove_stale_dirs(base: &Path) -> usize {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(base) else {
        return 0;
    };
    // SAFETY: getuid(2) cannot fail and has no side effects.
    let uid = unsafe { libc::getuid() };
    let mut removed = 0;
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix("throttle-js-")
            .and_then(|r| r.split('-').next())
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(meta) = std::fs::symlink_metadata(e.path()) else {
            continue;
        };
        if !meta.is_dir() || meta.uid() != uid || pid <= 0 {
            continue;
        }
        // SAFETY: kill(2) with signal 0 only checks whether the process exists.
        let pid_gone = unsafe { libc::kill(pid, 0) } != 0
            && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        // A live server always listens on its socket; a pid can be "gone" only because it lives
        // in another pid namespace sharing this TMPDIR, so the socket has the last word.
        let gone = pid_gone
            && match UnixStream::connect(e.path().join("socket")) {
                Ok(_) => false,
                Err(e) => matches!(
                    e.kind(),
                    io::ErrorKind::ConnectionRefused | io::ErrorKind::NotFound
                ),
            };
        if gone && std::fs::remove_dir_all(e.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

pub(super) fn private_dir() -> io::Result<PathBuf> {
    let base = temp_base();
    remove_stale_dirs(&base);
    let pid = std::process::id();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    for i in 0..100u32 {
        let dir = base.join(format!("throttle-js-{pid}-{nanos:x}-{i}"));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(io::Error::new(
                    e.kind(),
                    format!("creating {}: {e}", dir.display()),
                ))
            }
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "could not create a private directory for the jobserver",
    ))
}
