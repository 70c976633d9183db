//! The data of a recording: [`Trace`], its [`Track`]s of [`Event`]s, and the views a picture
//! needs. Plain data, written by the recorder (`recorder.rs`) and read by exporters.

use std::time::Duration;
use throttle_controller::Reason;

/// A stretch of time a thread spent in one state; spans nest (a run inside a join wait is
/// helping, a limit wait inside a run is a task that yielded its slot).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Span {
    /// A call from outside the pool (`install`, `join`, `for_range`, ...), with its call site.
    Call,
    /// Running a task the thread took from a queue (its own, or stolen).
    Run,
    /// Waiting in `join`/`scope` for a fork another thread took: runs inside it are helping.
    JoinWait,
    /// Waiting for a run slot because of the concurrency limit.
    LimitWait,
    /// An idle worker asleep (parked) for lack of work.
    Sleep,
    /// Asleep inside a join wait: nothing to help with.
    JoinSleep,
}

impl Span {
    pub(super) const ALL: [Span; 6] = [
        Span::Call,
        Span::Run,
        Span::JoinWait,
        Span::LimitWait,
        Span::Sleep,
        Span::JoinSleep,
    ];

    /// A short name (the slice name in the Chrome export).
    ///
    /// # Examples
    /// ```
    /// assert_eq!(throttle::trace::Span::LimitWait.name(), "limit wait");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Span::Call => "call",
            Span::Run => "run",
            Span::JoinWait => "join wait",
            Span::LimitWait => "limit wait",
            Span::Sleep => "sleep",
            Span::JoinSleep => "join sleep",
        }
    }

    pub(super) fn code(self) -> u8 {
        Span::ALL.iter().position(|s| *s == self).unwrap_or(0) as u8
    }
}

/// What happened. Times are in [`Event::at_ns`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum EventKind {
    /// A span starts; `site` indexes [`Trace::sites`] where the call site is known.
    Begin {
        /// Which span.
        span: Span,
        /// The call site, an index into [`Trace::sites`].
        site: Option<u32>,
    },
    /// A span ends; `flow` is the wake-up that ended a sleep or a limit wait (the matching
    /// [`EventKind::Wake`] is on the waker's track).
    End {
        /// Which span.
        span: Span,
        /// The wake-up that ended it, if another thread woke this one.
        flow: Option<u64>,
    },
    /// The thread starts counting as busy (running task code): the concurrency level rises.
    Busy,
    /// The thread stops counting as busy.
    Idle,
    /// The thread took a job from another thread's queue (`from` is that thread's track index)
    /// or from the pool's shared injector (`None`).
    Steal {
        /// The victim's track index.
        from: Option<u32>,
    },
    /// The thread announced a fork: it pushed one while another thread had to be told (woken,
    /// or waiting for it), or while the pool was over its limit (`Stats::shared`). Every fork
    /// is stealable; only these took the push's slow path.
    Share,
    /// This thread woke another; the woken thread's `End` carries the same `flow`.
    Wake {
        /// Pairs this wake-up with the woken thread's end of sleep.
        flow: u64,
    },
    /// Tasks completed, added to the pool's count (as [`Stats::tasks`](crate::Stats::tasks) is).
    Tasks {
        /// How many.
        n: u64,
    },
    /// The concurrency limit changed to `k` (recorded on the pool track).
    Limit {
        /// The new limit.
        k: u32,
    },
    /// The adaptive controller decided (pool track).
    Controller {
        /// Its choice.
        k: u32,
        /// Why.
        reason: Reason,
    },
    /// The pool acquired a jobserver token (pool track); `held` counts tokens now held.
    TokenAcquire {
        /// Tokens held after the acquisition.
        held: u32,
    },
    /// The pool gave a jobserver token back (pool track).
    TokenRelease {
        /// Tokens held after the release.
        held: u32,
    },
}

/// One event: when (nanoseconds since the recording started) and what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// Nanoseconds since the recording started.
    pub at_ns: u64,
    /// What happened.
    pub kind: EventKind,
}

/// What a track's thread is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A worker thread of the pool (or of a baseline scheduler).
    Worker,
    /// A thread calling into the pool from outside (e.g. the main thread).
    Caller,
    /// Pool-wide events not tied to one of the pool's threads: limit changes, controller
    /// decisions, jobserver tokens, and wake-ups by threads without a track.
    Pool,
}

