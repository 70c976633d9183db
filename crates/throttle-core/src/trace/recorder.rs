//! Who writes the rings: the pool's [`Tracer`] (one ring per worker, a few for outside callers,
//! a locked list for rare pool-wide events) and the public [`Recorder`] for other schedulers.

use super::codec::{unpack, word0};
use super::model::{Event, EventKind, Role, Trace, Track};
use super::ring::{Mark, Ring};
use crate::sync::{lock, AtomicBool, AtomicU64, Mutex, Ordering};
use crossbeam_utils::CachePadded;
use std::marker::PhantomData;
use std::panic::Location;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// Events each thread's ring holds per recording: 65 536. At 16 bytes an event that is 1 MiB per
/// thread, allocated at the first `start_trace` and kept for the pool's life. The busiest thread
/// of `throttle frames` (the default 60 frames) writes about 20 000 events, so the default holds a
/// whole run with room to spare; a longer recording keeps its first 65 536 events per thread
/// and counts the rest as dropped. [`PoolBuilder::trace_capacity`](crate::PoolBuilder::trace_capacity)
/// changes it.
pub const DEFAULT_CAPACITY: usize = 1 << 16;

/// Rings for callers from outside the pool: this many outside threads can be recorded at once;
/// a further concurrent caller's events are counted as dropped (on the pool track). Eight covers
/// the usual one main thread plus a few threads of the user's own.
const CALLER_RINGS: usize = 8;

/// Which ring a participant writes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TraceSlot {
    /// Not recorded (an outside caller that started while recording was off, or found no free
    /// caller ring).
    None,
    /// Worker `i`'s ring.
    Worker(usize),
    /// Caller ring `i` (claimed for the participant's life).
    Caller(usize),
}

#[derive(Debug)]
struct CallerRing {
    ring: Ring,
    claimed: AtomicBool,
}

/// One recording session's starting points.
#[derive(Debug)]
struct Session {
    start_ns: u64,
    workers: Vec<Mark>,
    callers: Vec<Mark>,
    initial_limit: u32,
}

/// The pool's recorder. Lives in `Sleep` (so that the wakers there can reach it) and is
/// reached through `Registry::trace`.
#[derive(Debug)]
pub(crate) struct Tracer {
    /// Recording on? One relaxed load per event site; padded because every announced fork
    /// reads it and nothing but start/stop writes it.
    on: CachePadded<AtomicBool>,
    epoch: Instant,
    workers: Box<[Ring]>,
    names: OnceLock<Vec<String>>,
    callers: Box<[CallerRing]>,
    /// Pool-wide events (limit, controller, tokens, wakers without a ring): rare, so a lock.
    pool: Mutex<Vec<Event>>,
    /// Events of callers that found no free caller ring, and pool events over capacity.
    unrecorded: AtomicU64,
    flows: AtomicU64,
    sites: Mutex<Vec<&'static Location<'static>>>,
    session: Mutex<Option<Session>>,
    capacity: usize,
}

impl Tracer {
    /// A tracer for `threads` workers with rings of `capacity` events.
    pub(crate) fn new(threads: usize, capacity: usize) -> Tracer {
        Tracer {
            on: CachePadded::new(AtomicBool::new(false)),
            epoch: Instant::now(),
            workers: (0..threads).map(|_| Ring::new(capacity)).collect(),
            names: OnceLock::new(),
            callers: (0..CALLER_RINGS)
                .map(|_| CallerRing {
                    ring: Ring::new(capacity),
                    claimed: AtomicBool::new(false),
                })
                .collect(),
            pool: Mutex::new(Vec::new()),
            unrecorded: AtomicU64::new(0),
            flows: AtomicU64::new(0),
            sites: Mutex::new(Vec::new()),
            session: Mutex::new(None),
            capacity: capacity.max(1),
        }
    }

    /// The workers' thread names (set once at build).
    pub(crate) fn set_names(&self, names: Vec<String>) {
        let _ = self.names.set(names);
    }

    /// Is a recording on? A relaxed hint: an event recorded just after a stop is simply not
    /// part of that recording.
    #[inline(always)]
    pub(crate) fn on(&self) -> bool {
        self.on.load(Ordering::Relaxed)
    }

