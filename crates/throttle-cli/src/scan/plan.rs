//! From command-line options to a checked plan: the values to scan, the command template, and
//! how many runs to take. Every mistake in the options is found here, before anything runs, and
//! reported as one line naming the flag (exit status 2).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::record::Mode;
use super::ScanArgs;
use crate::error::usage;

/// More values than this is almost certainly a typo (`-P n 1 100000`), and would take hours.
const MAX_VALUES: usize = 1000;
/// Adaptive runs: the least per value, enough for a median and a spread.
const DEFAULT_MIN_RUNS: usize = 3;
/// Adaptive runs: the most per value, so one noisy value cannot stretch the scan for ever.
const DEFAULT_MAX_RUNS: usize = 10;

/// One value of the scan.
#[derive(Debug, Clone, PartialEq)]
pub struct Value {
    /// The value as substituted into the command.
    pub label: String,
    /// The value as a concurrency level, when it is a positive number.
    pub n: Option<f64>,
    /// Copies to run at once.
    pub copies: usize,
    /// This value's own command words, when several commands are compared (hyperfine's
    /// `throttle scan 'cmd1' 'cmd2'`); `None` runs the plan's template.
    pub command: Option<Vec<String>>,
    /// The scanned parameter's name and value, when several commands are each scanned over a
    /// parameter (`-P n 1 2 'a {n}' 'b {n}'`: four commands compared, each with its value).
    pub parameter: Option<(String, String)>,
}

/// How many measured runs each value gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunPolicy {
    /// Exactly this many (`--runs`).
    Fixed(usize),
    /// At least `min`, then more rounds until every median is stable, at most `max`.
    Adaptive {
        /// Rounds always taken.
        min: usize,
        /// Rounds never exceeded.
        max: usize,
    },
}

/// A checked scan plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Parameter or procs mode.
    pub mode: Mode,
    /// The parameter's name (`procs` in procs mode).
    pub parameter: String,
    /// The values, in the order given.
    pub values: Vec<Value>,
    /// The command words, placeholders kept.
    pub template: Vec<String>,
    /// The shell each command runs through (`SHELL -c 'COMMAND'`), or `None` to run its words
    /// directly.
    pub shell: Option<String>,
    /// Commands run around the measured ones, through the shell when there is one (else `sh`),
    /// placeholders substituted: see [`Hooks`].
    pub hooks: Hooks,
    /// Runs per value.
    pub runs: RunPolicy,
    /// Warm-up runs per value.
    pub warmup: usize,
    /// Go on when the command fails.
    pub ignore_failure: bool,
    /// Let the command's output through instead of discarding it.
    pub show_output: bool,
    /// `--output FILE`: the command's output goes to this file, created afresh for every run.
    pub output_file: Option<PathBuf>,
    /// `--output pipe`: the command's standard output goes into a pipe that the scan reads to
    /// the end and discards (standard error is discarded), as hyperfine's `pipe`: for commands
    /// that write differently to a pipe than to /dev/null.
    pub pipe_output: bool,
    /// `--input FILE`: the command's standard input.
    pub input: Option<PathBuf>,
    /// The program, resolved against `PATH` once before the first run (when its name holds no
    /// placeholder): a bare name would otherwise be searched for in the child at every spawn,
    /// one failed `execve` per `PATH` entry before the right one (8 per run of `true` here).
    pub program: Option<PathBuf>,
}

/// hyperfine's commands around the measured runs. Runs are interleaved across values, so
/// `setup` runs before a value's first run (warm-up included) and `cleanup` after its last;
/// `prepare` and `conclude` run before and after every run. None of them is timed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Hooks {
    /// `--setup`.
    pub setup: Option<String>,
    /// `--prepare`.
    pub prepare: Option<String>,
    /// `--conclude`.
    pub conclude: Option<String>,
    /// `--cleanup`.
    pub cleanup: Option<String>,
}

