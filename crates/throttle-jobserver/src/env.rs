//! Finding the jobserver in the environment, and deciding whether inherited descriptors are
//! provably its own.
//!
//! A pipe-style jobserver (`--jobserver-auth=R,W`) names two descriptor *numbers*. Make 4.3 keeps
//! that text in `MAKEFLAGS` for a recipe without `+` while it closes the descriptors, so a program
//! that opens a pipe or a file first gets those numbers for its own data. Reading or writing them
//! then takes the program's bytes (a hang, or "USERDATA" coming back as "RDATAESU"). So inherited
//! descriptors are used only when all of this holds (`usable_inherited`):
//!
//! - both are open and are pipes or fifos, `R` readable and `W` writable, and either the two ends
//!   of **one** pipe (the same `st_dev`/`st_ino`), or the two pipes a throttle
//!   server says it made ([`proven_ends`]: `R`'s pipe is the one [`ID_ENV`] names, `W`'s the one
//!   [`RETURN_ID_ENV`] names): rules out swapped, mismatched and foreign ends;
//! - neither is close-on-exec: inherited descriptors never are, and every descriptor std opens is;
//! - on Linux, they were already that very pipe *when the process started*: a constructor in
//!   `.init_array` looks (fstat/fcntl only: it opens, changes and installs nothing) before `main`
//!   and before any code of the program can open a file; the lazy open compares against what it
//!   saw. This is what rules out a program's own `libc::pipe()` (not close-on-exec) landing on the
//!   numbers of a jobserver make had closed.
//!
//! [`adopt_from_env`] is the explicit form: it opens the jobserver at once (private descriptions),
//! for programs that close inherited descriptors early or want no doubt about the moment.
//! A fifo (`fifo:PATH`) names a path, not numbers: opening it lazily is always safe.

use super::{sys, Auth, Jobserver, ID_ENV, MAKEFLAGS_VARS, RETURN_ID_ENV, SOCKET_ENV};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, AtomicU64, AtomicU8, Ordering};
use std::sync::Mutex;

/// Splits a `MAKEFLAGS` value into words as make does: whitespace separates, a backslash makes
/// the next character literal (make 4.4 writes a fifo path with a space as `fifo:/a\ b/fifo`).
/// Words after a lone `--` are variable definitions, not options, and are left out.
fn option_words(flags: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = flags.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            in_word = true;
            cur.push(chars.next().unwrap_or('\\'));
        } else if c.is_ascii_whitespace() {
            if in_word {
                if cur == "--" {
                    return out;
                }
                out.push(std::mem::take(&mut cur));
                in_word = false;
            }
        } else {
            in_word = true;
            cur.push(c);
        }
    }
    if in_word && cur != "--" {
        out.push(cur);
    }
    out
}

/// Escapes a path for a `MAKEFLAGS` word: a backslash before every whitespace character and
/// backslash, as make 4.4 writes it and [`parse_makeflags`] reads it.
pub(crate) fn escape(path: &str) -> String {
    let mut s = String::with_capacity(path.len());
    for c in path.chars() {
        if c.is_ascii_whitespace() || c == '\\' {
            s.push('\\');
        }
        s.push(c);
    }
    s
}

/// The last `--jobserver-auth=` or `--jobserver-fds=` word of a `MAKEFLAGS` value (the one that
/// counts: make appends to inherited flags), unescaped.
pub(crate) fn last_option(flags: &str) -> Option<String> {
    option_words(flags)
        .into_iter()
        .rev()
        .find(|w| w.starts_with("--jobserver-auth=") || w.starts_with("--jobserver-fds="))
}

/// Finds the jobserver option in a `MAKEFLAGS` value. `Ok(None)`: no jobserver option; `Err`: an
/// option whose value this client cannot read.
pub(crate) fn parse_makeflags(flags: &str) -> Result<Option<Auth>, String> {
    let Some(word) = last_option(flags) else {
        return Ok(None);
    };
    let value = word.split_once('=').map_or(word.as_str(), |(_, v)| v);
    if let Some(path) = value.strip_prefix("fifo:") {
        if path.is_empty() {
            return Err(format!("'{value}': no path after 'fifo:'"));
        }
        return Ok(Some(Auth::Fifo(PathBuf::from(path))));
    }
    let parsed = value
        .split_once(',')
        .and_then(|(r, w)| Some((r.parse::<i32>().ok()?, w.parse::<i32>().ok()?)));
    match parsed {
        Some((r, w)) if r < 0 || w < 0 => Ok(Some(Auth::Disabled)),
        Some((r, w)) => Ok(Some(Auth::Pipe(r, w))),
        None => Err(format!(
            "'{value}': expected 'fifo:PATH' or 'R,W' (two file descriptors)"
        )),
    }
}