    fn ns(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.epoch).as_nanos() as u64
    }

    /// Records `kind` at `at` in `slot`'s ring. Call only from the thread that owns the slot.
    #[inline]
    pub(crate) fn record_at(&self, slot: TraceSlot, at: Instant, kind: EventKind) {
        let ring = match slot {
            TraceSlot::Worker(i) => &self.workers[i],
            TraceSlot::Caller(i) => &self.callers[i].ring,
            TraceSlot::None => return,
        };
        let (code, payload) = kind.encode();
        ring.push(word0(self.ns(at), code), payload);
    }

    /// Records a pool-wide event (under a lock: these are rare).
    pub(crate) fn record_pool(&self, kind: EventKind) {
        if !self.on() {
            return;
        }
        let at_ns = self.ns(Instant::now());
        let mut pool = lock(&self.pool);
        if pool.len() < self.capacity {
            pool.push(Event { at_ns, kind });
        } else {
            self.unrecorded.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A caller ring for an outside participant, if recording is on and one is free.
    pub(crate) fn claim_caller(&self) -> TraceSlot {
        if !self.on() {
            return TraceSlot::None;
        }
        for (i, c) in self.callers.iter().enumerate() {
            // Acquire pairs with the Release in `release_caller`: the previous owner's writes
            // to the ring (its `head`) happen-before ours.
            if c.claimed
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                // The first claim of this ring allocates it (once per pool).
                c.ring.allocate();
                return TraceSlot::Caller(i);
            }
        }
        self.unrecorded.fetch_add(1, Ordering::Relaxed);
        TraceSlot::None
    }

    /// Gives a caller ring back (the participant is done).
    pub(crate) fn release_caller(&self, slot: TraceSlot) {
        if let TraceSlot::Caller(i) = slot {
            // Release: see `claim_caller`.
            self.callers[i].claimed.store(false, Ordering::Release);
        }
    }

    /// A new flow id for a wake-up (only while recording).
    pub(crate) fn next_flow(&self) -> u64 {
        self.flows.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// The index of a call site in this tracer's table (only while recording).
    pub(crate) fn site(&self, loc: &'static Location<'static>) -> u32 {
        let mut sites = lock(&self.sites);
        match sites.iter().position(|l| std::ptr::eq(*l, loc)) {
            Some(i) => i as u32,
            None => {
                sites.push(loc);
                (sites.len() - 1) as u32
            }
        }
    }

    /// Starts a recording (ends a running one first, discarding it). `limit` is the current
    /// concurrency limit.
    pub(crate) fn start(&self, limit: usize) {
        let mut session = lock(&self.session);
        self.on.store(false, Ordering::Relaxed);
        lock(&self.pool).clear();
        // Workers' rings now (a caller's when it claims one), before the clock starts.
        for r in self.workers.iter() {
            r.allocate();
        }
        let start_ns = self.ns(Instant::now());
        *session = Some(Session {
            start_ns,
            workers: self.workers.iter().map(Ring::begin).collect(),
            callers: self.callers.iter().map(|c| c.ring.begin()).collect(),
            initial_limit: limit as u32,
        });
        self.unrecorded.store(0, Ordering::Relaxed);
        // Relaxed: a thread that sees the flag late records a little later; the rings' own
        // Release/Acquire pairs order each event's words (README.md).
        self.on.store(true, Ordering::Relaxed);
    }

    /// Stops the recording and collects it. Without a running recording, an empty trace.
    pub(crate) fn stop(&self) -> Trace {
        let mut session = lock(&self.session);
        self.on.store(false, Ordering::Relaxed);
        let now = self.ns(Instant::now());
        let Some(s) = session.take() else {
            return Trace::new("throttle", Duration::ZERO, Vec::new());
        };
        let rebase = |events: Vec<[u64; 2]>| -> Vec<Event> {
            events
                .into_iter()
                .filter_map(unpack)
                // A straggler that checked the flag during an earlier recording may have
                // written an event older than this one's start.
                .filter(|e| e.at_ns >= s.start_ns && e.at_ns <= now)
                .map(|e| Event {
                    at_ns: e.at_ns - s.start_ns,
                    kind: e.kind,
                })
                .collect()
        };
        let names = self.names.get();
        let mut tracks = Vec::new();
        for (i, (ring, mark)) in self.workers.iter().zip(&s.workers).enumerate() {
            let (events, dropped) = ring.collect(*mark);
            tracks.push(Track {
                name: names
                    .and_then(|n| n.get(i).cloned())
                    .unwrap_or_else(|| format!("worker {i}")),
                role: Role::Worker,
                events: rebase(events),
                dropped,
            });
        }
        for (i, (c, mark)) in self.callers.iter().zip(&s.callers).enumerate() {
            let (events, dropped) = c.ring.collect(*mark);
            if events.is_empty() && dropped == 0 {
                continue;
            }
            tracks.push(Track {
                name: format!("caller {i}"),
                role: Role::Caller,
                events: rebase(events),
                dropped,
            });
        }
        let pool: Vec<Event> = std::mem::take(&mut *lock(&self.pool))
            .into_iter()
            .filter(|e| e.at_ns >= s.start_ns)
            .map(|e| Event {
                at_ns: e.at_ns - s.start_ns,
                kind: e.kind,
            })
            .collect();
        tracks.push(Track {
            name: "pool".into(),
            role: Role::Pool,
            events: pool,
            dropped: self.unrecorded.load(Ordering::Relaxed),
        });
        let sites = lock(&self.sites)
            .iter()
            .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()))
            .collect();
        Trace::new("throttle", Duration::from_nanos(now - s.start_ns), tracks).with_meta(
            self.capacity,
            Some(s.initial_limit),
            sites,
        )
    }
}

