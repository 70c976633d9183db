//! How an event is stored in a ring: two words, `[time_ns << 8 | code, payload]`.

use super::model::{Event, EventKind, Span};
use throttle_controller::Reason;

const BEGIN: u8 = 0;
const END: u8 = 8;
const BUSY: u8 = 16;
const IDLE: u8 = 17;
const STEAL: u8 = 18;
const SHARE: u8 = 19;
const WAKE: u8 = 20;
const TASKS: u8 = 21;
const LIMIT: u8 = 22;
const CONTROLLER: u8 = 23;
const TOKEN_ACQUIRE: u8 = 24;
const TOKEN_RELEASE: u8 = 25;

const REASONS: [Reason; 11] = [
    Reason::Scan,
    Reason::Fit,
    Reason::Verified,
    Reason::BestMeasured,
    Reason::Hold,
    Reason::Idle,
    Reason::ThroughputShift,
    Reason::LoadShift,
    Reason::IdleBest,
    Reason::Challenge,
    Reason::Challenged,
];

impl EventKind {
    /// The (code, payload) pair stored in a ring. Optional numbers are stored plus one, so
    /// that 0 means none.
    pub(crate) fn encode(self) -> (u8, u64) {
        let opt = |v: Option<u64>| v.map_or(0, |v| v + 1);
        match self {
            EventKind::Begin { span, site } => (BEGIN + span.code(), opt(site.map(u64::from))),
            EventKind::End { span, flow } => (END + span.code(), opt(flow)),
            EventKind::Busy => (BUSY, 0),
            EventKind::Idle => (IDLE, 0),
            EventKind::Steal { from } => (STEAL, opt(from.map(u64::from))),
            EventKind::Share => (SHARE, 0),
            EventKind::Wake { flow } => (WAKE, flow),
            EventKind::Tasks { n } => (TASKS, n),
            EventKind::Limit { k } => (LIMIT, u64::from(k)),
            EventKind::Controller { k, reason } => {
                let r = REASONS.iter().position(|x| *x == reason).unwrap_or(0) as u64;
                (CONTROLLER, u64::from(k) | r << 32)
            }
            EventKind::TokenAcquire { held } => (TOKEN_ACQUIRE, u64::from(held)),
            EventKind::TokenRelease { held } => (TOKEN_RELEASE, u64::from(held)),
        }
    }

    pub(crate) fn decode(code: u8, payload: u64) -> Option<EventKind> {
        let opt = |v: u64| v.checked_sub(1);
        let opt32 = |v: u64| v.checked_sub(1).map(|v| v as u32);
        Some(match code {
            c if c < BEGIN + 6 => EventKind::Begin {
                span: Span::ALL[usize::from(c - BEGIN)],
                site: opt32(payload),
            },
            c if (END..END + 6).contains(&c) => EventKind::End {
                span: Span::ALL[usize::from(c - END)],
                flow: opt(payload),
            },
            BUSY => EventKind::Busy,
            IDLE => EventKind::Idle,
            STEAL => EventKind::Steal {
                from: opt32(payload),
            },
            SHARE => EventKind::Share,
            WAKE => EventKind::Wake { flow: payload },
            TASKS => EventKind::Tasks { n: payload },
            LIMIT => EventKind::Limit { k: payload as u32 },
            CONTROLLER => EventKind::Controller {
                k: payload as u32,
                reason: REASONS[((payload >> 32) as usize).min(REASONS.len() - 1)],
            },
            TOKEN_ACQUIRE => EventKind::TokenAcquire {
                held: payload as u32,
            },
            TOKEN_RELEASE => EventKind::TokenRelease {
                held: payload as u32,
            },
            _ => return None,
        })
    }
}

/// Packs an event's first word: time in the high 56 bits, the code in the low 8.
pub(crate) fn word0(at_ns: u64, code: u8) -> u64 {
    (at_ns << 8) | u64::from(code)
}

/// Unpacks a ring's word pair.
pub(crate) fn unpack(w: [u64; 2]) -> Option<Event> {
    let kind = EventKind::decode((w[0] & 0xff) as u8, w[1])?;
    Some(Event {
        at_ns: w[0] >> 8,
        kind,
    })
}