/// The first of [`MAKEFLAGS_VARS`] that mentions a jobserver: its name, value and parse.
fn env_auth() -> Option<(&'static str, String, Result<Auth, String>)> {
    for var in MAKEFLAGS_VARS {
        let Some(value) = std::env::var_os(var) else {
            continue;
        };
        let value = value.to_string_lossy().into_owned();
        match parse_makeflags(&value) {
            Ok(None) => continue,
            Ok(Some(auth)) => return Some((var, value, Ok(auth))),
            Err(why) => return Some((var, value, Err(why))),
        }
    }
    None
}

/// What the startup look found: 0 it did not run (not Linux), 1 a verified inherited pipe (in
/// `STARTUP_FDS`/`STARTUP_ID`), 2 none.
static STARTUP: AtomicU8 = AtomicU8::new(0);
static STARTUP_FDS: [AtomicI32; 2] = [AtomicI32::new(-1), AtomicI32::new(-1)];
/// The identities (`st_dev`, `st_ino`) of `R`'s pipe, then of `W`'s (the same for one pipe).
static STARTUP_ID: [AtomicU64; 4] = [
    AtomicU64::new(0),
    AtomicU64::new(0),
    AtomicU64::new(0),
    AtomicU64::new(0),
];

/// Runs before `main` (and before any other thread exists): records whether the pipe the
/// environment names is, at that moment, an inherited jobserver pipe. Reads only.
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static STARTUP_LOOK: extern "C" fn() = startup_look;

#[cfg(target_os = "linux")]
extern "C" fn startup_look() {
    let found = match env_auth() {
        Some((_, _, Ok(Auth::Pipe(r, w)))) => inherited_pair(r, w).ok().map(|id| (r, w, id)),
        _ => None,
    };
    if let Some((r, w, (rid, wid))) = found {
        STARTUP_FDS[0].store(r, Ordering::Relaxed);
        STARTUP_FDS[1].store(w, Ordering::Relaxed);
        for (slot, v) in STARTUP_ID.iter().zip([rid.0, rid.1, wid.0, wid.1]) {
            slot.store(v, Ordering::Relaxed);
        }
    }
    // Release: pairs with the Acquire load in `usable_inherited` (which in practice runs after
    // `main` started, long after this single-threaded constructor).
    STARTUP.store(if found.is_some() { 1 } else { 2 }, Ordering::Release);
}

/// A pipe's identity: `st_dev`, `st_ino`.
type PipeId = (u64, u64);

/// `DEV:INODE`, as [`ID_ENV`] and [`RETURN_ID_ENV`] write an identity.
fn id_text(id: PipeId) -> String {
    format!("{}:{}", id.0, id.1)
}

/// `r` is a readable and `w` a writable end of a jobserver, by its shape alone: the two ends of
/// one pipe, or the two pipes of a throttle server that said so in the environment ([`ID_ENV`]
/// names the pipe tokens are read from, [`RETURN_ID_ENV`] the one they are written back into;
/// `throttle run --budget`, so that every returned token passes through the server). Returns the
/// identities of `r`'s pipe and of `w`'s.
///
/// Why the second shape proves as much as the first: a pipe's `st_dev`/`st_ino` is unique among
/// the pipes that exist, so `r` is the read end of exactly the pipe the server made for tokens
/// and `w` the write end of exactly the pipe it made for their return. A stale variable (a
/// server long gone) names pipes that no longer exist, which no descriptor can match.
pub(crate) fn proven_ends(r: i32, w: i32) -> Result<(PipeId, PipeId), String> {
    let (ri, wi) = sys::check_pipe_ends(r, w).map_err(|e| e.to_string())?;
    if ri.id == wi.id {
        return Ok((ri.id, wi.id));
    }
    let named = |var: &str| std::env::var(var).ok().map(|v| v.trim().to_string());
    if named(ID_ENV).as_deref() == Some(id_text(ri.id).as_str())
        && named(RETURN_ID_ENV).as_deref() == Some(id_text(wi.id).as_str())
    {
        return Ok((ri.id, wi.id));
    }
    Err(format!(
        "descriptors {r} and {w} are not the two ends of one pipe, nor the two pipes a throttle server names in {ID_ENV} and {RETURN_ID_ENV}"
    ))
}

/// `r`,`w` are a jobserver by shape ([`proven_ends`]) and look inherited (not close-on-exec):
/// the identities of their pipes.
fn inherited_pair(r: i32, w: i32) -> Result<(PipeId, PipeId), String> {
    let ids = proven_ends(r, w)?;
    let (ri, wi) = (
        sys::pipe_info(r).map_err(|e| e.to_string())?,
        sys::pipe_info(w).map_err(|e| e.to_string())?,
    );
    if ri.cloexec || wi.cloexec {
        return Err(format!(
            "descriptors {r},{w} are close-on-exec, so this process opened them itself: not an inherited jobserver"
        ));
    }
    Ok(ids)
}

