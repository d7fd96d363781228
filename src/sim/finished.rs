//! What a finished simulation hands back, its checks, and its snapshots in `.snap` form.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::apps::spec::{accounted, Spec};
use crate::check::{unterminated, verify, VerifyError, Violation};
use crate::check::{Event, EventKind, Trace};
use crate::formats::jsonl::{write_logs, LogApp, WriteError};
use crate::formats::snap::{SnapBlock, SnapMessage};
use crate::protocol::GlobalSnapshot;
use crate::protocol::SnapshotId;
use crate::protocol::{ChannelId, ProcessId, Topology};

/// A global snapshot assembled by the simulator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimSnapshot<A: Spec> {
    /// The recorded states and channel records.
    pub global: GlobalSnapshot<A>,
    /// The channel of every recorded message, in the order they were recorded (all destinations
    /// together), so the receive order across one destination's channels is kept.
    pub arrivals: Vec<ChannelId>,
}

impl<A: Spec> SimSnapshot<A> {
    /// The snapshot as a `.snap` block: nodes in name order, then the recorded messages grouped
    /// by destination (in name order), each group in receive order. A node's balance is the
    /// conserved quantity its recorded state holds ([`Spec::held`]), a message's tokens what it
    /// carries ([`Spec::carried`]): for the bank, jars.
    pub fn to_block(&self, topology: &Topology) -> SnapBlock {
        let name = |p: ProcessId| topology.name(p).to_string();
        let state = &self.global.state;
        let mut nodes: Vec<ProcessId> = topology.processes().collect();
        nodes.sort_by_key(|&p| name(p));
        let balances = nodes.iter().map(|&p| (name(p), state.processes.get(p.index()).map_or(0, A::held))).collect();
        let ends = |c: ChannelId| topology.channels().get(c.index()).copied();
        let message = |c: ChannelId, msg: &A::Msg| {
            let (src, dst) = ends(c).map_or(("?".to_string(), "?".to_string()), |ch| (name(ch.from), name(ch.to)));
            SnapMessage { src, dst, tokens: A::carried(msg) }
        };
        // How many messages of each channel's record are written so far.
        let mut taken = vec![0usize; state.channels.len()];
        let mut messages = Vec::new();
        for &dst in &nodes {
            for &c in self.arrivals.iter().filter(|&&c| ends(c).is_some_and(|ch| ch.to == dst)) {
                let (Some(record), Some(n)) = (state.channels.get(c.index()), taken.get_mut(c.index())) else {
                    continue;
                };
                if let Some(msg) = record.get(*n) {
                    *n += 1;
                    messages.push(message(c, msg));
                }
            }
            // Anything the arrival order does not account for, channel by channel.
            for &c in topology.incoming(dst) {
                let (Some(record), Some(n)) = (state.channels.get(c.index()), taken.get_mut(c.index())) else {
                    continue;
                };
                messages.extend(record.iter().skip(*n).map(|msg| message(c, msg)));
                *n = record.len();
            }
        }
        SnapBlock { id: self.global.id.0, balances, messages }
    }
}

/// One snapshot's part of a well-formed trace whose logged states are right, for the trace
/// checker: every application event (send, receipt, internal step) up to the snapshot's last
/// event, and the snapshot's own records and markers — not the other snapshots' records and
/// markers, which change no state and which no clause for this snapshot reads. The checker's
/// verdict on it is its verdict on the whole trace when no process records before the
/// snapshot's first initiation (checked; otherwise there is no projection), and when the trace
/// holds no theft (a theft long after a snapshot can count before its cut: then there is no
/// projection either).
struct Projection {
    /// Positions of the application events.
    app: Vec<usize>,
    /// Positions of each snapshot's records and markers.
    own: HashMap<SnapshotId, Vec<usize>>,
}

impl Projection {
    /// The events of `trace` sorted out; `None` when it holds a theft.
    fn new<A: Spec>(trace: &Trace<A>) -> Option<Self> {
        let mut app = Vec::new();
        let mut own: HashMap<SnapshotId, Vec<usize>> = HashMap::new();
        for (position, e) in trace.events.iter().enumerate() {
            match e.kind {
                EventKind::Send { .. } | EventKind::Receive { .. } | EventKind::Internal { .. } => app.push(position),
                EventKind::Lost { .. } => return None,
                EventKind::Record { snapshot, .. }
                | EventKind::MarkerSend { snapshot, .. }
                | EventKind::MarkerReceive { snapshot, .. } => own.entry(snapshot).or_default().push(position),
            }
        }
        Some(Projection { app, own })
    }

    /// The part of `trace` that snapshot `id` is checked against, or `None` (see [`Projection`]).
    fn trace<A: Spec>(&self, trace: &Trace<A>, id: SnapshotId) -> Option<Trace<A>> {
        let own = self.own.get(&id)?;
        let last = *own.last()?;
        let event = |position: usize| trace.events.get(position);
        // A process that recorded before the first initiation: the whole trace decides.
        let first_initiation = own
            .iter()
            .copied()
            .find(|&at| matches!(event(at).map(|e| &e.kind), Some(EventKind::Record { initiated: true, .. })));
        if let Some(first) = first_initiation {
            let record = |at: usize| matches!(event(at).map(|e| &e.kind), Some(EventKind::Record { .. }));
            if own.iter().any(|&at| at < first && record(at)) {
                return None;
            }
        }
        let app = &self.app[..self.app.partition_point(|&p| p <= last)];
        let mut events: Vec<Event<A>> = Vec::with_capacity(app.len() + own.len());
        let (mut a, mut o) = (app.iter().peekable(), own.iter().peekable());
        loop {
            let position = match (a.peek(), o.peek()) {
                (Some(&&x), Some(&&y)) if x < y => a.next(),
                (Some(_), None) => a.next(),
                (_, Some(_)) => o.next(),
                (None, None) => break,
            };
            events.extend(position.and_then(|&p| event(p)).cloned());
        }
        Some(Trace { initial: trace.initial.clone(), initiators: trace.initiators.clone(), events })
    }
}

