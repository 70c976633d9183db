//! The few system calls the jobserver needs, each with its error said in words.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::Duration;

fn cpath(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))
}

/// Opens a jobserver fifo read-write and non-blocking, as this process's own description.
/// Read-write because a read-only open of a fifo blocks until a writer appears, and because as a
/// writer we never see EOF; non-blocking because reads race with every other client.
pub(crate) fn open_fifo(path: &Path) -> io::Result<OwnedFd> {
    let meta = std::fs::metadata(path)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    use std::os::unix::fs::FileTypeExt;
    if !meta.file_type().is_fifo() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a fifo", path.display()),
        ));
    }
    let c = cpath(path)?;
    // SAFETY: `c` is a valid NUL-terminated path that lives across the call.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("{}: {e}", path.display())));
    }
    // SAFETY: `open` just returned this descriptor and nobody else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// What `fstat` and `fcntl` say about one descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FdInfo {
    /// `st_dev`, `st_ino`: the same pair for both ends of one pipe, different for another pipe.
    pub(crate) id: (u64, u64),
    /// `O_RDONLY`, `O_WRONLY` or `O_RDWR` (`F_GETFL & O_ACCMODE`).
    pub(crate) access: i32,
    /// `FD_CLOEXEC` is set: such a descriptor is never inherited, so it is this process's own.
    pub(crate) cloexec: bool,
}

/// Looks at `fd` without changing anything: open, a pipe or fifo, its identity and modes.
pub(crate) fn pipe_info(fd: RawFd) -> io::Result<FdInfo> {
    if fd < 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("descriptor {fd} is negative"),
        ));
    }
    // SAFETY: a zeroed stat is a valid out-parameter.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is a valid, writable stat struct; an invalid fd is reported as EBADF.
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!(
                "descriptor {fd} is closed ({}); a make recipe must start with '+' to pass the jobserver on",
                io::Error::last_os_error()
            ),
        ));
    }
    if st.st_mode & libc::S_IFMT != libc::S_IFIFO {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("descriptor {fd} is not a pipe"),
        ));
    }
    // SAFETY: F_GETFL and F_GETFD only read the descriptor's flags; `fd` is open (fstat above).
    let (fl, fdfl) = unsafe {
        (
            libc::fcntl(fd, libc::F_GETFL),
            libc::fcntl(fd, libc::F_GETFD),
        )
    };
    if fl < 0 || fdfl < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(FdInfo {
        id: (st.st_dev as u64, st.st_ino as u64),
        access: fl & libc::O_ACCMODE,
        cloexec: fdfl & libc::FD_CLOEXEC != 0,
    })
}

/// Checks that `r` is a readable and `w` a writable end of a pipe or fifo (both open; of one
/// pipe or of two). Returns what `fstat`/`fcntl` say about each. Whether the two may be used
/// together as a jobserver is the caller's decision (`env::proven_ends`: one pipe's two ends, or
/// the two pipes a throttle server names in the environment).
pub(crate) fn check_pipe_ends(r: RawFd, w: RawFd) -> io::Result<(FdInfo, FdInfo)> {
    let ri = pipe_info(r)?;
    let wi = pipe_info(w)?;
    let bad = |why: String| Err(io::Error::new(io::ErrorKind::InvalidInput, why));
    if ri.access == libc::O_WRONLY {
        return bad(format!("descriptor {r} is a write end, not a read end"));
    }
    if wi.access == libc::O_RDONLY {
        return bad(format!("descriptor {w} is a read end, not a write end"));
    }
    Ok((ri, wi))
}

/// A private, non-blocking, close-on-exec description of the read end `r` of a pipe: reopened
/// through `/proc/self/fd/R`, which on Linux makes a new open file description, so it can be
/// non-blocking without changing the description other processes share (make ≤ 4.3 reads it
/// blocking). Its identity is checked against `id` after the open.
pub(crate) fn reopen_read_end(r: RawFd, id: (u64, u64)) -> io::Result<OwnedFd> {
    let c = cpath(Path::new(&format!("/proc/self/fd/{r}")))?;
    // SAFETY: `c` is a valid NUL-terminated path.
    let read = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_RDONLY | libc::O_NONBLOCK | libc::O_CLOEXEC,
        )
    };
    if read < 0 {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            format!(
                "cannot reopen jobserver descriptor {r} through /proc: {}",
                io::Error::last_os_error()
            ),
        ));
    }
    // SAFETY: `open` just returned this descriptor; we own it.
    let read = unsafe { OwnedFd::from_raw_fd(read) };
    if pipe_info(read.as_raw_fd())?.id != id {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("descriptor {r} changed while it was being opened"),
        ));
    }
    Ok(read)
}

