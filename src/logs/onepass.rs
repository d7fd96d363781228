//! Judging logs in one pass: the processes' events merged by causality as they are read (a
//! receipt waits until its message is at the head of its channel), every snapshot judged in the
//! same pass. Memory holds the messages in flight, each snapshot's channel records while they
//! are open, and a few counters per snapshot and channel; never the run.
//!
//! The pass decides one thing: that the logs are clean — every snapshot they mention is complete
//! and holds, the channels are FIFO, every logged state is what the transitions produce, and no
//! log is damaged — which is what [`crate::formats::jsonl::read_logs`] and the trace checker conclude of these
//! logs. Anything else stops it with [`NotClean`], and the caller reads the logs whole to word
//! the findings (or the error) exactly. Each condition below is one the trace checker's clauses
//! imply for every causal order of the events, so the verdict does not depend on the order in
//! which the pass happens to merge independent events.
//!
//! For snapshot `s` and channel `c` from `P` to `Q`: when `P` records, the messages it has sent
//! on `c` are the ones before the cut; a message `Q` receives while it has not recorded must be
//! one of them (clause a); the messages `Q` receives between its record and the marker closing
//! `c` are its channel's record, and must be exactly those sent before the cut that `Q` had not
//! received when it recorded (clause b) — with every receipt at the head of its channel, that is
//! "the marker arrives when `Q` has received as many messages on `c` as `P` had sent when it
//! recorded". The states are recomputed by the transitions event by event and compared with every
//! logged one, the recorded state included (clauses c and d follow).
//!
//! A message sent on `c` after `P` recorded and before its marker there is received ahead of
//! that marker: before `Q` recorded (clause a), or after, where it makes the close's count differ
//! from the cut's (clause b). Logs with such a marker-rule break are never clean, so the whole
//! reader words it: a finding, or a warning when the cut survives it.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::hash::{DefaultHasher, Hash, Hasher};

use super::semantics::Conserved;
use crate::formats::jsonl::{Ev, EvBody, EventReader as Reader, Id, LogApp, NotClean, Source, States};
use crate::protocol::{ChannelId, ProcessId, SnapshotId, Topology};

/// Clean logs: the events read and the snapshots, each complete and holding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Clean {
    /// Events in the run (a `marker-send` without `channel` counts once per outgoing channel).
    pub events: usize,
    /// Every snapshot id the logs mention, in increasing order.
    pub snapshots: Vec<SnapshotId>,
}

/// How far the pass has come, for progress lines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// Events merged so far.
    pub events: usize,
    /// Snapshots complete and judged so far.
    pub judged: usize,
}

/// Events merged between two calls of the progress function.
const PROGRESS_EVERY: usize = 1 << 16;

/// Events one process may take in a row before the next one's turn.
const TURN: usize = 256;

/// What travels on a channel.
enum Item<M> {
    Message {
        id: Id,
        payload: M,
    },
    /// A marker, and whether its sender knew of an initiation of its snapshot when it sent it.
    Marker {
        snapshot: SnapshotId,
        informed: bool,
    },
}

/// One snapshot's state during the pass.
struct Snap<M> {
    /// Each process has recorded.
    recorded: Vec<bool>,
    /// Each process has received a marker of it.
    marked: Vec<bool>,
    /// Each process knows (causally) of an initiation: it initiated, or received a marker from
    /// a process that knew.
    informed: Vec<bool>,
    /// Each channel's record is closed.
    closed: Vec<bool>,
    /// Messages sent on each channel before its sender recorded.
    cut: Vec<Option<u64>>,
    /// Each channel's record so far: what its receiver received on it since it recorded.
    records: Vec<Vec<(Id, M)>>,
    /// Records and closes still to come.
    missing: usize,
    /// The recorded states' and channel records' amount.
    total: i128,
}