/// Splits a command line into words as a POSIX shell would for plain text: whitespace
/// separates words, single quotes keep everything, double quotes keep everything but `\"` and
/// `\\`, a backslash outside quotes keeps the next character. No expansion of any kind.
/// `None` for an unterminated quote.
pub fn split_words(line: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        x => word.push(x),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => match chars.next()? {
                            x @ ('"' | '\\') => word.push(x),
                            x => {
                                word.push('\\');
                                word.push(x);
                            }
                        },
                        x => word.push(x),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.push(chars.next()?);
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Some(words)
}

/// hyperfine's several commands each scanned over a parameter: one value per parameter value
/// and command, in hyperfine's order, each with its own command line (the placeholder
/// substituted) and a label from `--command-name` (the placeholder substituted there too) or
/// the command line.
fn cross(
    list: &[Vec<String>],
    given: &[String],
    names: &[String],
    parameter: &str,
    scanned: &[Value],
) -> anyhow::Result<Vec<Value>> {
    let placeholder = format!("{{{parameter}}}");
    for (i, words) in list.iter().enumerate() {
        if !words.iter().any(|w| w.contains(&placeholder)) {
            return Err(usage(
                "CMD",
                &given[i],
                &format!("every command must contain the placeholder {placeholder}"),
            ));
        }
    }
    let mut out = Vec::with_capacity(list.len() * scanned.len());
    // hyperfine's order: each value of the parameter, every command at it.
    for v in scanned {
        for (i, words) in list.iter().enumerate() {
            let put = |w: &String| w.replace(&placeholder, &v.label);
            out.push(Value {
                label: names.get(i).map_or_else(|| put(&given[i]), &put),
                n: None,
                copies: 1,
                command: Some(words.iter().map(put).collect()),
                parameter: Some((parameter.to_string(), v.label.clone())),
            });
        }
    }
    Ok(out)
}

/// How the positional arguments of `scan` name the commands, and how they run.
#[derive(Debug, Clone, PartialEq)]
struct Commands {
    /// One entry per command: its words (split, or the whole line as one word for a shell).
    list: Vec<Vec<String>>,
    /// The shell they run through, if any.
    shell: Option<String>,
}

/// Reads the positional arguments. After `--`, the words are one command run directly (or
/// through `-S SHELL`). Otherwise, as in hyperfine, every argument is one command line, run
/// through the shell (`sh` unless `-S`), or split into words and run directly with `-N`. A
/// single argument after `--` that holds spaces is read the hyperfine way too: it can only be
/// a command line, never a program's name.
fn read_commands(args: &ScanArgs) -> anyhow::Result<Commands> {
    let shell = match (args.no_shell, args.shell.as_deref()) {
        (true, Some(s)) if s != "none" => {
            return Err(usage(
                "-N",
                s,
                "-N runs without a shell; it cannot go with --shell",
            ))
        }
        (true, _) | (false, Some("none")) => None,
        (false, Some(s)) if s.trim().is_empty() || s.contains(char::is_whitespace) => {
            return Err(usage(
                "--shell",
                s,
                "expected a shell program such as bash; the command goes after the options",
            ))
        }
        (false, Some(s)) => Some(s.to_string()),
        (false, None) => Some("sh".to_string()),
    };
    let words = &args.command;
    let quoted_form =
        !args.dashdash || (words.len() == 1 && words[0].contains(char::is_whitespace));
    if !quoted_form {
        // Throttle's own form: the words after `--` are one command, run directly unless a
        // shell was asked for.
        let shell = if args.shell.is_some() { shell } else { None };
        return Ok(Commands {
            list: vec![words.clone()],
            shell,
        });
    }
    let list = match &shell {
        Some(_) => words.iter().map(|w| vec![w.clone()]).collect(),
        None => words
            .iter()
            .map(|w| split_words(w).ok_or_else(|| usage("CMD", w, "a quote is not closed")))
            .collect::<anyhow::Result<Vec<_>>>()?,
    };
    Ok(Commands { list, shell })
}

fn parse_int(flag: &str, text: &str) -> anyhow::Result<i64> {
    text.trim()
        .parse::<i64>()
        .map_err(|_| usage(flag, text, "expected an integer"))
}

fn numeric(label: &str) -> Option<f64> {
    label
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0)
}