/// One thread's events, in time order.
#[derive(Debug, Clone, PartialEq)]
pub struct Track {
    /// The thread's name (a worker's thread name, `caller N`, or `pool`).
    pub name: String,
    /// What kind of thread.
    pub role: Role,
    /// The events, oldest first.
    pub events: Vec<Event>,
    /// Events this thread could not record because its ring was full.
    pub dropped: u64,
}

/// A matched span: `[begin_ns, end_ns)` of one [`Span`] on one track.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpanRecord {
    /// Which span.
    pub span: Span,
    /// Start, nanoseconds since the recording started (0 if it began before).
    pub begin_ns: u64,
    /// End (the trace's end if it had not ended).
    pub end_ns: u64,
    /// Nesting depth on its track (0 = outermost).
    pub depth: usize,
    /// The call site, an index into [`Trace::sites`].
    pub site: Option<u32>,
    /// The wake-up that ended it, if any.
    pub flow: Option<u64>,
}

/// A recording: what every thread did between `start_trace` and `stop_trace`.
///
/// # Examples
/// ```
/// let pool = throttle::Pool::new(2).unwrap();
/// pool.start_trace();
/// pool.for_range(0..1_000, |i| { std::hint::black_box(i); });
/// let trace = pool.stop_trace();
/// assert_eq!(trace.dropped(), 0);
/// let level = trace.concurrency();
/// assert!(level.iter().all(|&(_, n)| n <= 3));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// Which scheduler recorded it (`throttle` for the pool).
    pub scheduler: String,
    /// Length of the recording.
    pub duration: Duration,
    /// The ring size per thread, in events.
    pub capacity: usize,
    /// The concurrency limit when the recording started (`None` for schedulers without one).
    pub initial_limit: Option<u32>,
    /// Call sites (`file:line:column`), indexed by [`EventKind::Begin::site`].
    pub sites: Vec<String>,
    tracks: Vec<Track>,
}

impl Trace {
    /// A trace from its parts (for [`Recorder`](super::Recorder) and tests). Events of each track are sorted by
    /// time.
    ///
    /// # Examples
    /// ```
    /// use throttle::trace::{Trace, Track, Role};
    /// let t = Trace::new("none", std::time::Duration::ZERO, vec![]);
    /// assert!(t.tracks().is_empty());
    /// ```
    pub fn new(scheduler: &str, duration: Duration, mut tracks: Vec<Track>) -> Trace {
        for t in &mut tracks {
            t.events.sort_by_key(|e| e.at_ns);
        }
        Trace {
            scheduler: scheduler.to_string(),
            duration,
            capacity: 0,
            initial_limit: None,
            sites: Vec::new(),
            tracks,
        }
    }

    /// The tracks: workers first (track `i` is worker `i`), then callers, then the pool track.
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::new(2).unwrap();
    /// pool.start_trace();
    /// pool.for_range(0..1_000, |i| { std::hint::black_box(i); });
    /// let trace = pool.stop_trace();
    /// assert_eq!(trace.tracks().last().unwrap().role, throttle::trace::Role::Pool);
    /// ```
    pub fn tracks(&self) -> &[Track] {
        &self.tracks
    }

    /// The recording's length in nanoseconds.
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::new(2).unwrap();
    /// pool.start_trace();
    /// pool.for_range(0..1_000, |i| { std::hint::black_box(i); });
    /// let trace = pool.stop_trace();
    /// assert_eq!(trace.duration_ns(), trace.duration.as_nanos() as u64);
    /// ```
    pub fn duration_ns(&self) -> u64 {
        self.duration.as_nanos() as u64
    }

    /// Events dropped over all tracks because a ring was full.
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::new(2).unwrap();
    /// pool.start_trace();
    /// pool.for_range(0..1_000, |i| { std::hint::black_box(i); });
    /// let trace = pool.stop_trace();
    /// assert_eq!(trace.dropped(), 0); // 65 536 events per thread are plenty here
    /// ```
    pub fn dropped(&self) -> u64 {
        self.tracks.iter().map(|t| t.dropped).sum()
    }

    /// How many events over all tracks satisfy `pred`.
    ///
    /// # Examples
    /// ```
    /// use throttle::trace::EventKind;
    /// let pool = throttle::Pool::new(2).unwrap();
    /// pool.start_trace();
    /// pool.join(|| 1, || 2);
    /// let trace = pool.stop_trace();
    /// let steals = trace.count(|k| matches!(k, EventKind::Steal { .. }));
    /// assert!(steals <= 1);
    /// ```
    pub fn count(&self, pred: impl Fn(&EventKind) -> bool) -> u64 {
        self.tracks
            .iter()
            .flat_map(|t| &t.events)
            .filter(|e| pred(&e.kind))
            .count() as u64
    }

