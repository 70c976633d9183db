//! The pool's timeline: what every thread did and when (seed 002's thread-profiler pictures).
//!
//! Recording is compiled in and off by default. [`Pool::start_trace`](crate::Pool::start_trace)
//! turns it on, [`Pool::stop_trace`](crate::Pool::stop_trace) turns it off and returns a
//! [`Trace`]; for the global pool, set [`TRACE_ENV`] (`THROTTLE_TRACE=FILE.json`) and the
//! process writes the global pool's trace to that file when it exits normally (see
//! [`write_global_trace`]). Each thread appends to its own ring of
//! [`DEFAULT_CAPACITY`] events (no lock, no allocation, no read-modify-write per event); events
//! that do not fit are counted in [`Track::dropped`], never silently lost. The protocol and why
//! reading the rings at `stop_trace` is safe: `src/trace/README.md`.
//!
//! A [`Trace`] is plain data: [`Track`]s of [`Event`]s. It exports to the Chrome trace event
//! format ([`Trace::write_chrome_json`]; open the file in <https://ui.perfetto.dev> or
//! `chrome://tracing`), and gives the derived views a picture needs: matched [`SpanRecord`]s per
//! thread ([`Trace::spans`]) and the concurrency level over time ([`Trace::concurrency`]).
//! Other schedulers can produce the same data with a [`Recorder`] (the baselines in
//! `throttle-workloads` do), so the pictures compare schedulers.
//!
//! # Examples
//! ```
//! let pool = throttle::Pool::new(2).unwrap();
//! pool.start_trace();
//! let sum = pool.map_reduce(0..10_000, || 0u64, |i| i as u64, |a, b| a + b);
//! let trace = pool.stop_trace();
//! assert_eq!(sum, 49_995_000);
//! assert_eq!(trace.tracks().iter().filter(|t| t.role == throttle::trace::Role::Worker).count(), 2);
//! let mut json = Vec::new();
//! trace.write_chrome_json(&mut json).unwrap();
//! assert!(json.starts_with(b"{"));
//! ```

mod chrome;
pub(crate) mod codec;
pub(crate) mod model;
pub(crate) mod recorder;
pub(crate) mod ring;

pub use crate::global::{write_global_trace, TRACE_ENV};
pub use model::{Event, EventKind, Role, Span, SpanRecord, Trace, Track};
pub use recorder::{Recorder, TrackRecorder, DEFAULT_CAPACITY};

#[cfg(all(test, not(loom)))]
mod tests {
    use super::codec::{unpack, word0};
    use super::*;
    use crate::controller::Reason;
    use std::time::Duration;

    #[test]
    fn every_kind_survives_the_ring_encoding() {
        let kinds = [
            EventKind::Begin {
                span: Span::JoinSleep,
                site: Some(3),
            },
            EventKind::Begin {
                span: Span::Call,
                site: None,
            },
            EventKind::End {
                span: Span::LimitWait,
                flow: Some(0),
            },
            EventKind::End {
                span: Span::Run,
                flow: None,
            },
            EventKind::Busy,
            EventKind::Idle,
            EventKind::Steal { from: Some(0) },
            EventKind::Steal { from: None },
            EventKind::Share,
            EventKind::Wake { flow: 9 },
            EventKind::Tasks { n: 1 << 40 },
            EventKind::Limit { k: 3 },
            EventKind::Controller {
                k: 2,
                reason: Reason::LoadShift,
            },
            EventKind::TokenAcquire { held: 1 },
            EventKind::TokenRelease { held: 0 },
        ];
        for k in kinds {
            let (code, payload) = k.encode();
            let e = unpack([word0(12345, code), payload]).unwrap();
            assert_eq!(
                e,
                Event {
                    at_ns: 12345,
                    kind: k
                }
            );
        }
    }

    fn ev(at_ns: u64, kind: EventKind) -> Event {
        Event { at_ns, kind }
    }

    #[test]
    fn spans_match_and_repair_the_edges() {
        let b = |span| EventKind::Begin { span, site: None };
        let e = |span| EventKind::End { span, flow: None };
        let track = Track {
            name: "w".into(),
            role: Role::Worker,
            dropped: 0,
            events: vec![
                ev(5, e(Span::Sleep)),
                ev(10, b(Span::Run)),
                ev(20, b(Span::JoinWait)),
                ev(25, b(Span::Run)),
                ev(30, e(Span::Run)),
                ev(40, e(Span::JoinWait)),
                ev(50, e(Span::Run)),
                ev(60, b(Span::Sleep)),
            ],
        };
        let t = Trace::new("x", Duration::from_nanos(100), vec![track]);
        let s: Vec<_> = t
            .spans(0)
            .iter()
            .map(|s| (s.span, s.begin_ns, s.end_ns, s.depth))
            .collect();
        assert_eq!(
            s,
            [
                (Span::Sleep, 0, 5, 0),
                (Span::Run, 10, 50, 0),
                (Span::JoinWait, 20, 40, 1),
                (Span::Run, 25, 30, 2),
                (Span::Sleep, 60, 100, 0),
            ]
        );
    }

    #[test]
    fn concurrency_counts_threads_busy_at_the_start() {
        let a = Track {
            name: "a".into(),
            role: Role::Worker,
            dropped: 0,
            events: vec![ev(10, EventKind::Idle), ev(20, EventKind::Busy)],
        };
        let b = Track {
            name: "b".into(),
            role: Role::Worker,
            dropped: 0,
            events: vec![ev(15, EventKind::Busy), ev(30, EventKind::Idle)],
        };
        let t = Trace::new("x", Duration::from_nanos(40), vec![a, b]);
        assert_eq!(
            t.concurrency(),
            [(0, 1), (10, 0), (15, 1), (20, 2), (30, 1)]
        );
        let h = t.busy_histogram();
        assert_eq!(
            h,
            [5, 25, 10].map(Duration::from_nanos).to_vec(),
            "level 0: 10..15; level 1: 0..10, 15..20, 30..40; level 2: 20..30"
        );
    }
}