/// Records the timeline of another scheduler (a baseline) in the same [`Trace`] form as the
/// pool: each thread gets a [`TrackRecorder`] with its own ring (no lock per event).
///
/// # Examples
/// ```
/// use throttle::trace::{EventKind, Recorder, Span};
/// let rec = Recorder::new("my-scheduler");
/// let worker = rec.track("worker 0");
/// std::thread::scope(|s| {
///     s.spawn(move || {
///         worker.record(EventKind::Begin { span: Span::Run, site: None });
///         worker.record(EventKind::End { span: Span::Run, flow: None });
///     });
/// });
/// let trace = rec.finish();
/// assert_eq!(trace.scheduler, "my-scheduler");
/// assert_eq!(trace.spans(0).len(), 1);
/// ```
#[derive(Debug, Clone)]
pub struct Recorder {
    inner: Arc<RecorderInner>,
}

/// A [`Recorder`] track: name, role, ring, and where its recording started.
type RecordedTrack = (String, Role, Arc<Ring>, Mark);

#[derive(Debug)]
struct RecorderInner {
    scheduler: String,
    epoch: Instant,
    capacity: usize,
    tracks: std::sync::Mutex<Vec<RecordedTrack>>,
    flows: std::sync::atomic::AtomicU64,
}

impl Recorder {
    /// A recorder with rings of [`DEFAULT_CAPACITY`] events per thread.
    ///
    /// # Examples
    /// ```
    /// let rec = throttle::trace::Recorder::new("baseline");
    /// assert_eq!(rec.finish().tracks().len(), 0);
    /// ```
    pub fn new(scheduler: &str) -> Recorder {
        Recorder::with_capacity(scheduler, DEFAULT_CAPACITY)
    }

    /// A recorder with rings of `capacity` events per thread.
    ///
    /// # Examples
    /// ```
    /// use throttle::trace::{EventKind, Recorder};
    /// let rec = Recorder::with_capacity("tiny", 2);
    /// let t = rec.track("t");
    /// for _ in 0..5 { t.record(EventKind::Share); }
    /// assert_eq!(rec.finish().dropped(), 3);
    /// ```
    pub fn with_capacity(scheduler: &str, capacity: usize) -> Recorder {
        Recorder {
            inner: Arc::new(RecorderInner {
                scheduler: scheduler.to_string(),
                epoch: Instant::now(),
                capacity: capacity.max(1),
                tracks: std::sync::Mutex::new(Vec::new()),
                flows: std::sync::atomic::AtomicU64::new(0),
            }),
        }
    }

