//! What the logs claim about each snapshot, and the claims no correct run makes.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::line::{Location, LogApp, LogId};
use super::logs::{Anomaly, Claim, States};
use super::parsed::{Body, Parsed, Sends};
use crate::check::{Event, EventKind, Trace};
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
    pub(super) states: &'a States<A>,
}

impl<A: LogApp> Context<'_, A> {
    fn name(&self, p: ProcessId) -> &str {
        self.topology.name(p)
    }

    /// The snapshots the logs claim: for every snapshot id mentioned, the records and closes,
    /// what no correct run claims, and the global snapshot when it is complete.
    pub(super) fn claims(&self) -> Vec<Claim<A>> {
        let topology = self.topology;
        let trace = self.trace;
        // Every receipt or loss read, by the logs' id: (process, index, is a loss).
        let mut gone: HashMap<&LogId, (usize, usize, bool)> = HashMap::new();
        for (q, events) in self.by_process.iter().enumerate() {
            for (i, e) in events.iter().enumerate() {
                if let Body::Receive { msg, .. } | Body::Loss { msg, .. } = &e.body {
                    gone.insert(msg, (q, i, matches!(e.body, Body::Loss { .. })));
                }
            }
        }
        let mut claims: BTreeMap<SnapshotId, Claim<A>> = BTreeMap::new();
        let new_claim = |id| Claim {
            id,
            snapshot: None,
            records: vec![None; topology.len()],
            closes: vec![None; topology.channels().len()],
            recorded: vec![Vec::new(); topology.channels().len()],
            anomalies: Vec::new(),
            unjudged: None,
        };
        // The ids each channel's record holds, by snapshot.
        let mut records: HashMap<(SnapshotId, ChannelId), Vec<&LogId>> = HashMap::new();
        let mut marked: Vec<HashSet<SnapshotId>> = vec![HashSet::new(); topology.len()];
        let mut last_state: Vec<Option<(&A, &Location)>> = vec![None; topology.len()];
        for (position, e) in trace.events.iter().enumerate() {
            let (q, index) = self.origins[position];
            let parsed = &self.by_process[q][index];
            let snapshot = match e.kind {
                EventKind::Record { snapshot, .. }
                | EventKind::MarkerSend { snapshot, .. }
                | EventKind::MarkerReceive { snapshot, .. } => Some(snapshot),
                _ => None,
            };
            if let Some(snapshot) = snapshot {
                let claim = claims.entry(snapshot).or_insert_with(|| new_claim(snapshot));
                let name = self.name(e.process);
                match e.kind {
                    EventKind::Record { initiated, .. } => {
                        if claim.records[q].is_some() {
                            claim.anomalies.push(Anomaly {
                                message: format!("{name} records its state for snapshot {snapshot} a second time"),
                                at: vec![("record".into(), parsed.at.clone())],
                            });
                        } else {
                            claim.records[q] = Some(position);
                            if !initiated && !marked[q].contains(&snapshot) && !self.cause_follows(q, index, snapshot) {
                                claim.anomalies.push(Anomaly {
                                    message: format!(
                                        "{name} records for snapshot {snapshot} as caused by a marker (\"initiated\": false), but no marker of snapshot {snapshot} reached it before"
                                    ),
                                    at: vec![("record".into(), parsed.at.clone())],
                                });
                            }
                            self.compare_logged_state(claim, e, parsed, last_state[q]);
                        }
                    }
                    EventKind::MarkerReceive { channel, .. } => {
                        marked[q].insert(snapshot);
                        let label = topology.channel_label(channel);
                        if claim.closes[channel.index()].is_some() {
                            claim.anomalies.push(Anomaly {
                                message: format!(
                                    "the record of {label} for snapshot {snapshot} is closed a second time"
                                ),
                                at: vec![("marker receipt".into(), parsed.at.clone())],
                            });
                        } else {
                            claim.closes[channel.index()] = Some(position);
                            let ids = match &parsed.body {
                                Body::MarkerReceive { recorded, .. } => recorded.iter().collect(),
                                _ => Vec::new(),
                            };
                            let record = claim.records[q].map(|r| self.origins[r].1);
                            self.check_recorded(claim, channel, (q, index), record, &ids, &gone);
                            records.insert((snapshot, channel), ids);
                        }
                    }
                    _ => {}
                }
            }
            if let Some(state) = &e.state {
                last_state[q] = Some((state, &parsed.at));
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

    /// Whether the record at `index` of process `q` is logged just before a marker receipt
    /// that may be its cause but whose snapshot could not be told (its sender's log is damaged).
    fn cause_follows(&self, q: usize, index: usize, snapshot: SnapshotId) -> bool {
        self.by_process[q][index + 1..]
            .iter()
            .find(|e| !matches!(e.body, Body::MarkerSend { snapshot: Some(s), .. } if s == snapshot))
            .is_some_and(|e| matches!(e.body, Body::MarkerReceive { snapshot: None, .. }))
    }

    /// With opaque states, a recorded state must be the state its process logged last before
    /// recording (when it logged one).
    fn compare_logged_state(
        &self,
        claim: &mut Claim<A>,
        e: &Event<A>,
        parsed: &Parsed<A>,
        last: Option<(&A, &Location)>,
    ) {
        if !matches!(self.states, States::Opaque { .. }) {
            return;
        }
        let (Some(recorded), Some((logged, logged_at))) = (&e.state, last) else { return };
        if recorded != logged {
            let json = |a: &A| serde_json::to_string(a).unwrap_or_else(|_| format!("{a:?}"));
            claim.anomalies.push(Anomaly {
                message: format!(
                    "{} records the state {} for snapshot {}, but the state it logged last before recording is {}",
                    self.name(e.process),
                    json(recorded),
                    claim.id,
                    json(logged)
                ),
                at: vec![("record".into(), parsed.at.clone()), ("state logged".into(), logged_at.clone())],
            });
        }
    }

    /// Every id a `recorded` list claims must be a message its process received on that channel
    /// after it recorded and before that marker.
    fn check_recorded(
        &self,
        claim: &mut Claim<A>,
        channel: ChannelId,
        (q, close): (usize, usize),
        record: Option<usize>,
        ids: &[&LogId],
        gone: &HashMap<&LogId, (usize, usize, bool)>,
    ) {
        let topology = self.topology;
        let label = topology.channel_label(channel);
        let receiver = self.name(ProcessId(q as u16));
        let events = &self.by_process[q];
        let marker = ("marker receipt".to_string(), events[close].at.clone());
        let whose = format!("{receiver}'s record of {label} for snapshot {}", claim.id);
        if record.is_none() && !ids.is_empty() {
            let list: Vec<String> = ids.iter().map(ToString::to_string).collect();
            claim.anomalies.push(Anomaly {
                message: format!(
                    "{whose} claims {}, but that marker is the first of snapshot {} to reach {receiver}, which records on it: by the marker rule the record of {label} is empty",
                    list.join(", "),
                    claim.id
                ),
                at: vec![marker],
            });
            return;
        }
        let mut seen: HashSet<&LogId> = HashSet::new();
        for &id in ids {
            let mut at = vec![marker.clone()];
            let problem = if !seen.insert(id) {
                format!("claims message {id} twice")
            } else if let Some(send) = self.sent.ids.get(id) {
                at.push(("send".into(), send.at.clone()));
                match gone.get(id) {
                    _ if send.channel != channel => {
                        format!("claims message {id}, which was sent on {}", topology.channel_label(send.channel))
                    }
                    None => format!("claims message {id}, which {receiver} never receives"),
                    Some(&(r, i, loss)) => {
                        at.push((if loss { "loss" } else { "receipt" }.into(), self.by_process[r][i].at.clone()));
                        if loss {
                            format!("claims message {id}, which was lost in transit")
                        } else if i > close {
                            format!("claims message {id}, which {receiver} receives only after that marker: the marker overtook it, or the record holds a message not yet received")
                        } else if record.is_some_and(|r| i < r) {
                            at.push(("record".into(), events[record.unwrap_or(0)].at.clone()));
                            format!("claims message {id}, which {receiver} received before it recorded")
                        } else {
                            continue;
                        }
                    }
                }
            } else {
                format!("claims message {id}, which no log sends")
            };
            claim.anomalies.push(Anomaly { message: format!("{whose} {problem}"), at });
        }
    }

    /// The global snapshot, when every process recorded and every channel's record closed;
    /// otherwise, when the damage may hold what is missing, why it cannot be judged.
    fn assemble(&self, claim: &mut Claim<A>, records: &HashMap<(SnapshotId, ChannelId), Vec<&LogId>>) {
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