/// The one pass: the run's state as far as merged.
struct Pass<'t, A: LogApp> {
    topology: &'t Topology,
    interpreted: bool,
    amount: Option<Conserved<A>>,
    states: Vec<A>,
    /// The state each process logged last, while no send, receipt or internal step of it has
    /// followed (opaque states: a record must repeat it; past such a step the state may have
    /// changed in ways the judge cannot know).
    logged: Vec<Option<A>>,
    queues: Vec<VecDeque<Item<A::Msg>>>,
    sent: Vec<u64>,
    received: Vec<u64>,
    /// Messages each process has sent.
    sends: Vec<u64>,
    /// Ids of the form `m{P}.{N}` not sent as P's N-th send (`m{sender}.{its send's number}`
    /// is unique by construction, and is not kept).
    made_ids: HashSet<(u16, u64)>,
    /// Any other id, as a 64-bit hash: two ids with one hash stop the pass, as two sends of one
    /// id do, and the whole reader tells them apart.
    other_ids: HashSet<u64>,
    last_record: Vec<Option<SnapshotId>>,
    snaps: BTreeMap<SnapshotId, Snap<A::Msg>>,
    /// Per channel: snapshots whose sender has recorded and receiver not, with the sender's cut.
    watch: Vec<Vec<(SnapshotId, u64)>>,
    /// Per channel: snapshots whose record of it is open.
    recording: Vec<Vec<SnapshotId>>,
    events: usize,
    /// Events taken of each process.
    taken: Vec<usize>,
    judged: usize,
    initial_total: i128,
}

/// Judges the logs in one pass: `Ok` when they are clean (see the module docs), otherwise why
/// the pass stopped. `progress` is called every few tens of thousands of events.
pub fn judge_in_one_pass<A: LogApp>(
    topology: &Topology,
    initial: &[A],
    source: Source<'_>,
    states: &States<A>,
    amount: Option<Conserved<A>>,
    progress: &mut dyn FnMut(Progress),
) -> Result<Clean, NotClean> {
    if initial.len() != topology.len() {
        return Err(NotClean("initial states that do not match the topology"));
    }
    let mut reader = Reader::new(topology, source, states)?;
    let channels = topology.channels().len();
    let mut pass = Pass {
        topology,
        interpreted: matches!(states, States::Interpreted),
        amount,
        states: initial.to_vec(),
        logged: vec![None; topology.len()],
        queues: (0..channels).map(|_| VecDeque::new()).collect(),
        sent: vec![0; channels],
        received: vec![0; channels],
        sends: vec![0; topology.len()],
        made_ids: HashSet::new(),
        other_ids: HashSet::new(),
        last_record: vec![None; topology.len()],
        snaps: BTreeMap::new(),
        watch: vec![Vec::new(); channels],
        recording: vec![Vec::new(); channels],
        events: 0,
        taken: vec![0; topology.len()],
        judged: 0,
        initial_total: amount.map_or(0, |a| initial.iter().map(a.state).sum()),
    };
    let mut next_progress = PROGRESS_EVERY;
    let mut done = vec![false; topology.len()];
    while !done.iter().all(|&d| d) {
        let mut progressed = false;
        for (p, finished) in done.iter_mut().enumerate() {
            for _ in 0..TURN {
                if !reader.fill(p, 1)? {
                    *finished = true;
                    break;
                }
                if !pass.ready(&mut reader, p)? {
                    break;
                }
                let Some(ev) = reader.ready(p).pop_front() else { break };
                pass.take(ProcessId(p as u16), ev)?;
                progressed = true;
            }
            if pass.events >= next_progress {
                next_progress = pass.events + PROGRESS_EVERY;
                progress(Progress { events: pass.events, judged: pass.judged });
            }
        }
        if !progressed && !done.iter().all(|&d| d) {
            return Err(NotClean("no causal order found: a receipt waits for what is never at its channel's head"));
        }
    }
    reader.finish()?;
    pass.finish()
}

