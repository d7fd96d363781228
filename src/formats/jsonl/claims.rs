//! What the logs claim about each snapshot: its records, the channel records closed and the ids
//! they claim, and the global snapshot assembled from them.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::line::{LogApp, LogId};
use super::logs::{Claim, Mislogged, States};
use super::parsed::{Body, Parsed, Sends};
use crate::check::{EventKind, Trace};
use crate::protocol::{ChannelId, ProcessId, Topology};
use crate::protocol::{GlobalSnapshot, GlobalState, SnapshotId};

/// What the claims are read from.
pub(super) struct Context<'a, A: LogApp> {
    pub(super) topology: &'a Topology,
    pub(super) trace: &'a Trace<A>,
    /// Each event of the trace: (process, index among the process's events).
    pub(super) origins: &'a [(usize, usize)],
    /// Every event read, each process's in its order (also those cut off as damage).
    pub(super) by_process: &'a [Vec<Parsed<A>>],
    pub(super) sent: &'a Sends<'a>,
    pub(super) damaged: &'a [bool],
    /// The logging errors: their snapshots are not judged.
    pub(super) mislogged: &'a [Mislogged],
    /// Each process's receipts of what no log sends, by index among its events.
    pub(super) dangling: &'a [Vec<usize>],
    pub(super) states: &'a States<A>,
}