    /// Tasks completed during the recording, as the pool counts them ([`EventKind::Tasks`]).
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::new(2).unwrap();
    /// pool.start_trace();
    /// let before = pool.stats();
    /// pool.join(|| 1, || 2);
    /// let tasks = pool.stats().since(&before).tasks;
    /// assert_eq!(pool.stop_trace().tasks(), tasks);
    /// ```
    pub fn tasks(&self) -> u64 {
        self.tracks
            .iter()
            .flat_map(|t| &t.events)
            .map(|e| match e.kind {
                EventKind::Tasks { n } => n,
                _ => 0,
            })
            .sum()
    }

    /// The matched spans of track `track`, in order of their begin. An end without its begin
    /// (the span began before the recording) starts at 0; a begin without its end (still open
    /// at the end, or its end was dropped) ends at the trace's end.
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::new(1).unwrap();
    /// pool.start_trace();
    /// pool.install(|| ());
    /// let trace = pool.stop_trace();
    /// let caller = trace.tracks().iter().position(|t| t.name.starts_with("caller")).unwrap();
    /// let spans = trace.spans(caller);
    /// assert!(spans.iter().any(|s| s.span == throttle::trace::Span::Call));
    /// ```
    pub fn spans(&self, track: usize) -> Vec<SpanRecord> {
        let end = self.duration_ns();
        let mut out: Vec<SpanRecord> = Vec::new();
        let mut open: Vec<usize> = Vec::new(); // indices into `out`
        for e in &self.tracks[track].events {
            match e.kind {
                EventKind::Begin { span, site } => {
                    open.push(out.len());
                    out.push(SpanRecord {
                        span,
                        begin_ns: e.at_ns,
                        end_ns: end,
                        depth: open.len() - 1,
                        site,
                        flow: None,
                    });
                }
                EventKind::End { span, flow } => {
                    if let Some(pos) = open.iter().rposition(|&i| out[i].span == span) {
                        // Spans opened inside it and never closed (their end was dropped)
                        // close with it.
                        for &i in &open[pos..] {
                            out[i].end_ns = e.at_ns;
                        }
                        out[open[pos]].flow = flow;
                        open.truncate(pos);
                    } else if open.is_empty() {
                        // Began before the recording: the outermost span from the start.
                        for r in out.iter_mut() {
                            r.depth += 1;
                        }
                        out.insert(
                            0,
                            SpanRecord {
                                span,
                                begin_ns: 0,
                                end_ns: e.at_ns,
                                depth: 0,
                                site: None,
                                flow,
                            },
                        );
                    }
                }
                _ => {}
            }
        }
        out
    }

    /// The concurrency level over time: `(time_ns, busy threads from then on)` at every change,
    /// starting at time 0, from the [`EventKind::Busy`]/[`EventKind::Idle`] marks of all tracks.
    /// A thread whose first mark is `Idle` was busy when the recording started.
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::new(2).unwrap();
    /// pool.start_trace();
    /// pool.for_range(0..1_000, |i| { std::hint::black_box(i); });
    /// let trace = pool.stop_trace();
    /// let steps = trace.concurrency();
    /// assert_eq!(steps[0].0, 0);
    /// assert!(steps.windows(2).all(|w| w[0].0 < w[1].0));
    /// ```
    pub fn concurrency(&self) -> Vec<(u64, usize)> {
        let mut changes: Vec<(u64, i64)> = Vec::new();
        let mut level0 = 0i64;
        for t in &self.tracks {
            let mut busy: Option<bool> = None;
            for e in &t.events {
                let to = match e.kind {
                    EventKind::Busy => true,
                    EventKind::Idle => false,
                    _ => continue,
                };
                if busy.is_none() && !to {
                    level0 += 1;
                    busy = Some(true);
                }
                if busy != Some(to) {
                    changes.push((e.at_ns, if to { 1 } else { -1 }));
                }
                busy = Some(to);
            }
        }
        changes.sort_by_key(|c| c.0);
        let mut out = vec![(0, level0.max(0) as usize)];
        let mut level = level0;
        for (t, d) in changes {
            level += d;
            let l = level.max(0) as usize;
            match out.last_mut() {
                Some(last) if last.0 == t => last.1 = l,
                _ => out.push((t, l)),
            }
        }
        out
    }