/// The values of `-P NAME MIN MAX [-D STEP]`.
fn range_values(spec: &[String], step: Option<&str>) -> anyhow::Result<(String, Vec<Value>)> {
    let [name, min, max] = spec else {
        return Err(usage("-P", &spec.join(" "), "expected NAME MIN MAX"));
    };
    check_name("-P", name)?;
    let (lo, hi) = (parse_int("-P", min)?, parse_int("-P", max)?);
    if lo > hi {
        return Err(usage(
            "-P",
            &format!("{name} {min} {max}"),
            "MIN must not be greater than MAX",
        ));
    }
    let step = match step {
        Some(s) => parse_int("-D", s)?,
        None => 1,
    };
    if step <= 0 {
        return Err(usage(
            "-D",
            &step.to_string(),
            "the step must be a positive integer",
        ));
    }
    let count = (hi - lo) / step + 1;
    if count as usize > MAX_VALUES {
        return Err(usage(
            "-P",
            &format!("{name} {min} {max}"),
            &format!("{count} values; at most {MAX_VALUES} (use -D to take bigger steps)"),
        ));
    }
    let values = (0..count)
        .map(|i| {
            let v = lo + i * step;
            Value {
                label: v.to_string(),
                n: numeric(&v.to_string()),
                copies: 1,
                command: None,
                parameter: None,
            }
        })
        .collect();
    Ok((name.clone(), values))
}

fn check_name(flag: &str, name: &str) -> anyhow::Result<()> {
    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return Err(usage(
            flag,
            name,
            "the parameter name must be letters, digits or '_'",
        ));
    }
    Ok(())
}

/// The values of `-L NAME v1,v2,...`.
fn list_values(spec: &[String]) -> anyhow::Result<(String, Vec<Value>)> {
    let [name, list] = spec else {
        return Err(usage("-L", &spec.join(" "), "expected NAME VALUES"));
    };
    check_name("-L", name)?;
    let labels: Vec<&str> = list.split(',').map(str::trim).collect();
    if labels.iter().any(|l| l.is_empty()) {
        return Err(usage(
            "-L",
            list,
            "expected a comma-separated list with no empty items",
        ));
    }
    if labels.len() > MAX_VALUES {
        return Err(usage("-L", list, &format!("at most {MAX_VALUES} values")));
    }
    let values = labels
        .iter()
        .map(|l| Value {
            label: (*l).to_string(),
            n: numeric(l),
            copies: 1,
            command: None,
            parameter: None,
        })
        .collect();
    Ok((name.clone(), values))
}

/// The values of `--procs 1,2,4`.
fn procs_values(list: &str) -> anyhow::Result<Vec<Value>> {
    let mut out = Vec::new();
    for item in list.split(',') {
        let k: usize = item.trim().parse().map_err(|_| {
            usage(
                "--procs",
                list,
                "expected a comma-separated list of positive integers",
            )
        })?;
        if k == 0 || k > MAX_VALUES {
            return Err(usage(
                "--procs",
                list,
                &format!("each count must be 1..={MAX_VALUES}"),
            ));
        }
        out.push(Value {
            label: k.to_string(),
            n: Some(k as f64),
            copies: k,
            command: None,
            parameter: None,
        });
    }
    Ok(out)
}

