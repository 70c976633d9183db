//! `throttle run -j N [--jobserver-style auto|fifo|pipe] -- CMD ...`: runs a command tree under
//! one machine-wide budget of N concurrent jobs, as a GNU make jobserver that loses no token.
//!
//! The server itself lives in the runtime (`throttle::Server`, protocol in
//! `crates/throttle-core/src/jobserver/README.md`); this file is the command: parse, pick the style
//! the command reads (`style.rs`), start the server, run the command with `MAKEFLAGS` naming it,
//! forward signals, print the status on SIGUSR1, and at exit report how many tokens came back
//! and exit with the command's status. User guide: `docs/jobserver.md`. With `--budget URL`
//! the slots come from a cluster budget in etcd (`budget/`, `docs/cluster-budget.md`).

use crate::error::UsageError;
use clap::{Args, ValueEnum};
use std::process::{Command, ExitCode};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::Duration;
use throttle::{Server, Style};

/// How the jobserver reaches the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum JobserverStyle {
    /// The style the command reads: pipe for GNU make < 4.4 (asked with `--version`), fifo for
    /// make >= 4.4 and ninja; for any other command, that of the `make` on PATH (pipe if it is
    /// older than 4.4, else fifo). With --budget: two pipes for any make, the fifo for ninja.
    Auto,
    /// A named fifo in a private 0700 directory (make 4.4's default; ninja 1.13 reads only this).
    Fifo,
    /// Inherited pipe descriptors (what make 4.3 and older read); with --budget two pipes, one
    /// for tokens out and one for tokens back (make 4.x and cargo read them; ninja 1.13 does not).
    Pipe,
}

/// Run a command tree under one machine-wide budget of N concurrent jobs (a GNU make jobserver
/// that gets back the tokens of throttle programs killed while holding them).
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Jobs that may run at once, machine-wide (default: the CPUs this process may use).
    #[arg(short = 'j', long = "jobs", value_name = "N", value_parser = parse_jobs)]
    pub jobs: Option<usize>,
    /// How the jobserver is passed on: auto (default: what the command reads), a fifo, or
    /// inherited pipe descriptors.
    #[arg(long, value_enum, default_value = "auto", value_name = "STYLE")]
    pub jobserver_style: JobserverStyle,
    /// Print the holders and tokens of a running `throttle run` and exit (its socket: --socket,
    /// or THROTTLE_JOBSERVER_SOCKET from inside its command tree).
    #[arg(long, conflicts_with = "resize")]
    pub status: bool,
    /// Change the slots N of a running `throttle run` and exit (growing is immediate; shrinking
    /// takes tokens out as jobs give them back).
    #[arg(long, value_name = "N", value_parser = parse_jobs)]
    pub resize: Option<usize>,
    /// The socket of the running `throttle run` for --status and --resize.
    #[arg(long, value_name = "PATH")]
    pub socket: Option<std::path::PathBuf>,
    /// Take the slots from a cluster budget of N slots shared by every host that names it:
    /// etcd://HOST:PORT[,HOST:PORT...]/NAME (-j N is the cluster's N; needs a throttle built
    /// with --features etcd; docs/cluster-budget.md).
    #[arg(long, value_name = "URL", conflicts_with_all = ["status", "resize"])]
    pub budget: Option<String>,
    /// The lease TTL in seconds for --budget: a crashed host's slots come back after about this
    /// long (default 5, at least 3).
    #[arg(long, value_name = "SECS", value_parser = parse_budget_ttl, requires = "budget")]
    pub budget_ttl: Option<u64>,
    /// How long a cluster-backed token may sit unused in the pipe before its cluster slot is
    /// given back, in milliseconds (default 200).
    #[arg(long, value_name = "MS", value_parser = parse_budget_linger, requires = "budget")]
    pub budget_linger: Option<u64>,
    /// The command to run, after `--`.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CMD"
    )]
    pub command: Vec<String>,
}

fn parse_jobs(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1 (the command itself holds one slot)".into()),
        Ok(n) if n > 4096 => Err("must be at most 4096".into()),
        Ok(n) => Ok(n),
        Err(_) => Err("expected a whole number of jobs, e.g. -j 4".into()),
    }
}

/// `--budget` (and `throttle budget status URL`): a valid URL, and a throttle that can use it;
/// else the one-line usage error naming `flag` and the value (exit status 2).
pub(crate) fn parse_budget_url(flag: &str, s: &str) -> anyhow::Result<throttle_budget::BudgetUrl> {
    let url = throttle_budget::BudgetUrl::parse(s)
        .map_err(|e| crate::error::usage(flag, s, &e.to_string()))?;
    if !throttle_budget::ETCD_SUPPORT {
        return Err(crate::error::usage(
            flag,
            s,
            "this throttle was built without etcd support (build with --features etcd)",
        ));
    }
    Ok(url)
}