    /// Time spent at each concurrency level `j = 0..=max`, from [`Trace::concurrency`]: the
    /// trace's counterpart of [`Stats::busy_histogram`](crate::Stats::busy_histogram).
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::new(2).unwrap();
    /// pool.start_trace();
    /// pool.for_range(0..1_000, |i| { std::hint::black_box(i); });
    /// let trace = pool.stop_trace();
    /// let total: std::time::Duration = trace.busy_histogram().iter().sum();
    /// assert!(total <= trace.duration);
    /// ```
    pub fn busy_histogram(&self) -> Vec<Duration> {
        let steps = self.concurrency();
        let max = steps.iter().map(|s| s.1).max().unwrap_or(0);
        let mut hist = vec![0u64; max + 1];
        let end = self.duration_ns();
        for (i, &(t, l)) in steps.iter().enumerate() {
            let next = steps.get(i + 1).map_or(end, |s| s.0).max(t);
            hist[l] += next.min(end).saturating_sub(t);
        }
        hist.into_iter().map(Duration::from_nanos).collect()
    }

    /// The mean concurrency level over the recording.
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::new(2).unwrap();
    /// pool.start_trace();
    /// pool.for_range(0..1_000, |i| { std::hint::black_box(i); });
    /// let trace = pool.stop_trace();
    /// assert!((0.0..=3.0).contains(&trace.average_concurrency()));
    /// ```
    pub fn average_concurrency(&self) -> f64 {
        let total = self.duration.as_secs_f64();
        if total == 0.0 {
            return 0.0;
        }
        self.busy_histogram()
            .iter()
            .enumerate()
            .map(|(j, d)| j as f64 * d.as_secs_f64())
            .sum::<f64>()
            / total
    }

    /// The concurrency limit over time: `(time_ns, k)` at the start and at every change.
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::new(2).unwrap();
    /// pool.start_trace();
    /// pool.set_concurrency(1).unwrap();
    /// let limits: Vec<u32> = pool.stop_trace().limit().iter().map(|l| l.1).collect();
    /// assert_eq!(limits, [2, 1]);
    /// ```
    pub fn limit(&self) -> Vec<(u64, u32)> {
        let mut out: Vec<(u64, u32)> = self.initial_limit.map(|k| (0, k)).into_iter().collect();
        let mut changes: Vec<(u64, u32)> = self
            .tracks
            .iter()
            .flat_map(|t| &t.events)
            .filter_map(|e| match e.kind {
                EventKind::Limit { k } => Some((e.at_ns, k)),
                _ => None,
            })
            .collect();
        changes.sort_by_key(|c| c.0);
        out.extend(changes);
        out
    }

    /// Wake-ups as `(waker track, woken track, time of the wake, time the woken thread
    /// resumed)`, matched by their flow ids.
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::new(2).unwrap();
    /// pool.start_trace();
    /// pool.for_range(0..1_000, |i| { std::hint::black_box(i); });
    /// let trace = pool.stop_trace();
    /// for (waker, woken, at, resumed) in trace.wakeups() {
    ///     assert!(waker != woken && at <= resumed);
    /// }
    /// ```
    pub fn wakeups(&self) -> Vec<(usize, usize, u64, u64)> {
        let mut wakes = std::collections::HashMap::new();
        for (i, t) in self.tracks.iter().enumerate() {
            for e in &t.events {
                if let EventKind::Wake { flow } = e.kind {
                    wakes.insert(flow, (i, e.at_ns));
                }
            }
        }
        let mut out = Vec::new();
        for (j, t) in self.tracks.iter().enumerate() {
            for e in &t.events {
                if let EventKind::End {
                    flow: Some(flow), ..
                } = e.kind
                {
                    if let Some(&(i, at)) = wakes.get(&flow) {
                        out.push((i, j, at, e.at_ns));
                    }
                }
            }
        }
        out.sort_by_key(|w| w.3);
        out
    }

    pub(crate) fn with_meta(
        mut self,
        capacity: usize,
        initial_limit: Option<u32>,
        sites: Vec<String>,
    ) -> Trace {
        self.capacity = capacity;
        self.initial_limit = initial_limit;
        self.sites = sites;
        self
    }
}