impl Plan {
    /// Checks the options and builds the plan.
    pub fn from_args(args: &ScanArgs) -> anyhow::Result<Plan> {
        if args.command.is_empty() {
            return Err(usage(
                "CMD",
                "",
                "give the command to scan after the options, e.g. `throttle scan -P n 1 4 -- xz -T{n} -k -c FILE`",
            ));
        }
        let commands = read_commands(args)?;
        let several = commands.list.len() > 1;
        if several && args.procs.is_some() {
            return Err(usage(
                "CMD",
                &args.command.join(" "),
                "several commands go without --procs (to run copies of one command, give it as one argument, or its words after `--`)",
            ));
        }
        let scanning =
            args.parameter_scan.is_some() || args.parameter_list.is_some() || args.procs.is_some();
        if !args.command_name.is_empty() && scanning && !several {
            return Err(usage(
                "--command-name",
                &args.command_name.join(","),
                "names the commands of a comparison; a scan's rows are named by their values",
            ));
        }
        if !args.command_name.is_empty() && args.command_name.len() != commands.list.len() {
            return Err(usage(
                "--command-name",
                &args.command_name.join(","),
                &format!(
                    "give one name per command ({} names for {} commands)",
                    args.command_name.len(),
                    commands.list.len()
                ),
            ));
        }
        let (mode, parameter, values) =
            match (&args.parameter_scan, &args.parameter_list, &args.procs) {
                (Some(_), None, None) | (None, Some(_), None) if several => {
                    let (name, scanned) = match (&args.parameter_scan, &args.parameter_list) {
                        (Some(spec), _) => range_values(spec, args.step.as_deref())?,
                        (_, Some(spec)) => list_values(spec)?,
                        _ => unreachable!("matched above"),
                    };
                    (
                        Mode::Commands,
                        "command".to_string(),
                        cross(
                            &commands.list,
                            &args.command,
                            &args.command_name,
                            &name,
                            &scanned,
                        )?,
                    )
                }
                (Some(spec), None, None) => {
                    let (name, values) = range_values(spec, args.step.as_deref())?;
                    (Mode::Parameter, name, values)
                }
                (None, Some(spec), None) => {
                    let (name, values) = list_values(spec)?;
                    (Mode::Parameter, name, values)
                }
                (None, None, Some(list)) => (Mode::Procs, "procs".to_string(), procs_values(list)?),
                (None, None, None) => {
                    // A plain benchmark of one command, or several compared: each command is
                    // one value, labelled by its name (--command-name) or its text.
                    let values = commands
                        .list
                        .iter()
                        .enumerate()
                        .map(|(i, words)| Value {
                            label: args
                                .command_name
                                .get(i)
                                .cloned()
                                .unwrap_or_else(|| args.command[i].clone()),
                            n: None,
                            copies: 1,
                            command: Some(words.clone()),
                            parameter: None,
                        })
                        .collect();
                    (Mode::Commands, "command".to_string(), values)
                }
                _ => {
                    return Err(usage(
                        "-P/-L/--procs",
                        "",
                        "use only one of -P, -L and --procs",
                    ))
                }
            };
        if args.step.is_some() && args.parameter_scan.is_none() {
            return Err(usage(
                "-D",
                args.step.as_deref().unwrap_or(""),
                "-D only goes with -P",
            ));
        }
        if mode == Mode::Parameter {
            let placeholder = format!("{{{parameter}}}");
            if !args.command.iter().any(|w| w.contains(&placeholder)) {
                return Err(usage(
                    "CMD",
                    &args.command.join(" "),
                    &format!("the command must contain the placeholder {placeholder}"),
                ));
            }
        }
        let runs = match args.runs {
            Some(r) => RunPolicy::Fixed(r),
            None => {
                let min = args.min_runs.unwrap_or(DEFAULT_MIN_RUNS);
                let max = args.max_runs.unwrap_or(DEFAULT_MAX_RUNS.max(min));
                if min > max {
                    // Only a given --max-runs can be below the minimum (a given --min-runs
                    // raises the default maximum), so that is the flag to name.
                    return Err(usage(
                        "--max-runs",
                        &max.to_string(),
                        &format!("must be at least --min-runs ({min})"),
                    ));
                }
                RunPolicy::Adaptive { min, max }
            }
        };
        let plan = Plan {
            mode,
            parameter,
            values,
            template: commands.list[0].clone(),
            shell: commands.shell,
            hooks: Hooks {
                setup: args.setup.clone(),
                prepare: args.prepare.clone(),
                conclude: args.conclude.clone(),
                cleanup: args.cleanup.clone(),
            },
            runs,
            warmup: args.warmup,
            ignore_failure: args.ignore_failure,
            show_output: args.show_output || args.output.as_deref() == Some("inherit"),
            output_file: match args.output.as_deref() {
                None | Some("null") | Some("inherit") | Some("pipe") => None,
                Some(file) => Some(PathBuf::from(file)),
            },
            pipe_output: args.output.as_deref() == Some("pipe"),
            input: args.input.clone(),
            program: None,
        };
        if let Some(input) = &plan.input {
            if let Err(e) = std::fs::File::open(input) {
                return Err(usage(
                    "--input",
                    &input.display().to_string(),
                    &format!("cannot be read: {e}"),
                ));
            }
        }
        if let Some(out) = &plan.output_file {
            crate::export::check_output("--output", out)?;
        }
        let program = plan.check_program()?;
        Ok(Plan { program, ..plan })
    }