/// The read and write ends of an inherited jobserver (`R,W`), after [`check_pipe_ends`]: the
/// read end reopened as this process's own non-blocking description ([`reopen_read_end`]), the
/// write end a private duplicate. The caller has decided that the pair is a jobserver (one
/// pipe's two ends, or a throttle server's two pipes).
pub(crate) fn open_inherited_pipe(r: RawFd, w: RawFd) -> io::Result<(OwnedFd, OwnedFd)> {
    let (ri, _) = check_pipe_ends(r, w)?;
    let read = reopen_read_end(r, ri.id)?;
    // SAFETY: `w` was checked open above; F_DUPFD_CLOEXEC makes a new descriptor we own.
    let write = unsafe { libc::fcntl(w, libc::F_DUPFD_CLOEXEC, 0) };
    if write < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fcntl` just returned this descriptor; we own it.
    Ok((read, unsafe { OwnedFd::from_raw_fd(write) }))
}

/// Makes a descriptor this process owns alone non-blocking (`F_SETFL`). Only for descriptions
/// no other process shares (the server's own end of its return pipe).
pub(crate) fn set_nonblocking(fd: &OwnedFd) -> io::Result<()> {
    // SAFETY: F_GETFL/F_SETFL on a descriptor we own; no memory is passed.
    unsafe {
        let fl = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
        if fl < 0 || libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, fl | libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// `DEV:INODE` of an open descriptor, if it is open.
pub(crate) fn fd_id(fd: RawFd) -> Option<String> {
    // SAFETY: a zeroed stat is a valid out-parameter.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is valid and writable; a bad fd is reported as an error.
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return None;
    }
    Some(format!("{}:{}", st.st_dev, st.st_ino))
}

/// Reads one token from a non-blocking descriptor: `Ok(None)` if none is there now.
pub(crate) fn try_read_token(fd: &OwnedFd) -> io::Result<Option<u8>> {
    let mut b = 0u8;
    loop {
        // SAFETY: reads at most 1 byte into `b`, which is valid and writable.
        let n = unsafe { libc::read(fd.as_raw_fd(), (&mut b as *mut u8).cast(), 1) };
        match n {
            1 => return Ok(Some(b)),
            0 => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the jobserver closed",
                ))
            }
            _ => {
                let e = io::Error::last_os_error();
                match e.kind() {
                    io::ErrorKind::Interrupted => continue,
                    io::ErrorKind::WouldBlock => return Ok(None),
                    _ => return Err(e),
                }
            }
        }
    }
}

/// Writes a token byte back. A jobserver pipe holds at most a few hundred bytes, far below a
/// pipe's 64 KiB, so the write never waits for room; EINTR and EAGAIN are retried.
pub(crate) fn write_token(fd: RawFd, b: u8) -> io::Result<()> {
    loop {
        // SAFETY: writes 1 byte from `b`, which is valid for reading.
        let n = unsafe { libc::write(fd, (&b as *const u8).cast(), 1) };
        if n == 1 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::Interrupted => continue,
            io::ErrorKind::WouldBlock => std::thread::yield_now(),
            _ => return Err(e),
        }
    }
}

/// Waits until `fd` is readable (or hung up), or `timeout` passes. True if readable.
pub(crate) fn poll_readable(fd: RawFd, timeout: Duration) -> bool {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = timeout.as_millis().clamp(0, i32::MAX as u128) as i32;
    // SAFETY: `p` is one valid pollfd, and we pass a count of 1.
    let n = unsafe { libc::poll(&mut p, 1, ms) };
    n > 0 && p.revents != 0
}

/// How many bytes wait in a pipe or fifo (FIONREAD).
pub(crate) fn bytes_waiting(fd: RawFd) -> io::Result<usize> {
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes one c_int to the pointer we pass, which is valid.
    if unsafe { libc::ioctl(fd, libc::FIONREAD, &mut n) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n.max(0) as usize)
}

/// Creates a fifo at `path` with mode 0600.
pub(crate) fn mkfifo(path: &Path) -> io::Result<()> {
    let c = cpath(path)?;
    // SAFETY: `c` is a valid NUL-terminated path.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// A pipe, both ends close-on-exec: (read, write).
pub(crate) fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 just returned both descriptors; we own them.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}