impl<A: LogApp> Context<'_, A> {
    fn name(&self, p: ProcessId) -> &str {
        self.topology.name(p)
    }

    /// The snapshots the logs claim: for every snapshot id mentioned, each process's first
    /// record, each channel's first close and the ids it claims, and the global snapshot when it
    /// is complete. Whether the claims are ones a correct run makes is the judge's
    /// (`crate::logs`).
    pub(super) fn claims(&self) -> Vec<Claim<A>> {
        let topology = self.topology;
        let trace = self.trace;
        let mut claims: BTreeMap<SnapshotId, Claim<A>> = BTreeMap::new();
        let new_claim = |id| Claim {
            id,
            snapshot: None,
            records: vec![None; topology.len()],
            closes: vec![None; topology.channels().len()],
            recorded: vec![Vec::new(); topology.channels().len()],
            unjudged: None,
        };
        // The ids each channel's record holds, by snapshot.
        let mut records: HashMap<(SnapshotId, ChannelId), Vec<&LogId>> = HashMap::new();
        for (position, e) in trace.events.iter().enumerate() {
            let (q, index) = self.origins[position];
            let parsed = &self.by_process[q][index];
            match e.kind {
                EventKind::Record { snapshot, .. } => {
                    let claim = claims.entry(snapshot).or_insert_with(|| new_claim(snapshot));
                    claim.records[q].get_or_insert(position);
                }
                EventKind::MarkerSend { snapshot, .. } => {
                    claims.entry(snapshot).or_insert_with(|| new_claim(snapshot));
                }
                EventKind::MarkerReceive { snapshot, channel } => {
                    let claim = claims.entry(snapshot).or_insert_with(|| new_claim(snapshot));
                    if claim.closes[channel.index()].is_none() {
                        claim.closes[channel.index()] = Some(position);
                        let ids = match &parsed.body {
                            Body::MarkerReceive { recorded, .. } => recorded.iter().collect(),
                            _ => Vec::new(),
                        };
                        records.insert((snapshot, channel), ids);
                    }
                }
                _ => {}
            }
        }
        // Snapshots mentioned only in what damage cut off.
        for e in self.by_process.iter().flatten() {
            if let Body::Record { snapshot, .. }
            | Body::MarkerSend { snapshot: Some(snapshot), .. }
            | Body::MarkerReceive { snapshot: Some(snapshot), .. } = e.body
            {
                claims.entry(snapshot).or_insert_with(|| new_claim(snapshot));
            }
        }
        for claim in claims.values_mut() {
            self.assemble(claim, &records);
        }
        claims.into_values().collect()
    }

    /// The global snapshot, when every process recorded and every channel's record closed;
    /// otherwise, when the damage may hold what is missing, why it cannot be judged. A snapshot
    /// with a logging error ([`Mislogged`]) is not judged either way.
    fn assemble(&self, claim: &mut Claim<A>, records: &HashMap<(SnapshotId, ChannelId), Vec<&LogId>>) {
        self.assemble_read(claim, records);
        if claim.unjudged.is_none() {
            claim.unjudged = self.touched(claim);
        }
        let errors: Vec<&Mislogged> = self.mislogged.iter().filter(|m| m.snapshot == claim.id).collect();
        if let Some(first) = errors.first() {
            let more = match errors.len() {
                1 => String::new(),
                n => format!(" (and {} more)", n - 1),
            };
            claim.unjudged = Some(format!(
                "a logging error: {} logs its record (at {}) before the marker receipt that caused it (at {}), with an event between them that cannot be there (at {}){more}",
                self.name(first.process),
                first.record,
                first.marker,
                first.between
            ));
        }
    }

    /// Why a dangling receipt (of what no log sends) leaves the snapshot unjudged, when it does:
    /// a message receipt or loss before its receiver records (the cut holds it: its send's side
    /// of the cut is unknown, and so is the recorded state), or after the record while the
    /// snapshot's record of that channel is open (the channel's record may hold it); a marker
    /// receipt of the snapshot's, or of an unknown one while that channel's record is open.
    /// A receipt after the channel's record closed is after the cut on both ends: the snapshot
    /// does not depend on it.
    fn touched(&self, claim: &Claim<A>) -> Option<String> {
        let line = |position: Option<usize>| position.map(|p| self.origins[p].1);
        for (q, indices) in self.dangling.iter().enumerate() {
            let record = line(claim.records[q]);
            for &i in indices {
                let e = &self.by_process[q][i];
                let (channel, holds) = match &e.body {
                    Body::Receive { channel, .. } | Body::Loss { channel, .. } => {
                        let close = line(claim.closes[channel.index()]);
                        let in_cut = record.is_some_and(|r| r > i);
                        let in_record = record.is_some_and(|r| r < i) && close.map_or(true, |c| c > i);
                        (*channel, in_cut || in_record)
                    }
                    Body::MarkerReceive { snapshot: Some(s), channel, .. } => (*channel, *s == claim.id),
                    Body::MarkerReceive { snapshot: None, channel, .. } => {
                        (*channel, line(claim.closes[channel.index()]).map_or(true, |c| c > i))
                    }
                    _ => continue,
                };
                if holds {
                    let sender = self.name(self.topology.channel(channel).from);
                    return Some(format!(
                        "{} receives at {} what {sender}'s damaged log never sends, and this snapshot's cut or its record of {} may hold it",
                        self.name(ProcessId(q as u16)),
                        e.at,
                        self.topology.channel_label(channel)
                    ));
                }
            }
        }
        None
    }

    fn assemble_read(&self, claim: &mut Claim<A>, records: &HashMap<(SnapshotId, ChannelId), Vec<&LogId>>) {
        let topology = self.topology;
        for (c, ids) in claim.recorded.iter_mut().enumerate() {
            if let Some(claimed) = records.get(&(claim.id, ChannelId(c as u32))) {
                *ids = claimed.iter().map(|&id| id.clone()).collect();
            }
        }
        let blank = match self.states {
            States::Opaque { blank } => Some(blank),
            States::Interpreted => None,
        };
        let states: Option<Vec<A>> = claim
            .records
            .iter()
            .map(|r| r.and_then(|position| self.trace.events[position].state.clone().or_else(|| blank.cloned())))
            .collect();
        let closed = claim.closes.iter().all(Option::is_some);
        if let (Some(states), true) = (states, closed) {
            let channels = (0..topology.channels().len())
                .map(|c| {
                    let ids = records.get(&(claim.id, ChannelId(c as u32)));
                    ids.into_iter()
                        .flatten()
                        .filter_map(|id| self.sent.ids.get(id))
                        .filter_map(|s| self.payload(s.process, s.index))
                        .collect()
                })
                .collect();
            claim.snapshot = Some(GlobalSnapshot { id: claim.id, state: GlobalState { processes: states, channels } });
            return;
        }
        // Which damaged logs may hold what is missing.
        let mut involved: BTreeSet<usize> = BTreeSet::new();
        for (p, r) in claim.records.iter().enumerate() {
            if r.is_none() {
                involved.insert(p);
            }
        }
        for (c, close) in claim.closes.iter().enumerate() {
            if close.is_none() {
                let ch = topology.channel(ChannelId(c as u32));
                involved.extend([ch.from.index(), ch.to.index()]);
            }
        }
        let damaged: Vec<&str> =
            involved.into_iter().filter(|&p| self.damaged[p]).map(|p| self.name(ProcessId(p as u16))).collect();
        if !damaged.is_empty() {
            let named = match damaged.len() {
                n if n > 5 => format!("{}, … ({n} in all)", damaged[..5].join(", ")),
                _ => damaged.join(", "),
            };
            claim.unjudged = Some(format!(
                "incomplete in what was read, and the missing part may be in what the damaged log{} of {named} did not hold",
                if damaged.len() == 1 { "" } else { "s" },
            ));
        }
    }

    fn payload(&self, p: usize, index: usize) -> Option<A::Msg> {
        match &self.by_process[p][index].body {
            Body::Send { payload, .. } => Some(payload.clone()),
            _ => None,
        }
    }
}