fn parse_budget_ttl(s: &str) -> Result<u64, String> {
    match s.parse::<u64>() {
        Ok(n) if (3..=3600).contains(&n) => Ok(n),
        Ok(_) => Err(
            "must be 3..=3600 seconds (below 3 s a lease renewal may be late by less than 1 s before the host stops trusting its slots)"
                .into(),
        ),
        Err(_) => Err("expected a whole number of seconds, e.g. --budget-ttl 5".into()),
    }
}

fn parse_budget_linger(s: &str) -> Result<u64, String> {
    match s.parse::<u64>() {
        Ok(n) if n <= 600_000 => Ok(n),
        Ok(_) => Err("must be at most 600000 ms".into()),
        Err(_) => Err("expected a whole number of milliseconds, e.g. --budget-linger 200".into()),
    }
}

/// The child's pid, for the signal handler (0: none yet).
static CHILD: AtomicI32 = AtomicI32::new(0);
/// SIGUSR1 asked for the status.
static STATUS: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    if sig == libc::SIGUSR1 {
        STATUS.store(true, Ordering::Relaxed);
        return;
    }
    let pid = CHILD.load(Ordering::Relaxed);
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    let code = unsafe { (*info).si_code };
    // A terminal's Ctrl-C (si_code > 0: sent by the kernel) already reached the whole foreground
    // process group, the command included; forward only what was sent to us alone (kill(1)).
    if pid > 0 && (sig != libc::SIGINT || code <= 0) {
        // SAFETY: kill(2) is async-signal-safe.
        unsafe {
            libc::kill(pid, sig);
        }
    }
    // A command held stopped by a lost cluster slot (`budget/hold.rs`) is continued, so that
    // it can act on the signal.
    crate::budget::hold::end_on_signal(pid);
}