/// Whether the inherited pipe `r`,`w` is provably the jobserver's now (module docs).
fn usable_inherited(r: i32, w: i32) -> Result<(), String> {
    let id = inherited_pair(r, w)?;
    match STARTUP.load(Ordering::Acquire) {
        1 => {
            let fds = (
                STARTUP_FDS[0].load(Ordering::Relaxed),
                STARTUP_FDS[1].load(Ordering::Relaxed),
            );
            let at = |i: usize| STARTUP_ID[i].load(Ordering::Relaxed);
            let was = ((at(0), at(1)), (at(2), at(3)));
            if fds == (r, w) && was == id {
                Ok(())
            } else {
                Err(format!(
                    "descriptors {r},{w} are not the pipe this process inherited at startup"
                ))
            }
        }
        2 => Err(format!(
            "descriptors {r},{w} were no inherited jobserver pipe when this process started (a make recipe without '+'?); they may be the program's own now"
        )),
        _ => Ok(()),
    }
}

/// A jobserver opened by [`adopt_from_env`], waiting for the next [`Jobserver::from_env`].
static ADOPTED: Mutex<Option<Jobserver>> = Mutex::new(None);

/// Opens the jobserver in the environment now, at the top of `main`, before the program opens
/// any file: the next [`Jobserver::from_env`] (the global pool's, on its first use) gets this
/// connection. Returns true if a usable jobserver was found.
///
/// Without this call the global pool still joins a pipe-style jobserver lazily, but only if its
/// descriptors are provably the ones inherited (on Linux, checked against what a read-only look
/// before `main` saw); a fifo-style jobserver is always safe to open lazily. Call this when the
/// program closes inherited descriptors early (a daemon), or to have the jobserver held from the
/// start. It opens two private descriptors (close-on-exec) and changes nothing else.
///
/// # Examples
/// ```
/// fn main() {
///     throttle_jobserver::adopt_from_env();
///     // ... open files, make pipes, then use the global pool as usual.
/// }
/// # main();
/// ```
pub fn adopt_from_env() -> bool {
    let mut slot = ADOPTED.lock().unwrap_or_else(|p| p.into_inner());
    if slot.is_some() {
        return true;
    }
    *slot = find();
    slot.is_some()
}

/// [`Jobserver::from_env`]: the adopted connection if any, else a fresh look.
pub(crate) fn from_env() -> Option<Jobserver> {
    let adopted = ADOPTED.lock().unwrap_or_else(|p| p.into_inner()).take();
    adopted.or_else(find)
}

fn find() -> Option<Jobserver> {
    let (var, value, auth) = env_auth()?;
    let auth = match auth {
        Ok(Auth::Disabled) => return None,
        Ok(auth) => auth,
        Err(why) => {
            super::warn(&format!("ignoring the jobserver in {var}: {why}"));
            return None;
        }
    };
    let word = last_option(&value).unwrap_or_default();
    if let Auth::Pipe(r, w) = auth {
        if let Err(why) = usable_inherited(r, w) {
            debug_note(&format!(
                "not using the jobserver in {var} ('{word}'): {why}"
            ));
            return None;
        }
    }
    if let (Some(sock), Some(id)) = (std::env::var_os(SOCKET_ENV), std::env::var_os(ID_ENV)) {
        if super::auth_id(&auth).is_some_and(|a| a == id.to_string_lossy()) {
            if let Ok(js) = Jobserver::connect(Path::new(&sock)) {
                return Some(js);
            }
        }
    }
    match Jobserver::open(&auth) {
        Ok(js) => Some(js),
        Err(e) => {
            super::warn(&format!("ignoring the jobserver in {var} ('{word}'): {e}"));
            None
        }
    }
}

