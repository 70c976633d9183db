//! Export to the Chrome trace event format (the JSON that <https://ui.perfetto.dev>,
//! `chrome://tracing` and speedscope read): one process per trace, one thread per track,
//! B/E slices for spans, flow arrows (`s`/`f`) for wake-ups and steals, counters (`C`) for the
//! concurrency level, the limit and the jobserver tokens, instants (`i`) for shares and
//! controller decisions, and `M` metadata naming the process and the threads.

use super::model::{EventKind, Role, Trace};
use std::fmt::Write as _;
use std::io::Write;

/// A JSON value, written by hand. The runtime does not depend on `serde_json`: a dependency's
/// `PartialEq<serde_json::Value>` impls for integers would make an unannotated
/// `assert_eq!(n, iter.sum())` ambiguous in every program that links throttle. The format needs
/// only objects, arrays, strings and numbers, so a small emitter is enough.
enum Value {
    Num(f64),
    Int(u64),
    Str(String),
    Obj(Vec<(&'static str, Value)>),
    Arr(Vec<Value>),
}

impl From<f64> for Value {
    fn from(v: f64) -> Value {
        Value::Num(v)
    }
}
impl From<u64> for Value {
    fn from(v: u64) -> Value {
        Value::Int(v)
    }
}
impl From<u32> for Value {
    fn from(v: u32) -> Value {
        Value::Int(u64::from(v))
    }
}
impl From<usize> for Value {
    fn from(v: usize) -> Value {
        Value::Int(v as u64)
    }
}
impl From<&str> for Value {
    fn from(v: &str) -> Value {
        Value::Str(v.to_string())
    }
}
impl From<String> for Value {
    fn from(v: String) -> Value {
        Value::Str(v)
    }
}
impl From<&String> for Value {
    fn from(v: &String) -> Value {
        Value::Str(v.clone())
    }
}

/// An object from `key => value` pairs: `obj!{"ph" => "B", "ts" => 1.5}`.
macro_rules! obj {
    ($($k:literal => $v:expr),* $(,)?) => {
        Value::Obj(vec![$(($k, Value::from($v))),*])
    };
}

impl From<Vec<Value>> for Value {
    fn from(v: Vec<Value>) -> Value {
        Value::Arr(v)
    }
}

impl Value {
    /// Adds (or appends) `key` to an object; other values are left alone.
    fn set(&mut self, key: &'static str, value: Value) {
        if let Value::Obj(fields) = self {
            fields.push((key, value));
        }
    }

    fn write(&self, out: &mut String) {
        match self {
            // JSON has no NaN or infinity; the trace never produces them, but stay valid.
            Value::Num(v) if !v.is_finite() => out.push_str("null"),
            Value::Num(v) => {
                let _ = write!(out, "{v}");
            }
            Value::Int(v) => {
                let _ = write!(out, "{v}");
            }
            Value::Str(s) => escape(s, out),
            Value::Obj(fields) => {
                out.push('{');
                for (i, (k, v)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    escape(k, out);
                    out.push(':');
                    v.write(out);
                }
                out.push('}');
            }
            Value::Arr(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    v.write(out);
                }
                out.push(']');
            }
        }
    }
}

/// A JSON string literal: quotes, backslashes and control characters escaped (RFC 8259 §7).
fn escape(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

const PID: u64 = 1;

/// Microseconds, the unit of `ts` in the format (fractions keep nanosecond resolution).
fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

fn tid(track: usize) -> u64 {
    track as u64 + 1
}

impl Trace {
    /// Writes the trace as Chrome trace event JSON (`{"traceEvents": [...]}`).
    ///
    /// Open the file at <https://ui.perfetto.dev> ("Open trace file") or in Chrome at
    /// `chrome://tracing` ("Load"). Each thread is a track named after it; its slices are the
    /// [`Span`](super::Span)s (`run` slices carry their call site when known); arrows join a
    /// waker to the thread it woke (`wake`) and a victim to its thief (`steal`); the process has
    /// counters `concurrency` (busy threads) and `limit`.
    ///
    /// # Errors
    /// Writing to `w`.
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::new(2).unwrap();
    /// pool.start_trace();
    /// pool.join(|| (), || ());
    /// let mut out = Vec::new();
    /// pool.stop_trace().write_chrome_json(&mut out).unwrap();
    /// let text = String::from_utf8(out).unwrap();
    /// assert!(text.contains("\"traceEvents\""));
    /// ```
    pub fn write_chrome_json<W: Write>(&self, mut w: W) -> std::io::Result<()> {
        let doc = obj! {
            "traceEvents" => self.chrome_events(),
            "displayTimeUnit" => "ns",
            "otherData" => obj! {
                "scheduler" => &self.scheduler,
                "duration_ns" => self.duration_ns(),
                "ring_capacity_events" => self.capacity,
                "dropped_events" => self.dropped(),
            },
        };
        let mut text = String::new();
        doc.write(&mut text);
        w.write_all(text.as_bytes())?;
        w.flush()
    }

    fn chrome_events(&self) -> Vec<Value> {
        let mut out = vec![obj! {
            "ph" => "M", "name" => "process_name", "pid" => PID, "tid" => 0u64,
            "args" => obj! {"name" => &self.scheduler},
        }];
        for (i, t) in self.tracks().iter().enumerate() {
            let mut name = t.name.clone();
            if t.dropped > 0 {
                name.push_str(&format!(" ({} events dropped)", t.dropped));
            }
            out.push(obj! {
                "ph" => "M", "name" => "thread_name", "pid" => PID, "tid" => tid(i),
                "args" => obj! {"name" => name},
            });
            let sort = match t.role {
                Role::Caller => 0,
                Role::Worker => 1,
                Role::Pool => 2,
            } * 10_000
                + i;
            out.push(obj! {
                "ph" => "M", "name" => "thread_sort_index", "pid" => PID, "tid" => tid(i),
                "args" => obj! {"sort_index" => sort},
            });
            self.span_events(i, &mut out);
            self.instant_events(i, &mut out);
        }
        self.flow_events(&mut out);
        for (t, n) in self.concurrency() {
            out.push(obj! {
                "ph" => "C", "name" => "concurrency", "pid" => PID, "tid" => 0u64, "ts" => us(t),
                "args" => obj! {"busy threads" => n},
            });
        }
        for (t, k) in self.limit() {
            out.push(obj! {
                "ph" => "C", "name" => "limit", "pid" => PID, "tid" => 0u64, "ts" => us(t),
                "args" => obj! {"k" => k},
            });
        }
        out
    }

    /// B/E pairs, properly nested, in time order.
    fn span_events(&self, track: usize, out: &mut Vec<Value>) {
        let mut stack: Vec<(&'static str, u64)> = Vec::new();
        let end = |out: &mut Vec<Value>, (name, at): (&'static str, u64)| {
            out.push(obj! {"ph" => "E", "name" => name, "pid" => PID, "tid" => tid(track), "ts" => us(at)});
        };
        for s in self.spans(track) {
            while stack.len() > s.depth {
                let top = stack.pop().expect("non-empty");
                end(out, top);
            }
            let mut b = obj! {
                "ph" => "B", "name" => s.span.name(), "cat" => "schedule",
                "pid" => PID, "tid" => tid(track), "ts" => us(s.begin_ns),
            };
            if let Some(site) = s.site.and_then(|i| self.sites.get(i as usize)) {
                b.set("args", obj! { "site" => site });
            }
            out.push(b);
            stack.push((s.span.name(), s.end_ns));
        }
        while let Some(top) = stack.pop() {
            end(out, top);
        }
    }

    fn instant_events(&self, track: usize, out: &mut Vec<Value>) {
        for e in &self.tracks()[track].events {
            let (name, args) = match e.kind {
                EventKind::Share => ("share", obj! {}),
                EventKind::Controller { k, reason } => (
                    "controller",
                    obj! {"k" => k, "reason" => reason.to_string()},
                ),
                EventKind::Limit { k } => ("limit", obj! { "k" => k }),
                EventKind::TokenAcquire { held } => ("token acquired", obj! { "held" => held }),
                EventKind::TokenRelease { held } => ("token released", obj! { "held" => held }),
                _ => continue,
            };
            out.push(obj! {
                "ph" => "i", "s" => "t", "name" => name, "pid" => PID, "tid" => tid(track),
                "ts" => us(e.at_ns), "args" => args,
            });
        }
    }

    /// Flow arrows: each end sits in a zero-length slice of its own so that viewers always
    /// find a slice to bind it to.
    fn flow_events(&self, out: &mut Vec<Value>) {
        let arrow = |out: &mut Vec<Value>, cat: &str, id: u64, from: (usize, u64), to| {
            let (to, at_to): (usize, u64) = to;
            for (name, ph, (track, at)) in [("s", "s", from), ("f", "f", (to, at_to))] {
                let label = match (cat, name) {
                    ("wake", "s") => "wakes",
                    ("wake", _) => "woken",
                    (_, "s") => "stolen from",
                    _ => "steals",
                };
                out.push(obj! {
                    "ph" => "X", "name" => label, "cat" => cat, "pid" => PID, "tid" => tid(track),
                    "ts" => us(at), "dur" => 0u64,
                });
                let mut f = obj! {
                    "ph" => ph, "name" => cat, "cat" => cat, "id" => id, "pid" => PID,
                    "tid" => tid(track), "ts" => us(at),
                };
                if ph == "f" {
                    f.set("bp", Value::from("e"));
                }
                out.push(f);
            }
        };
        for (waker, woken, at, resumed) in self.wakeups() {
            // Ids of wake-ups and steals must not collide: wake-ups are even, steals odd.
            let id = 2 * (out.len() as u64);
            arrow(out, "wake", id, (waker, at), (woken, resumed));
        }
        for (thief, t) in self.tracks().iter().enumerate() {
            for e in &t.events {
                if let EventKind::Steal { from: Some(v) } = e.kind {
                    let v = v as usize;
                    if v < self.tracks().len() && v != thief {
                        let id = 2 * (out.len() as u64) + 1;
                        arrow(out, "steal", id, (v, e.at_ns), (thief, e.at_ns));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_emitter_writes_json_that_a_parser_reads_back() {
        let name = "a \"quoted\" \\ path\nwith\ttabs and \u{1} control, ünïcode";
        let doc = obj! {
            "s" => name,
            "n" => 1.5,
            "i" => u64::MAX,
            "bad" => f64::NAN,
            "a" => vec![obj! {}, Value::from("x")],
        };
        let mut text = String::new();
        doc.write(&mut text);
        let back: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
        assert_eq!(back["s"], name);
        assert_eq!(back["n"], 1.5);
        assert_eq!(back["i"], u64::MAX);
        assert!(back["bad"].is_null());
        assert_eq!(back["a"][1], "x");
    }
}