impl<A: LogApp> Pass<'_, A> {
    /// Whether process `p`'s next event can be taken now: a receipt when its message or marker
    /// is at the head of its channel. A record caused by a marker and logged before the marker's
    /// receipt, with at most its marker-sends and receipts on other channels between, is first
    /// moved after it (the receipts between then follow the record, as the whole reader reads
    /// them); with anything else between, the record is taken as it is, and stops the pass.
    fn ready(&mut self, reader: &mut Reader<'_, '_, A>, p: usize) -> Result<bool, NotClean> {
        let head = &reader.ready(p)[0];
        match &head.body {
            EvBody::Receive { channel, id } => {
                Ok(matches!(self.queues[channel.index()].front(), Some(Item::Message { id: m, .. }) if m == id))
            }
            EvBody::MarkerReceive { channel, snapshot, .. } => Ok(self.marker_at_head(*channel, *snapshot).is_some()),
            &EvBody::Record { snapshot, initiated: false } if !self.snap(snapshot).marked[p] => {
                // The events after it, past its own marker-sends and receipts on other channels.
                let mut j = 1;
                let mut others: Vec<ChannelId> = Vec::new();
                loop {
                    if !reader.fill(p, j + 1)? {
                        return Ok(true);
                    }
                    match &reader.ready(p)[j].body {
                        EvBody::MarkerSend { snapshot: s, .. } if s.map_or(true, |s| s == snapshot) => j += 1,
                        EvBody::Receive { channel, .. } => {
                            others.push(*channel);
                            j += 1;
                        }
                        EvBody::MarkerReceive { snapshot: Some(s), channel, .. } if *s != snapshot => {
                            others.push(*channel);
                            j += 1;
                        }
                        _ => break,
                    }
                }
                let EvBody::MarkerReceive { channel, snapshot: s, .. } = reader.ready(p)[j].body else {
                    return Ok(true);
                };
                if others.contains(&channel) || (s.is_none() && !others.is_empty()) {
                    return Ok(true);
                }
                let cause = match s {
                    Some(s) => s == snapshot,
                    None => match self.marker_at_head(channel, None) {
                        Some(s) => s == snapshot,
                        // Whose marker it is shows only once one is at the head.
                        None => return Ok(false),
                    },
                };
                if cause {
                    let ready = reader.ready(p);
                    if let Some(receipt) = ready.remove(j) {
                        ready.push_front(receipt);
                    }
                    return Ok(self.marker_at_head(channel, s).is_some());
                }
                Ok(true)
            }
            _ => Ok(true),
        }
    }

    /// The snapshot of the marker at the head of `channel`, when there is one (of `snapshot`).
    fn marker_at_head(&self, channel: ChannelId, snapshot: Option<SnapshotId>) -> Option<SnapshotId> {
        match self.queues[channel.index()].front() {
            Some(&Item::Marker { snapshot: s, .. }) if snapshot.map_or(true, |want| want == s) => Some(s),
            _ => None,
        }
    }

    fn snap(&mut self, id: SnapshotId) -> &mut Snap<A::Msg> {
        let (processes, channels) = (self.topology.len(), self.topology.channels().len());
        self.snaps.entry(id).or_insert_with(|| Snap {
            recorded: vec![false; processes],
            marked: vec![false; processes],
            informed: vec![false; processes],
            closed: vec![false; channels],
            cut: vec![None; channels],
            records: (0..channels).map(|_| Vec::new()).collect(),
            missing: processes + channels,
            total: 0,
        })
    }

    /// Takes process `p`'s next event.
    fn take(&mut self, p: ProcessId, ev: Ev<A>) -> Result<(), NotClean> {
        let i = p.index();
        self.events += 1;
        self.taken[i] += 1;
        if matches!(ev.body, EvBody::Send { .. } | EvBody::Receive { .. } | EvBody::Internal { .. }) {
            self.logged[i] = None;
        }
        match ev.body {
            EvBody::Send { channel, id, payload } => {
                let unique = match &id {
                    &Id::Made(q, n) => (usize::from(q) == i && n == self.sends[i]) || self.made_ids.insert((q, n)),
                    Id::Other(text) => {
                        let mut hasher = DefaultHasher::new();
                        text.hash(&mut hasher);
                        self.other_ids.insert(hasher.finish())
                    }
                };
                if !unique {
                    return Err(NotClean("a message id sent twice"));
                }
                self.sends[i] += 1;
                if self.interpreted {
                    let to = self.topology.channel(channel).to;
                    self.states[i].on_send(to, &payload).map_err(|_| NotClean("a send the transitions refuse"))?;
                }
                self.queues[channel.index()].push_back(Item::Message { id, payload });
                self.sent[channel.index()] += 1;
            }
            EvBody::Receive { channel, .. } => {
                let c = channel.index();
                let Some(Item::Message { id, payload }) = self.queues[c].pop_front() else {
                    return Err(NotClean("a receipt taken before its message"));
                };
                let index = self.received[c];
                self.received[c] += 1;
                // (a) Nothing sent after its sender recorded is received before its receiver did.
                if self.watch[c].iter().any(|&(_, cut)| index >= cut) {
                    return Err(NotClean("a message crosses a cut inward"));
                }
                for s in &self.recording[c] {
                    if let Some(snap) = self.snaps.get_mut(s) {
                        snap.records[c].push((id.clone(), payload.clone()));
                    }
                }
                if self.interpreted {
                    self.states[i].on_message(self.topology.channel(channel).from, &payload);
                }
            }
            EvBody::Internal { step } => {
                if self.interpreted {
                    self.states[i].on_internal(&step).map_err(|_| NotClean("a step the transitions refuse"))?;
                }
            }
            EvBody::Record { snapshot, initiated } => self.record(p, snapshot, initiated, ev.state.as_ref())?,
            EvBody::MarkerSend { snapshot, channel } => {
                let snapshot = snapshot.or(self.last_record[i]).ok_or(NotClean("a marker-send of no snapshot"))?;
                let channels = match channel {
                    Some(c) => vec![c],
                    None => self.topology.outgoing(p).to_vec(),
                };
                // A marker-send on every outgoing channel is one event per channel.
                self.events += channels.len();
                self.events -= 1;
                if !channels.is_empty() {
                    let informed = self.snap(snapshot).informed[i];
                    for c in channels {
                        self.queues[c.index()].push_back(Item::Marker { snapshot, informed });
                    }
                }
            }
            EvBody::MarkerReceive { channel, recorded, .. } => self.close(p, channel, &recorded)?,
        }
        if let Some(state) = ev.state {
            if self.interpreted && state != self.states[i] {
                return Err(NotClean("a logged state the transitions do not produce"));
            }
            if !self.interpreted {
                self.logged[i] = Some(state);
            }
        }
        Ok(())
    }

    /// Process `p` records its state for `snapshot`.
    fn record(
        &mut self,
        p: ProcessId,
        snapshot: SnapshotId,
        initiated: bool,
        state: Option<&A>,
    ) -> Result<(), NotClean> {
        let i = p.index();
        let opaque_differs = !self.interpreted && state.zip(self.logged[i].as_ref()).is_some_and(|(r, l)| r != l);
        let amount = self.amount.map_or(0, |a| state.map_or(0, a.state));
        let topology = self.topology;
        let sent: Vec<(ChannelId, u64)> = topology.outgoing(p).iter().map(|c| (*c, self.sent[c.index()])).collect();
        let incoming = self.topology.incoming(p).to_vec();
        let snap = self.snap(snapshot);
        if snap.recorded[i] {
            return Err(NotClean("a process records twice"));
        }
        if opaque_differs {
            return Err(NotClean("a recorded state that is not the state logged last"));
        }
        if initiated {
            snap.informed[i] = true;
        } else if !snap.marked[i] || !snap.informed[i] {
            // With no marker before it, it is an anomaly; with one from a process that knew of
            // no initiation, the clause (c) replay may depend on the order of the events.
            return Err(NotClean("a record caused by no marker from an initiation"));
        }
        snap.recorded[i] = true;
        snap.missing -= 1;
        snap.total += amount;
        let mut watch = Vec::new();
        for &(c, count) in &sent {
            snap.cut[c.index()] = Some(count);
            if !snap.recorded[topology.channel(c).to.index()] {
                watch.push((c, count));
            }
        }
        let mut open = Vec::new();
        for &c in &incoming {
            if !snap.closed[c.index()] {
                open.push(c);
            }
        }
        self.last_record[i] = Some(snapshot);
        for (c, count) in watch {
            self.watch[c.index()].push((snapshot, count));
        }
        for c in incoming {
            self.watch[c.index()].retain(|&(s, _)| s != snapshot);
        }
        for c in open {
            self.recording[c.index()].push(snapshot);
        }
        self.complete(snapshot)
    }

    /// Process `p` receives the marker at the head of `channel`, which closes that channel's
    /// record of its snapshot; the record must claim exactly the ids it holds.
    fn close(&mut self, p: ProcessId, channel: ChannelId, claimed: &[Id]) -> Result<(), NotClean> {
        let (i, c) = (p.index(), channel.index());
        let Some(Item::Marker { snapshot, informed }) = self.queues[c].pop_front() else {
            return Err(NotClean("a marker receipt taken before its marker"));
        };
        let received = self.received[c];
        self.recording[c].retain(|&s| s != snapshot);
        let amount = self.amount;
        let snap = self.snap(snapshot);
        snap.marked[i] = true;
        snap.informed[i] |= informed;
        if snap.closed[c] {
            return Err(NotClean("a channel's record closed twice"));
        }
        snap.closed[c] = true;
        snap.missing -= 1;
        let record = std::mem::take(&mut snap.records[c]);
        if !snap.recorded[i] && !claimed.is_empty() {
            return Err(NotClean("a first marker whose record is not empty"));
        }
        // (b) The messages received since the receiver recorded are those sent before the cut.
        if snap.cut[c] != Some(received) {
            return Err(NotClean("a channel record that is not what was in flight at the cut"));
        }
        if record.len() != claimed.len() || record.iter().zip(claimed).any(|((id, _), claim)| id != claim) {
            return Err(NotClean("a channel record that claims other messages"));
        }
        if let Some(a) = amount {
            snap.total += record.iter().map(|(_, m)| (a.msg)(m)).sum::<i128>();
        }
        self.complete(snapshot)
    }

    /// A snapshot whose every record and close is in is judged: its total, for an application
    /// with a conserved amount.
    fn complete(&mut self, snapshot: SnapshotId) -> Result<(), NotClean> {
        let initial = self.initial_total;
        let amount = self.amount.is_some();
        let snap = self.snap(snapshot);
        if snap.missing > 0 {
            return Ok(());
        }
        if amount && snap.total != initial {
            return Err(NotClean("a recorded total that is not the initial total"));
        }
        snap.records = Vec::new();
        self.judged += 1;
        Ok(())
    }

    /// The end of the logs: every snapshot complete, every id unique, some event read.
    fn finish(self) -> Result<Clean, NotClean> {
        if self.taken.contains(&0) {
            return Err(NotClean("a process with no events"));
        }
        if self.snaps.values().any(|s| s.missing > 0) {
            return Err(NotClean("a snapshot that never completed"));
        }
        // An id spelled `m{P}.{N}` by another process than P's, or not as P's N-th send, is
        // the id of P's N-th send if P sent that many.
        let sent_as_made = |&(q, n): &(u16, u64)| self.sends.get(usize::from(q)).is_some_and(|&k| n < k);
        if self.made_ids.iter().any(sent_as_made) {
            return Err(NotClean("a message id sent twice"));
        }
        Ok(Clean { events: self.events, snapshots: self.snaps.keys().copied().collect() })
    }
}