/// A line on stderr only when `THROTTLE_JOBSERVER=debug`: for conditions that are normal (a make
/// recipe without `+`) and must not clutter a build's output.
fn debug_note(msg: &str) {
    if std::env::var(super::JOBSERVER_ENV).is_ok_and(|v| v.trim() == "debug") {
        eprintln!("throttle: note: {msg}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaped_paths_and_variables_after_the_double_dash() {
        let p = |s| parse_makeflags(s).unwrap();
        assert_eq!(
            p(" -j2 --jobserver-auth=fifo:/tmp/a\\ b/fifo"),
            Some(Auth::Fifo("/tmp/a b/fifo".into()))
        );
        assert_eq!(
            p(" -j2 --jobserver-auth=3,4 -- X=a\\ --jobserver-auth=9,9"),
            Some(Auth::Pipe(3, 4))
        );
        assert_eq!(p(" -j2 -- --jobserver-auth=9,9"), None);
        assert_eq!(p("-- --jobserver-auth=9,9"), None);
        let path = "/tmp/x y\\z\t/fifo";
        assert_eq!(
            p(&format!("-j2 --jobserver-auth=fifo:{}", escape(path))),
            Some(Auth::Fifo(path.into()))
        );
    }

    #[test]
    fn the_startup_look_ran_before_main() {
        // The test binary's own constructor ran (Linux): 1 or 2, never 0.
        #[cfg(target_os = "linux")]
        assert_ne!(STARTUP.load(Ordering::Acquire), 0);
    }

    #[test]
    fn own_pipes_are_never_taken_for_inherited_ones() {
        // std's pipes are close-on-exec: refused even though they are one pipe's two ends.
        let (r, w) = sys::pipe().unwrap();
        use std::os::fd::AsRawFd;
        let (r, w) = (r.as_raw_fd(), w.as_raw_fd());
        let e = inherited_pair(r, w).unwrap_err();
        assert!(e.contains("close-on-exec"), "{e}");
        assert!(proven_ends(w, r).is_err(), "swapped ends");
        let (r2, w2) = sys::pipe().unwrap();
        // The ends of two pipes: refused, unless the environment names exactly those two.
        let e = proven_ends(r, w2.as_raw_fd()).unwrap_err();
        assert!(e.contains("not the two ends"), "{e}");
        drop(r2);
    }

    /// A bounded fuzzer of `MAKEFLAGS` values (fixed seed and count, so CI runs the same cases):
    /// parsing never panics; an escaped fifo path and `R,W` read back as written wherever the
    /// option sits among other words; nothing after a lone `--` changes the result.
    mod fuzz {
        use super::super::*;
        use proptest::prelude::*;
        use proptest::test_runner::{Config, RngSeed};

        fn piece() -> impl Strategy<Value = String> {
            prop_oneof![
                Just("--jobserver-auth=".to_string()),
                Just("--jobserver-fds=".to_string()),
                Just("fifo:".to_string()),
                Just(" -- ".to_string()),
                Just("\\".to_string()),
                Just(" ".to_string()),
                Just(",".to_string()),
                Just("-".to_string()),
                Just("-j".to_string()),
                Just("X=".to_string()),
                "[0-9]{1,12}",
                "[ -~]{0,6}",
                any::<char>().prop_map(String::from),
            ]
        }

        fn flags() -> impl Strategy<Value = String> {
            proptest::collection::vec(piece(), 0..24).prop_map(|v| v.concat())
        }

        /// Words that are not jobserver options and hold no backslash or `--`.
        fn other_words() -> impl Strategy<Value = String> {
            proptest::collection::vec("-[a-z]{1,3}|-j[0-9]{0,2}|[a-z]{1,4}", 0..5)
                .prop_map(|v| v.join(" "))
        }

        fn config() -> Config {
            Config {
                cases: 1000,
                rng_seed: RngSeed::Fixed(0x7468_726f_7474_6c65),
                failure_persistence: None,
                ..Config::default()
            }
        }

        proptest! {
            #![proptest_config(config())]

            #[test]
            fn never_panics(f in flags()) {
                let _ = parse_makeflags(&f);
                let _ = last_option(&f);
            }

            #[test]
            fn an_escaped_fifo_path_reads_back(
                path in "[^\u{0}]{1,40}",
                before in other_words(),
                after in other_words(),
                defs in flags(),
            ) {
                let f = format!(
                    "{before} --jobserver-auth=fifo:{} {after} -- {defs}",
                    escape(&path)
                );
                prop_assert_eq!(parse_makeflags(&f), Ok(Some(Auth::Fifo(path.into()))));
            }

            #[test]
            fn descriptors_read_back(
                r in -5i32..5000,
                w in -5i32..5000,
                before in other_words(),
                defs in flags(),
            ) {
                let f = format!("{before} --jobserver-fds={r},{w} -- {defs}");
                let want = if r < 0 || w < 0 { Auth::Disabled } else { Auth::Pipe(r, w) };
                prop_assert_eq!(parse_makeflags(&f), Ok(Some(want)));
            }

            #[test]
            fn nothing_after_a_lone_double_dash_counts(a in other_words(), defs in flags()) {
                let base = format!("{a} --jobserver-auth=3,4");
                prop_assert_eq!(
                    parse_makeflags(&format!("{base} -- {defs}")),
                    parse_makeflags(&base)
                );
            }
        }
    }
}