    /// A new worker track named `name`; its index in the trace is the number of tracks made
    /// before it. Move it to the thread it describes.
    ///
    /// # Examples
    /// ```
    /// let rec = throttle::trace::Recorder::new("x");
    /// let (a, b) = (rec.track("a"), rec.track("b"));
    /// assert_eq!((a.index(), b.index()), (0, 1));
    /// ```
    pub fn track(&self, name: &str) -> TrackRecorder {
        self.track_with_role(name, Role::Worker)
    }

    /// A new track of the given role (e.g. [`Role::Caller`] for the thread that submits work).
    ///
    /// # Examples
    /// ```
    /// use throttle::trace::{Recorder, Role};
    /// let rec = Recorder::new("x");
    /// let main = rec.track_with_role("main", Role::Caller);
    /// assert_eq!(main.index(), 0);
    /// ```
    pub fn track_with_role(&self, name: &str, role: Role) -> TrackRecorder {
        let ring = Arc::new(Ring::new(self.inner.capacity));
        ring.allocate();
        let mark = ring.begin();
        let mut tracks = self.inner.tracks.lock().unwrap_or_else(|p| p.into_inner());
        let index = tracks.len() as u32;
        tracks.push((name.to_string(), role, ring.clone(), mark));
        TrackRecorder {
            ring,
            epoch: self.inner.epoch,
            index,
            flows: self.inner.clone(),
            _not_sync: PhantomData,
        }
    }

    /// Collects every track's events so far (threads may still be writing; their later events
    /// are not included).
    ///
    /// # Examples
    /// ```
    /// use throttle::trace::{EventKind, Recorder};
    /// let rec = Recorder::new("x");
    /// let t = rec.track("w");
    /// t.record(EventKind::Busy);
    /// t.record(EventKind::Idle);
    /// assert!(rec.finish().concurrency().len() >= 2);
    /// ```
    pub fn finish(&self) -> Trace {
        let duration = self.inner.epoch.elapsed();
        let tracks = self.inner.tracks.lock().unwrap_or_else(|p| p.into_inner());
        let out = tracks
            .iter()
            .map(|(name, role, ring, mark)| {
                let (events, dropped) = ring.collect(*mark);
                Track {
                    name: name.clone(),
                    role: *role,
                    events: events.into_iter().filter_map(unpack).collect(),
                    dropped,
                }
            })
            .collect();
        Trace::new(&self.inner.scheduler, duration, out).with_meta(
            self.inner.capacity,
            None,
            Vec::new(),
        )
    }
}

/// One thread's handle of a [`Recorder`]: records into that thread's ring. `Send` (move it to
/// its thread) but not `Sync` or `Clone`: a ring has one writer.
#[derive(Debug)]
pub struct TrackRecorder {
    ring: Arc<Ring>,
    epoch: Instant,
    index: u32,
    flows: Arc<RecorderInner>,
    _not_sync: PhantomData<std::cell::Cell<()>>,
}

impl TrackRecorder {
    /// Records `kind` now.
    ///
    /// # Examples
    /// ```
    /// use throttle::trace::{EventKind, Recorder};
    /// let rec = Recorder::new("x");
    /// let t = rec.track("w");
    /// t.record(EventKind::Busy);
    /// assert_eq!(rec.finish().tracks()[0].events.len(), 1);
    /// ```
    #[inline]
    pub fn record(&self, kind: EventKind) {
        let (code, payload) = kind.encode();
        let at = Instant::now().saturating_duration_since(self.epoch);
        self.ring.push(word0(at.as_nanos() as u64, code), payload);
    }

    /// This track's index in the trace (what [`EventKind::Steal::from`] refers to).
    ///
    /// # Examples
    /// ```
    /// let rec = throttle::trace::Recorder::new("x");
    /// assert_eq!(rec.track("first").index(), 0);
    /// ```
    pub fn index(&self) -> u32 {
        self.index
    }

    /// A fresh flow id to pair a [`EventKind::Wake`] with the woken thread's
    /// [`EventKind::End`].
    ///
    /// # Examples
    /// ```
    /// let rec = throttle::trace::Recorder::new("x");
    /// let t = rec.track("w");
    /// assert_ne!(t.next_flow(), t.next_flow());
    /// ```
    pub fn next_flow(&self) -> u64 {
        self.flows
            .flows
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            + 1
    }
}
