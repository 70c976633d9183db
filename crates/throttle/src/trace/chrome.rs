//! Export to the Chrome trace event format (the JSON that <https://ui.perfetto.dev>,
//! `chrome://tracing` and speedscope read): one process per trace, one thread per track,
//! B/E slices for spans, flow arrows (`s`/`f`) for wake-ups and steals, counters (`C`) for the
//! concurrency level, the limit and the jobserver tokens, instants (`i`) for shares and
//! controller decisions, and `M` metadata naming the process and the threads.

use super::{EventKind, Role, Trace};
use serde_json::{json, Value};
use std::io::Write;

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
        let doc = json!({
            "traceEvents": self.chrome_events(),
            "displayTimeUnit": "ns",
            "otherData": {
                "scheduler": self.scheduler,
                "duration_ns": self.duration_ns(),
                "ring_capacity_events": self.capacity,
                "dropped_events": self.dropped(),
            },
        });
        serde_json::to_writer(&mut w, &doc)?;
        w.flush()
    }

    fn chrome_events(&self) -> Vec<Value> {
        let mut out = vec![json!({
            "ph": "M", "name": "process_name", "pid": PID, "tid": 0,
            "args": {"name": self.scheduler},
        })];
        for (i, t) in self.tracks().iter().enumerate() {
            let mut name = t.name.clone();
            if t.dropped > 0 {
                name.push_str(&format!(" ({} events dropped)", t.dropped));
            }
            out.push(json!({
                "ph": "M", "name": "thread_name", "pid": PID, "tid": tid(i),
                "args": {"name": name},
            }));
            let sort = match t.role {
                Role::Caller => 0,
                Role::Worker => 1,
                Role::Pool => 2,
            } * 10_000
                + i;
            out.push(json!({
                "ph": "M", "name": "thread_sort_index", "pid": PID, "tid": tid(i),
                "args": {"sort_index": sort},
            }));
            self.span_events(i, &mut out);
            self.instant_events(i, &mut out);
        }
        self.flow_events(&mut out);
        for (t, n) in self.concurrency() {
            out.push(json!({
                "ph": "C", "name": "concurrency", "pid": PID, "tid": 0, "ts": us(t),
                "args": {"busy threads": n},
            }));
        }
        for (t, k) in self.limit() {
            out.push(json!({
                "ph": "C", "name": "limit", "pid": PID, "tid": 0, "ts": us(t),
                "args": {"k": k},
            }));
        }
        out
    }

    /// B/E pairs, properly nested, in time order.
    fn span_events(&self, track: usize, out: &mut Vec<Value>) {
        let mut stack: Vec<(&'static str, u64)> = Vec::new();
        let end = |out: &mut Vec<Value>, (name, at): (&'static str, u64)| {
            out.push(json!({"ph": "E", "name": name, "pid": PID, "tid": tid(track), "ts": us(at)}));
        };
        for s in self.spans(track) {
            while stack.len() > s.depth {
                let top = stack.pop().expect("non-empty");
                end(out, top);
            }
            let mut b = json!({
                "ph": "B", "name": s.span.name(), "cat": "schedule",
                "pid": PID, "tid": tid(track), "ts": us(s.begin_ns),
            });
            if let Some(site) = s.site.and_then(|i| self.sites.get(i as usize)) {
                b["args"] = json!({ "site": site });
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
                EventKind::Share => ("share", json!({})),
                EventKind::Controller { k, reason } => {
                    ("controller", json!({"k": k, "reason": reason.to_string()}))
                }
                EventKind::Limit { k } => ("limit", json!({ "k": k })),
                EventKind::TokenAcquire { held } => ("token acquired", json!({ "held": held })),
                EventKind::TokenRelease { held } => ("token released", json!({ "held": held })),
                _ => continue,
            };
            out.push(json!({
                "ph": "i", "s": "t", "name": name, "pid": PID, "tid": tid(track),
                "ts": us(e.at_ns), "args": args,
            }));
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
                out.push(json!({
                    "ph": "X", "name": label, "cat": cat, "pid": PID, "tid": tid(track),
                    "ts": us(at), "dur": 0,
                }));
                let mut f = json!({
                    "ph": ph, "name": cat, "cat": cat, "id": id, "pid": PID,
                    "tid": tid(track), "ts": us(at),
                });
                if ph == "f" {
                    f["bp"] = json!("e");
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