    /// The command words for value `index`, placeholders substituted.
    pub fn words(&self, index: usize) -> Vec<String> {
        let placeholder = format!("{{{}}}", self.parameter);
        let label = &self.values[index].label;
        if let Some(own) = &self.values[index].command {
            return own.clone();
        }
        self.template
            .iter()
            .map(|w| {
                if self.mode == Mode::Parameter {
                    w.replace(&placeholder, label)
                } else {
                    w.clone()
                }
            })
            .collect()
    }

    /// The command for value `index` as a person would type it.
    pub fn display(&self, index: usize) -> String {
        let words = self.words(index);
        if self.shell.is_some() {
            words.join(" ")
        } else {
            words
                .iter()
                .map(|w| shell_quote(w))
                .collect::<Vec<_>>()
                .join(" ")
        }
    }

    /// The template as a person would type it, placeholders kept.
    pub fn template_display(&self) -> String {
        self.template.join(" ")
    }

    /// A ready-to-spawn command for value `index`: stdin from /dev/null, output discarded
    /// unless `--show-output` or `--output` says otherwise (with `--output pipe` the caller
    /// must read the child's standard output to its end, see [`Plan::pipe_output`]).
    pub fn command(&self, index: usize) -> Command {
        let words = self.words(index);
        let mut cmd = if let Some(shell) = &self.shell {
            let mut c = Command::new(self.program.as_deref().unwrap_or(Path::new(shell)));
            c.arg("-c").arg(words.join(" "));
            c
        } else {
            let mut c = match &self.program {
                Some(path) => Command::new(path),
                None => Command::new(&words[0]),
            };
            c.args(&words[1..]);
            c
        };
        cmd.stdin(self.stdin());
        if let Some(path) = &self.output_file {
            // Created afresh for every run, as hyperfine does; a file that cannot be created is
            // no run at all (the spawn fails with the reason).
            if let Ok(file) = std::fs::File::create(path) {
                let err = file.try_clone().map_or(Stdio::null(), Stdio::from);
                cmd.stdout(Stdio::from(file)).stderr(err);
            }
        } else if self.pipe_output {
            cmd.stdout(Stdio::piped()).stderr(Stdio::null());
        } else if !self.show_output {
            cmd.stdout(Stdio::null()).stderr(Stdio::null());
        }
        cmd
    }

    /// The measured command's standard input: `--input FILE`, else nothing (/dev/null). A
    /// file that cannot be opened was already refused by [`Plan::from_args`].
    fn stdin(&self) -> Stdio {
        self.input
            .as_ref()
            .and_then(|p| std::fs::File::open(p).ok())
            .map_or(Stdio::null(), Stdio::from)
    }

    /// The hook `line` for value `index` (placeholder substituted) as a command: through the
    /// plan's shell, or `sh` when the measured command runs without one. Output is let through
    /// only with `--show-output`, as for the measured command.
    pub fn hook(&self, line: &str, index: usize) -> Command {
        let line = if self.mode == Mode::Parameter {
            line.replace(
                &format!("{{{}}}", self.parameter),
                &self.values[index].label,
            )
        } else {
            line.to_string()
        };
        let mut c = Command::new(self.shell.as_deref().unwrap_or("sh"));
        c.arg("-c").arg(line).stdin(Stdio::null());
        if !self.show_output {
            c.stdout(Stdio::null()).stderr(Stdio::null());
        }
        c
    }