/// A snapshot that fails a check.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum SnapshotFailure {
    /// The snapshot never completed everywhere (clause (e)).
    #[error("snapshot {snapshot} never completed: {}", violations.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Unterminated {
        /// The snapshot.
        snapshot: SnapshotId,
        /// The processes that never recorded and the channel records never closed.
        violations: Vec<Violation>,
    },
    /// The trace checker rejected the snapshot.
    #[error("snapshot {snapshot} fails the trace checker: {error}")]
    Verify {
        /// The snapshot.
        snapshot: SnapshotId,
        /// Why.
        error: VerifyError,
    },
    /// The recorded tokens do not add up to the total.
    #[error("snapshot {snapshot} records {recorded} tokens (nodes plus messages) but the total is {total}")]
    NotConserved {
        /// The snapshot.
        snapshot: SnapshotId,
        /// Recorded.
        recorded: u64,
        /// The total at the start.
        total: u64,
    },
}

/// The outcome of a simulation of application `A`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finished<A: Spec> {
    /// Snapshots completed everywhere, by id.
    pub snapshots: Vec<SimSnapshot<A>>,
    /// Started snapshots that never completed everywhere, by id.
    pub incomplete: Vec<SnapshotId>,
    /// Final state of every process.
    pub states: Vec<A>,
    /// The tokens each initial state was made from ([`Spec::initial`]), by process.
    pub tokens: Vec<u32>,
    /// Application messages still in transit, by channel, head first.
    pub in_transit: Vec<Vec<A::Msg>>,
    /// The run, as the trace checker reads it.
    pub trace: Trace<A>,
    /// The time at the end.
    pub time: u64,
}

impl<A: Spec + LogApp> Finished<A> {
    /// Writes the run as JSON-lines logs, `DIR/<process>.jsonl`, and its topology as
    /// `DIR/topology.top` with the tokens each initial state was made from (for the bank, each
    /// house's initial jars; see [`crate::formats::jsonl`]).
    pub fn write_logs(&self, dir: &Path, topology: &Topology) -> Result<Vec<PathBuf>, WriteError> {
        let snapshots: Vec<GlobalSnapshot<A>> = self.snapshots.iter().map(|s| s.global.clone()).collect();
        write_logs(dir, topology, &self.tokens, &self.trace, &snapshots)
    }
}

impl<A: Spec> Finished<A> {
    /// The conserved quantity at the start ([`Spec::held`] summed over the initial states; for
    /// the bank, tokens).
    pub fn total(&self) -> u64 {
        self.trace.initial.iter().map(A::held).sum()
    }

    /// The conserved quantity at the end: held plus in transit (equal to [`Finished::total`] in
    /// every run of an application that conserves it).
    pub fn final_total(&self) -> u64 {
        accounted(&self.states, &self.in_transit)
    }

    /// The completed snapshots as `.snap` blocks, by id.
    pub fn blocks(&self, topology: &Topology) -> Vec<SnapBlock> {
        self.snapshots.iter().map(|s| s.to_block(topology)).collect()
    }

    /// Checks every started snapshot, in id order: it completed, it passes the trace checker
    /// ([`verify()`]) and, when the application conserves a quantity ([`Spec::CONSERVES`]), its
    /// recorded quantity adds up to the total. Returns the first failure.
    ///
    /// The first snapshot is checked against the whole trace; the others (the trace being then
    /// known to be well formed, its logged states right) against their own part of it — the
    /// application events up to the snapshot's last event, and its own records and markers — so
    /// the check is not quadratic in the snapshots. A snapshot its part rejects is checked again
    /// against the whole trace, for the same error.
    pub fn check(&self, topology: &Topology) -> Result<(), SnapshotFailure> {
        let total = self.total();
        let by_id: BTreeMap<SnapshotId, &SimSnapshot<A>> = self.snapshots.iter().map(|s| (s.global.id, s)).collect();
        let mut ids: Vec<SnapshotId> = by_id.keys().copied().chain(self.incomplete.iter().copied()).collect();
        ids.sort();
        ids.dedup();
        // Built after the first snapshot passed against the whole trace (`Some(None)`: a theft).
        let mut projection: Option<Option<Projection>> = None;
        for id in ids {
            match by_id.get(&id) {
                Some(s) => {
                    let projected = projection.as_ref().and_then(Option::as_ref).and_then(|p| p.trace(&self.trace, id));
                    let verified = match projected {
                        Some(part) if verify(topology, &part, &s.global).is_ok() => Ok(()),
                        _ => verify(topology, &self.trace, &s.global).map(drop),
                    };
                    verified.map_err(|error| SnapshotFailure::Verify { snapshot: id, error })?;
                    // The whole trace passed once: it is well formed and its logged states right.
                    projection.get_or_insert_with(|| Projection::new(&self.trace));
                    let recorded = accounted(&s.global.state.processes, &s.global.state.channels);
                    if A::CONSERVES && recorded != total {
                        return Err(SnapshotFailure::NotConserved { snapshot: id, recorded, total });
                    }
                }
                None => {
                    let violations = unterminated(topology, &self.trace, id)
                        .map_err(|e| SnapshotFailure::Verify { snapshot: id, error: e.into() })?;
                    return Err(SnapshotFailure::Unterminated { snapshot: id, violations });
                }
            }
        }
        Ok(())
    }
}
