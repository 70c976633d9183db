//! The status table of `throttle budget status`: holders grouped by process, waiters in the
//! order they will be served, and slots in use / N.

use std::fmt::Write;
use throttle_budget::{Entry, Status};

/// `12 s ago`, `3 min ago`, `2 h ago` (from the holder's wall clock; clocks of other hosts may
/// disagree by their skew).
fn age(since: u64, now: u64) -> String {
    if since == 0 {
        return "?".into();
    }
    let s = now.saturating_sub(since);
    match s {
        0..=119 => format!("{s} s ago"),
        120..=7199 => format!("{} min ago", s / 60),
        _ => format!("{} h ago", s / 3600),
    }
}

/// Entries of one (host, pid), in first-seen order: (host, pid, keys, oldest since).
fn by_process(entries: &[Entry]) -> Vec<(String, u32, usize, u64)> {
    let mut out: Vec<(String, u32, usize, u64)> = Vec::new();
    for e in entries {
        match out.iter_mut().find(|p| p.0 == e.host && p.1 == e.pid) {
            Some(p) => {
                p.2 += 1;
                p.3 = p.3.min(e.since_unix);
            }
            None => out.push((e.host.clone(), e.pid, 1, e.since_unix)),
        }
    }
    out
}

/// The table as printed (`now`: seconds since the Unix epoch, for the ages).
pub fn table(s: &Status, now: u64) -> String {
    let mut rows = vec![[
        "".to_string(),
        "host".to_string(),
        "pid".to_string(),
        "slots".to_string(),
        "since".to_string(),
    ]];
    for (host, pid, n, since) in by_process(&s.holders) {
        rows.push([
            "holder".into(),
            host,
            pid.to_string(),
            n.to_string(),
            age(since, now),
        ]);
    }
    for w in &s.waiters {
        rows.push([
            "waiter".into(),
            w.host.clone(),
            w.pid.to_string(),
            "-".into(),
            age(w.since_unix, now),
        ]);
    }
    let widths: Vec<usize> = (0..5)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "budget {}: {} of {} slots in use, {} waiting",
        s.name,
        s.in_use,
        s.slots,
        s.waiters.len()
    );
    if s.holders.is_empty() && s.waiters.is_empty() {
        return out;
    }
    for r in &rows {
        let line = format!(
            "{:<w0$}  {:<w1$}  {:>w2$}  {:>w3$}  {}",
            r[0],
            r[1],
            r[2],
            r[3],
            r[4],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2],
            w3 = widths[3],
        );
        let _ = writeln!(out, "{}", line.trim_end());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(host: &str, pid: u32, since: u64) -> Entry {
        Entry {
            host: host.into(),
            pid,
            key: format!("/k/{host}-{pid}-{since}"),
            since_unix: since,
        }
    }

    #[test]
    fn holders_group_by_process_and_waiters_keep_their_order() {
        let s = Status {
            name: "db".into(),
            slots: 3,
            in_use: 3,
            holders: vec![e("h1", 10, 90), e("h2", 20, 95), e("h1", 10, 80)],
            waiters: vec![e("h3", 30, 99), e("h1", 10, 100)],
        };
        let t = table(&s, 100);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], "budget db: 3 of 3 slots in use, 2 waiting");
        assert_eq!(
            lines[1].split_whitespace().collect::<Vec<_>>(),
            ["host", "pid", "slots", "since"]
        );
        assert_eq!(
            lines[2].split_whitespace().collect::<Vec<_>>(),
            ["holder", "h1", "10", "2", "20", "s", "ago"]
        );
        assert!(lines[3].starts_with("holder") && lines[3].contains("h2"));
        assert!(lines[4].starts_with("waiter") && lines[4].contains("h3"));
        assert!(lines[5].starts_with("waiter") && lines[5].contains("0 s ago"));
        assert_eq!(lines.len(), 6);
    }

    #[test]
    fn an_empty_budget_is_one_line() {
        let s = Status {
            name: "x".into(),
            slots: 0,
            in_use: 0,
            holders: vec![],
            waiters: vec![],
        };
        assert_eq!(table(&s, 5), "budget x: 0 of 0 slots in use, 0 waiting\n");
        assert_eq!(age(0, 5), "?");
        assert_eq!(age(100, 400), "5 min ago");
        assert_eq!(age(100, 100 + 3 * 3600), "3 h ago");
    }
}