    /// Fails with a usage error when the program cannot be found or is not executable; else
    /// returns its resolved path when every value runs the same program.
    fn check_program(&self) -> anyhow::Result<Option<PathBuf>> {
        let program = match &self.shell {
            Some(shell) => shell.clone(),
            None => self.words(0).first().cloned().unwrap_or_default(),
        };
        let same_for_all = self.shell.is_some()
            || self
                .values
                .iter()
                .enumerate()
                .all(|(i, _)| self.words(i).first() == Some(&program));
        if program.is_empty() {
            return Err(usage("CMD", "", "the command is empty"));
        }
        if self.shell.is_none() {
            // Several commands run directly (-N): every one's program must exist.
            for i in 0..self.values.len() {
                let first = self.words(i).first().cloned().unwrap_or_default();
                if first.is_empty() {
                    return Err(usage("CMD", "", "the command is empty"));
                }
                if !first.contains('{') && find_program(&first).is_none() {
                    return Err(crate::error::missing_program(&first));
                }
            }
        }
        match find_program(&program) {
            Some(path) => Ok(same_for_all.then_some(path)),
            None => Err(crate::error::missing_program(&program)),
        }
    }
}

/// Quotes `w` for display when it holds characters a shell would treat specially.
fn shell_quote(w: &str) -> String {
    let plain = !w.is_empty()
        && w.chars()
            .all(|c| c.is_alphanumeric() || "-_./=:,+@%{}".contains(c));
    if plain {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', r"'\''"))
    }
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// Resolves `program` as `execvp` would: a path when it contains `/`, else a search of `PATH`.
pub fn find_program(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        let p = PathBuf::from(program);
        return is_executable(&p).then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| is_executable(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn range_with_step() {
        let (name, v) = range_values(&s(&["n", "1", "8"]), Some("3")).unwrap();
        assert_eq!(name, "n");
        let labels: Vec<_> = v.iter().map(|v| v.label.as_str()).collect();
        assert_eq!(labels, ["1", "4", "7"]);
        assert_eq!(v[1].n, Some(4.0));
    }

    #[test]
    fn bad_ranges_are_usage_errors() {
        let e = range_values(&s(&["n", "4", "1"]), None).unwrap_err();
        assert!(crate::error::is_usage(&e));
        assert!(
            e.to_string().contains("MIN must not be greater than MAX"),
            "{e}"
        );
        let e = range_values(&s(&["n", "1", "4"]), Some("0")).unwrap_err();
        assert!(e.to_string().contains("'-D'"), "{e}");
        assert!(range_values(&s(&["n", "x", "4"]), None).is_err());
        assert!(range_values(&s(&["n", "1", "100000"]), None).is_err());
    }

    #[test]
    fn lists_and_procs() {
        let (_, v) = list_values(&s(&["mode", "fast,2, slow"])).unwrap();
        assert_eq!(v[1].n, Some(2.0));
        assert_eq!(v[2].label, "slow");
        assert_eq!(v[2].n, None);
        assert!(list_values(&s(&["m", "1,,2"])).is_err());
        let p = procs_values("1,2,4").unwrap();
        assert_eq!(p[2].copies, 4);
        assert!(procs_values("0,1").is_err());
        assert!(procs_values("a").is_err());
    }

    #[test]
    fn programs_are_resolved_like_execvp() {
        assert!(find_program("sh").is_some());
        assert!(find_program("/bin/sh").is_some());
        assert!(find_program("no-such-program-for-throttle").is_none());
        assert!(find_program("/etc/passwd").is_none(), "not executable");
    }

    #[test]
    fn command_lines_split_like_a_shell() {
        assert_eq!(
            split_words("sort --parallel=2 'big file.txt'").unwrap(),
            s(&["sort", "--parallel=2", "big file.txt"])
        );
        assert_eq!(
            split_words(r#"a "b \" c" d\ e"#).unwrap(),
            s(&["a", "b \" c", "d e"])
        );
        assert_eq!(split_words("  ").unwrap(), Vec::<String>::new());
        assert_eq!(split_words("''").unwrap(), s(&[""]));
        assert!(split_words("'open").is_none());
    }

    #[test]
    fn quoting_for_display() {
        assert_eq!(shell_quote("-T4"), "-T4");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }
}