fn install_handlers() {
    for sig in [
        libc::SIGINT,
        libc::SIGTERM,
        libc::SIGHUP,
        libc::SIGQUIT,
        libc::SIGUSR1,
    ] {
        // SAFETY: a zeroed sigaction with our SA_SIGINFO handler, an empty mask and SA_RESTART
        // is valid; the handler only does async-signal-safe work (atomics and kill(2)).
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal
                as extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void)
                as usize;
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// `--status` / `--resize N`: one control request to a running server, its reply on stdout.
fn control(args: &RunArgs) -> anyhow::Result<ExitCode> {
    use std::io::{Read, Write};
    let socket = match (&args.socket, std::env::var_os(throttle::SOCKET_ENV)) {
        (Some(p), _) => p.clone(),
        (None, Some(p)) => p.into(),
        (None, None) => {
            return Err(UsageError(
                "--status and --resize need the server's socket: pass --socket PATH, or run them inside the command tree of 'throttle run'".into(),
            )
            .into())
        }
    };
    let mut conn = std::os::unix::net::UnixStream::connect(&socket).map_err(|e| {
        anyhow::Error::new(UsageError(format!(
            "invalid value '{}' for '--socket': no throttle run listens there ({e})",
            socket.display()
        )))
    })?;
    let line = match args.resize {
        Some(n) => format!("Cresize {n}\n"),
        None => "Cstatus\n".to_string(),
    };
    conn.write_all(line.as_bytes())?;
    let mut reply = String::new();
    conn.read_to_string(&mut reply)?;
    print!("{reply}");
    Ok(if reply.starts_with("error") {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `main`'s entry: the command's exit code, or 2 for bad usage and 1 for a failure to run it.
pub fn main(args: RunArgs) -> ExitCode {
    match run(args) {
        Ok(code) => code,
        Err(err) if crate::error::is_usage(&err) => {
            let usage = err
                .chain()
                .find_map(|e| e.downcast_ref::<UsageError>())
                .map(|u| u.to_string())
                .unwrap_or_else(|| err.to_string());
            eprintln!("error: {usage}");
            ExitCode::from(2)
        }
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(1)
        }
    }
}

/// Runs the command under the jobserver; the exit code is the command's (128 + signal if a
/// signal ended it).
pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    if args.status || args.resize.is_some() {
        return control(&args);
    }
    let Some((program, rest)) = args.command.split_first() else {
        return Err(UsageError(
            "missing the command to run: throttle run -j N -- CMD [ARGS...]".into(),
        )
        .into());
    };
    let budget_url = args
        .budget
        .as_deref()
        .map(|u| parse_budget_url("--budget", u))
        .transpose()?;
    if budget_url.is_some() && args.jobs.is_none() {
        return Err(UsageError(
            "--budget needs -j N: the cluster budget's slot count, the same on every host".into(),
        )
        .into());
    }
    let slots = args.jobs.unwrap_or_else(throttle::default_threads);
    let style = match args.jobserver_style {
        JobserverStyle::Auto => crate::run_style::detect(program),
        JobserverStyle::Fifo => Style::Fifo,
        JobserverStyle::Pipe => Style::Pipe,
    };
    // Under a cluster budget: two pipes wherever the command reads them, so every token its
    // tools give back passes through here (run_style.rs).
    let style = match &budget_url {
        Some(_) => crate::run_style::under_budget(
            style,
            program,
            args.jobserver_style == JobserverStyle::Auto,
        ),
        None => style,
    };
    if let Some(line) = crate::run_style::explicit_jobs_warning(program, rest, slots) {
        eprintln!("{line}");
    }
    // With --budget: the command's implicit slot is a cluster slot, taken (in the cluster's
    // queue) before the command starts; the local server starts empty and the bridge puts in
    // one token per further cluster slot (budget/bridge.rs).
    let mut bridge = match &budget_url {
        Some(url) => Some(crate::budget::start(
            url,
            slots,
            args.budget_ttl.unwrap_or(5),
            Duration::from_millis(args.budget_linger.unwrap_or(200)),
        )?),
        None => None,
    };
    let server = if bridge.is_some() {
        Server::new_empty(slots, style)
    } else {
        Server::new(slots, style)
    }
    .map_err(|e| anyhow::anyhow!("starting a jobserver with {slots} slots: {e}"))?;
    let mut cmd = Command::new(program);
    cmd.args(rest);
    server.configure(&mut cmd);
    install_handlers();
    let mut child = cmd.spawn().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            anyhow::Error::new(UsageError(format!(
                "invalid value '{program}' for 'CMD': no such command ({e})"
            )))
        } else {
            anyhow::anyhow!("running '{program}': {e}")
        }
    })?;
    CHILD.store(child.id() as i32, Ordering::Relaxed);
    // With --budget: the command is held stopped while no cluster slot backs it.
    let mut hold = match &bridge {
        Some(_) => Some(
            crate::budget::hold::Hold::new(child.id())
                .map_err(|e| anyhow::anyhow!("watching '{program}': {e}"))?,
        ),
        None => None,
    };
    let status = loop {
        if STATUS.swap(false, Ordering::Relaxed) {
            let cluster = bridge.as_ref().map(|b| b.status_line()).unwrap_or_default();
            eprint!("throttle run: status\n{}{cluster}", server.status());
        }
        if let Some(b) = bridge.as_mut() {
            // The hold looks first (a process resumed past its trust window stops its command
            // before anything else), and again after the tick (a slot granted in it).
            for pass in 0..2 {
                if pass == 1 {
                    b.tick(&server);
                }
                if let Some(h) = hold.as_mut() {
                    if let Some(change) = h.update(b.command_backed(), b.backed_until()) {
                        eprintln!("{}", change.line(program, h.last_at(), h.newly_stopped()));
                    }
                }
            }
        }
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) => match &hold {
                // Until the next tick, or the end of the lease's trust window if that comes
                // first: the command is stopped at that instant (budget/hold.rs).
                Some(h) => {
                    let tick = crate::budget::bridge_tick();
                    let until_end = bridge
                        .as_ref()
                        .and_then(|b| b.trust_end())
                        .map(|end| end.saturating_duration_since(std::time::Instant::now()));
                    h.wait(until_end.map_or(tick, |d| d.min(tick)));
                }
                None => std::thread::sleep(Duration::from_millis(20)),
            },
            Err(e) => return Err(anyhow::anyhow!("waiting for '{program}': {e}")),
        }
    };
    drop(hold);
    CHILD.store(0, Ordering::Relaxed);
    let back = server.settle(Duration::from_secs(2)).unwrap_or(0);
    let expected = server.tokens_expected();
    let slots = server.slots();
    if back == expected {
        eprintln!("throttle run: {slots} slots; tokens returned: {back} of {expected}");
    } else {
        eprintln!(
            "throttle run: {slots} slots; tokens returned: {back} of {expected} ({} lost by a client that exited holding them)",
            expected.saturating_sub(back)
        );
    }
    drop(server);
    if let Some(b) = bridge {
        b.finish();
    }
    use std::os::unix::process::ExitStatusExt;
    let code = match (status.code(), status.signal()) {
        (Some(c), _) => c,
        (None, Some(sig)) => 128 + sig,
        _ => 1,
    };
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}
