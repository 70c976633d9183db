//! Timelines of the baseline schedulers, in the same [`Trace`] form as the throttle pool's, so
//! that `throttle frames --timeline` compares schedulers as seed 002's profiler did.
//!
//! The calling thread starts a recording while the helpers are idle between frames; each helper
//! picks up its [`TrackRecorder`] the next time it looks (one relaxed load per look when no
//! recording is on). A helper records into its own ring, never under a lock.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use throttle::trace::{EventKind, Recorder, Role, Span, Trace, TrackRecorder};

/// Per scheduler: the current recording and the helpers' tracks waiting to be picked up.
#[derive(Debug, Default)]
pub(crate) struct TraceHub {
    on: AtomicBool,
    generation: AtomicU64,
    tracks: Mutex<Vec<Option<TrackRecorder>>>,
    recorder: Mutex<Option<Recorder>>,
}

/// A thread's own handle: the recording generation it holds a track of.
#[derive(Debug, Default)]
pub(crate) struct LocalTrack {
    generation: u64,
    track: Option<TrackRecorder>,
}

impl TraceHub {
    /// Starts a recording with a caller track (share 0) and one track per helper.
    pub(crate) fn start(&self, scheduler: &str, helper_name: &str, threads: usize) {
        let rec = Recorder::new(scheduler);
        let mut tracks = vec![Some(rec.track_with_role("caller", Role::Caller))];
        tracks.extend((1..threads).map(|s| Some(rec.track(&format!("{helper_name}-{s}")))));
        *self.tracks.lock().unwrap_or_else(|p| p.into_inner()) = tracks;
        *self.recorder.lock().unwrap_or_else(|p| p.into_inner()) = Some(rec);
        // Release pairs with the Acquire load in `get`: a thread that sees the new generation
        // finds its track in the list.
        self.generation.fetch_add(1, Ordering::Release);
        self.on.store(true, Ordering::Release);
    }

    /// Stops the recording and collects it.
    pub(crate) fn stop(&self) -> Option<Trace> {
        self.on.store(false, Ordering::Relaxed);
        let rec = self
            .recorder
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        rec.map(|r| r.finish())
    }

    /// The track of thread `share` (0 = the caller) while a recording is on.
    #[inline]
    pub(crate) fn get<'a>(
        &self,
        share: usize,
        local: &'a mut LocalTrack,
    ) -> Option<&'a TrackRecorder> {
        if !self.on.load(Ordering::Relaxed) {
            return None;
        }
        // Acquire: see `start`.
        let g = self.generation.load(Ordering::Acquire);
        if g != local.generation {
            local.generation = g;
            local.track = self
                .tracks
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get_mut(share)
                .and_then(Option::take);
        }
        local.track.as_ref()
    }
}

/// Records `kind` if `t` is recording.
#[inline]
pub(crate) fn rec(t: Option<&TrackRecorder>, kind: EventKind) {
    if let Some(t) = t {
        t.record(kind);
    }
}

/// Begin of `span`.
pub(crate) fn begin(span: Span) -> EventKind {
    EventKind::Begin { span, site: None }
}

/// End of `span`, ended by wake-up `flow` (0 = none).
pub(crate) fn end(span: Span, flow: u64) -> EventKind {
    EventKind::End {
        span,
        flow: (flow != 0).then_some(flow),
    }
}

/// Records a wake-up by `t` and returns its flow id (0 when not recording).
pub(crate) fn wake(t: Option<&TrackRecorder>) -> u64 {
    match t {
        Some(t) => {
            let flow = t.next_flow();
            t.record(EventKind::Wake { flow });
            flow
        }
        None => 0,
    }
}
