//! The server's record of one throttle client's tokens: the core of crash safety, kept free of
//! I/O so that an exhaustive model (below) can check every interleaving of requests, grants,
//! releases, foreign clients and a crash at any point. README.md, "Crash safety", has the proof
//! sketch this model checks.

/// What the server knows about one connected throttle client.
#[derive(Debug, Default, Clone, PartialEq, Eq, Hash)]
pub(crate) struct ClientLedger {
    /// Token bytes the server read from the fifo for this client and has not taken back.
    held: Vec<u8>,
    /// Requests not yet answered.
    pending: usize,
}

impl ClientLedger {
    /// The client asked for a token (`A`).
    pub(crate) fn request(&mut self) {
        self.pending += 1;
    }

    /// Whether the server should read a token from the fifo for this client.
    pub(crate) fn wants_token(&self) -> bool {
        self.pending > 0
    }

    /// The server read `b` from the fifo for this client. Recorded *before* the grant is sent, so
    /// from the instant the byte leaves the fifo until it is written back, it is in this ledger.
    pub(crate) fn granted(&mut self, b: u8) {
        self.pending = self.pending.saturating_sub(1);
        self.held.push(b);
    }

    /// The client gave back `b` (`R b`): true if the server must write it to the fifo. A byte the
    /// client does not hold is ignored, so a confused client cannot mint tokens.
    pub(crate) fn release(&mut self, b: u8) -> bool {
        match self.held.iter().rposition(|&h| h == b) {
            Some(i) => {
                self.held.swap_remove(i);
                true
            }
            None => false,
        }
    }

    /// Tokens held now.
    pub(crate) fn held(&self) -> usize {
        self.held.len()
    }

    /// The connection ended (EOF, error, or the server stops): every byte still held goes back.
    pub(crate) fn close(&mut self) -> Vec<u8> {
        self.pending = 0;
        std::mem::take(&mut self.held)
    }
}

#[cfg(test)]
mod model {
    //! Exhaustive model: one throttle client talking to the server through a socket (two FIFO
    //! message queues), one foreign client using the fifo directly, `TOKENS` tokens with distinct
    //! bytes, at most `REQUESTS` requests; the client may crash at any point (its view and the
    //! server's outgoing messages vanish, messages it already sent are still delivered, then
    //! EOF). Every reachable state is visited; checked: each token is in exactly one of
    //! {fifo, ledger, foreign} at all times (never lost, never duplicated), the client's view and
    //! everything in flight is covered by the ledger, and once everything has settled the fifo
    //! holds every token again.
    use super::ClientLedger;
    use std::collections::{HashSet, VecDeque};

    const TOKENS: u8 = 3;
    const REQUESTS: usize = 3;

    #[derive(Clone, PartialEq, Eq, Hash, Debug)]
    enum Msg {
        Ask,
        Release(u8),
        Grant(u8),
    }

    #[derive(Clone, PartialEq, Eq, Hash, Debug)]
    struct World {
        fifo: Vec<u8>,
        ledger: ClientLedger,
        view: Vec<u8>,
        c2s: VecDeque<Msg>,
        s2c: VecDeque<Msg>,
        alive: bool,
        closed: bool,
        asked: usize,
        foreign: Vec<u8>,
    }

    fn sorted(mut v: Vec<u8>) -> Vec<u8> {
        v.sort_unstable();
        v
    }

    fn check(w: &World) {
        let mut all = w.fifo.clone();
        all.extend(&w.ledger.held);
        all.extend(&w.foreign);
        assert_eq!(sorted(all), (0..TOKENS).collect::<Vec<_>>(), "{w:?}");
        // Everything the client has or is about to have or to give back is in the ledger.
        let mut covered = w.view.clone();
        for m in w.s2c.iter().chain(&w.c2s) {
            if let Msg::Grant(b) | Msg::Release(b) = m {
                covered.push(*b);
            }
        }
        if w.alive {
            let mut held = w.ledger.held.clone();
            for b in covered {
                let i = held
                    .iter()
                    .position(|&h| h == b)
                    .expect("covered by the ledger");
                held.swap_remove(i);
            }
        }
    }

    fn successors(w: &World) -> Vec<World> {
        let mut out = Vec::new();
        let mut push = |f: &dyn Fn(&mut World)| {
            let mut n = w.clone();
            f(&mut n);
            out.push(n);
        };
        // Foreign client takes or returns a token.
        for i in 0..w.fifo.len() {
            push(&|n| {
                let b = n.fifo.remove(i);
                n.foreign.push(b);
            });
        }
        for i in 0..w.foreign.len() {
            push(&|n| {
                let b = n.foreign.remove(i);
                n.fifo.push(b);
            });
        }
        if w.alive {
            if w.asked < REQUESTS {
                push(&|n| {
                    n.asked += 1;
                    n.c2s.push_back(Msg::Ask);
                });
            }
            if !w.s2c.is_empty() {
                push(&|n| {
                    if let Some(Msg::Grant(b)) = n.s2c.pop_front() {
                        n.view.push(b);
                    }
                });
            }
            for i in 0..w.view.len() {
                push(&|n| {
                    let b = n.view.remove(i);
                    n.c2s.push_back(Msg::Release(b));
                });
            }
            // SIGKILL: the process's memory and unread input vanish; its output stays queued.
            push(&|n| {
                n.alive = false;
                n.view.clear();
                n.s2c.clear();
            });
        }
        if !w.closed {
            if !w.c2s.is_empty() {
                push(&|n| match n.c2s.pop_front() {
                    Some(Msg::Ask) => n.ledger.request(),
                    Some(Msg::Release(b)) => {
                        if n.ledger.release(b) {
                            n.fifo.push(b);
                        }
                    }
                    _ => unreachable!(),
                });
            } else if !w.alive {
                // EOF after the last message.
                push(&|n| {
                    let back = n.ledger.close();
                    n.fifo.extend(back);
                    n.closed = true;
                });
            }
            if w.ledger.wants_token() {
                for i in 0..w.fifo.len() {
                    push(&|n| {
                        let b = n.fifo.remove(i);
                        n.ledger.granted(b);
                        if n.alive {
                            n.s2c.push_back(Msg::Grant(b));
                        } else {
                            // The send fails: the connection is dead; close it.
                            let back = n.ledger.close();
                            n.fifo.extend(back);
                            n.closed = true;
                        }
                    });
                }
            }
        }
        out
    }

    #[test]
    fn no_token_is_lost_or_duplicated_in_any_interleaving() {
        let start = World {
            fifo: (0..TOKENS).collect(),
            ledger: ClientLedger::default(),
            view: vec![],
            c2s: VecDeque::new(),
            s2c: VecDeque::new(),
            alive: true,
            closed: false,
            asked: 0,
            foreign: vec![],
        };
        let mut seen = HashSet::new();
        let mut stack = vec![start];
        let mut settled = 0;
        while let Some(w) = stack.pop() {
            if !seen.insert(w.clone()) {
                continue;
            }
            check(&w);
            if w.closed && w.foreign.is_empty() {
                assert_eq!(sorted(w.fifo.clone()), (0..TOKENS).collect::<Vec<_>>());
                settled += 1;
            }
            stack.extend(successors(&w));
        }
        assert!(settled > 0);
        assert!(seen.len() > 1000, "explored only {} states", seen.len());
    }

    #[test]
    fn a_release_of_a_byte_not_held_mints_nothing() {
        let mut l = ClientLedger::default();
        l.request();
        l.granted(b'+');
        assert!(!l.release(b'x'));
        assert!(l.release(b'+'));
        assert!(!l.release(b'+'));
        assert!(l.close().is_empty());
    }
}
