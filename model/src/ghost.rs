//! Full mode's ghost data: small counters and flags, updated on every step, from which every
//! clause of the theorem can be judged on the current state alone (no per-path history).
//!
//! Each counter mirrors a quantity of the trace checker's literal replay (see
//! `chandy_lamport::verify`), so full and literal modes reach the same verdicts. For snapshot
//! `s`, a message is *pre-cut* when sent before its sender recorded `s` (its tag bit `s` is
//! clear); a receipt is pre-cut when its receiver had not recorded `s`; a theft counts with its
//! message. Counters start when `s` is first initiated (before that every cart is pre-cut and
//! nothing needs remembering), and the replay counters are dropped once `s` completes.

use crate::state::State;

/// Per-snapshot ghost data.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct SnapGhost {
    /// The snapshot has been initiated somewhere.
    pub active: bool,
    /// (a) A cart sent after its sender recorded was received before its receiver recorded.
    pub crossed: bool,
    /// (c) A pre-cut receipt took a cart that was not the first cart of its channel.
    pub prefifo: bool,
    /// (d) Set at completion: replaying the post-cut steps from the recorded state fails.
    pub end_bad: bool,
    /// Deficit and trade-over at S_begin (when first initiated).
    pub y_begin: [bool; 2],
    /// Deficit and trade-over at S_end (when the last record closed).
    pub y_end: [bool; 2],
    /// Jars stolen from pre-cut carts (the theft counts as before the cut).
    pub stolen_pre: u8,
    /// (b) Per channel: carts in flight at the cut = pre-cut sends − pre-cut receipts of
    /// pre-cut carts − thefts of pre-cut carts.
    pub in_flight: Vec<i8>,
    /// (d) Per channel: pre-cut sends − pre-cut receipts (of any cart) − thefts of pre-cut
    /// carts; the literal replay from S* differs from the real channel by `record − replay`.
    pub replay: Vec<i8>,
    /// (d) Per channel: the least `carts − replay` seen at a post-cut receipt or theft before
    /// completion (`i8::MAX` when none): the replay from S* finds a cart there iff
    /// `record + min_slack ≥ 1`.
    pub min_slack: Vec<i8>,
    /// Budget of each house when it recorded (trade-over at S* needs it).
    pub rec_budget: Vec<u8>,
}

/// Ghost data of every snapshot id.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ghost {
    /// Indexed by snapshot id.
    pub snaps: Vec<SnapGhost>,
}

/// Index of the deficit predicate in `y_begin`/`y_end`.
pub const DEFICIT: usize = 0;
/// Index of the trade-over predicate in `y_begin`/`y_end`.
pub const TRADE_OVER: usize = 1;

impl Ghost {
    /// Ghost data for `snapshots` ids.
    pub fn new(snapshots: usize) -> Self {
        Ghost { snaps: vec![SnapGhost::default(); snapshots] }
    }

    /// Before the first initiation of `s`: start its counters from the channels' contents.
    pub fn activate(&mut self, s: usize, state: &State, initial_total: u64) {
        let g = &mut self.snaps[s];
        if g.active {
            return;
        }
        g.active = true;
        g.in_flight = (0..state.chans.len()).map(|c| state.carts(c) as i8).collect();
        g.replay = g.in_flight.clone();
        g.min_slack = vec![i8::MAX; state.chans.len()];
        g.rec_budget = vec![0; state.procs.len()];
        // Everything stolen so far was stolen before any cut.
        g.stolen_pre = initial_total.saturating_sub(state.jars_accounted()) as u8;
        g.y_begin = [state.jars_accounted() < initial_total, state.trade_over()];
    }

    /// A cart with `tag` sent on `channel` by a house that had or had not recorded each
    /// snapshot (tag bit).
    pub fn on_send(&mut self, channel: usize, tag: u32) {
        for (s, g) in self.snaps.iter_mut().enumerate().filter(|(_, g)| g.active) {
            if tag & (1 << s) == 0 {
                g.in_flight[channel] += 1;
                g.replay[channel] += 1;
            }
        }
    }

    /// A cart with `tag` at `index` of `channel` is about to be received by a house that had
    /// recorded the snapshots in `recorded` (bit set); `done` marks snapshots already complete.
    pub fn on_receive(&mut self, state: &State, channel: usize, index: usize, tag: u32, recorded: u32, done: u32) {
        let carts = state.carts(channel) as i8;
        let ahead = state.chans.get(channel)[..index].iter().any(|p| p.is_app());
        for (s, g) in self.snaps.iter_mut().enumerate().filter(|(_, g)| g.active) {
            let bit = 1 << s;
            if recorded & bit == 0 {
                // Pre-cut receipt.
                if tag & bit != 0 {
                    g.crossed = true;
                } else {
                    g.in_flight[channel] -= 1;
                }
                g.replay[channel] -= 1;
                g.prefifo |= ahead;
            } else if done & bit == 0 {
                g.min_slack[channel] = g.min_slack[channel].min(carts - g.replay[channel]);
            }
        }
    }

    /// A cart with `tag` stolen from `channel`, which held `carts` carts before the theft.
    pub fn on_theft(&mut self, channel: usize, carts: usize, tag: u32, jars: u32, done: u32) {
        for (s, g) in self.snaps.iter_mut().enumerate().filter(|(_, g)| g.active) {
            let bit = 1 << s;
            if tag & bit == 0 {
                g.in_flight[channel] -= 1;
                g.replay[channel] -= 1;
                g.stolen_pre = g.stolen_pre.saturating_add(jars as u8);
            } else if done & bit == 0 {
                g.min_slack[channel] = g.min_slack[channel].min(carts as i8 - g.replay[channel]);
            }
        }
    }

    /// `house` recorded snapshot `s` with `budget` actions left.
    pub fn on_record(&mut self, s: usize, house: usize, budget: u8) {
        if let Some(g) = self.snaps.get_mut(s).filter(|g| g.active) {
            g.rec_budget[house] = budget;
        }
    }

    /// Snapshot `s` just completed; `records[c]` is the final record length of channel `c`.
    pub fn on_complete(&mut self, s: usize, state: &State, records: &[usize], initial_total: u64) {
        let g = &mut self.snaps[s];
        g.end_bad = records.iter().enumerate().any(|(c, &r)| {
            let r = r as i16;
            r != i16::from(g.replay[c]) || (g.min_slack[c] != i8::MAX && r + i16::from(g.min_slack[c]) < 1)
        });
        g.y_end = [state.jars_accounted() < initial_total, state.trade_over()];
        // No longer needed: forget them so that states differing only there merge.
        g.replay.iter_mut().for_each(|x| *x = 0);
        g.min_slack.iter_mut().for_each(|x| *x = 0);
    }
}
