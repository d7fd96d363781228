//! The logs' claims judged: what each snapshot's lines claim (its records, the channel records
//! closed and the ids they hold) against what no correct run claims — a process that records
//! twice or for no marker, a channel record closed twice (by a marker sent twice on its channel:
//! one anomaly per such marker-send line, the records it closes again under it), a record
//! claiming a message its process had not received on that channel between its recording and
//! the marker, and with opaque states a recorded state other than one logged at the same point
//! of its process's history (no send, receipt, loss or internal step between).

use std::collections::{HashMap, HashSet};

use crate::check::EventKind;
use crate::formats::jsonl::{Body, Location, LogApp, LogId, Logs, Parsed};
use crate::protocol::{ChannelId, ProcessId, SnapshotId, Topology};

/// Something the logs claim about a snapshot that cannot be true of any correct run, though the
/// logs are readable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Anomaly {
    /// What is wrong, in the logs' names.
    pub message: String,
    /// The lines involved, each with its role (`"marker receipt"`).
    pub at: Vec<(String, Location)>,
    /// What follows from it (a duplicated marker's: each record it closes a second time).
    pub consequences: Vec<Anomaly>,
}

/// A marker-send line whose markers close records a second time, while they are gathered.
struct Duplicate {
    /// Its process.
    sender: ProcessId,
    /// Its anomaly, in `found[claim][index]`.
    claim: usize,
    index: usize,
    /// The channels whose records it closes a second time.
    channels: Vec<ChannelId>,
}

/// A message's send, by the logs' id.
struct Sent<'a> {
    channel: ChannelId,
    at: &'a Location,
}

/// The logs read whole, as the claims are judged.
struct Judge<'a, A: LogApp> {
    topology: &'a Topology,
    logs: &'a Logs<A>,
    opaque: bool,
    sent: HashMap<&'a LogId, Sent<'a>>,
    /// Every receipt or loss read, by the logs' id: (process, index, is a loss).
    gone: HashMap<&'a LogId, (usize, usize, bool)>,
    /// With opaque states, for each `record` line (process, index), the index of the line
    /// whose logged state is the process's state at the same point of its history.
    same_point: HashMap<(usize, usize), usize>,
}

/// The anomalies of each of `logs.claims`, in its order. With `opaque` states, a recorded state
/// is compared with a state its process logged at the same point of its history: the last one
/// logged before recording, when no send, receipt, loss or internal step came between (any of
/// them changes an opaque state in ways the judge cannot know).
pub fn anomalies<A: LogApp>(topology: &Topology, logs: &Logs<A>, opaque: bool) -> Vec<Vec<Anomaly>> {
    let mut sent = HashMap::new();
    let mut gone = HashMap::new();
    let mut same_point = HashMap::new();
    for (q, events) in logs.lines.iter().enumerate() {
        // The last line whose logged state is still the process's state: markers and records
        // leave a state as it is; a send's, receipt's or step's own logged state is the state
        // right after it. A loss's logged state is not taken (the checker does not compare it).
        let mut latest: Option<usize> = None;
        for (i, e) in events.iter().enumerate() {
            if opaque && matches!(e.body, Body::Record { .. }) {
                if let Some(at) = latest {
                    same_point.insert((q, i), at);
                }
            }
            let changes =
                matches!(e.body, Body::Send { .. } | Body::Receive { .. } | Body::Loss { .. } | Body::Internal { .. });
            match e.state {
                Some(_) if !matches!(e.body, Body::Loss { .. }) => latest = Some(i),
                _ if changes => latest = None,
                _ => {}
            }
            match &e.body {
                Body::Send { channel, msg, .. } => {
                    sent.entry(msg).or_insert(Sent { channel: *channel, at: &e.at });
                }
                Body::Receive { msg, .. } | Body::Loss { msg, .. } => {
                    gone.insert(msg, (q, i, matches!(e.body, Body::Loss { .. })));
                }
                _ => {}
            }
        }
    }
    Judge { topology, logs, opaque, sent, gone, same_point }.anomalies()
}

impl<A: LogApp> Judge<'_, A> {
    fn name(&self, p: ProcessId) -> &str {
        self.topology.name(p)
    }

    fn anomalies(&self) -> Vec<Vec<Anomaly>> {
        let topology = self.topology;
        let logs = self.logs;
        let index: HashMap<SnapshotId, usize> = logs.claims.iter().enumerate().map(|(i, c)| (c.id, i)).collect();
        let mut found: Vec<Vec<Anomaly>> = vec![Vec::new(); logs.claims.len()];
        let mut recorded: HashSet<(SnapshotId, usize)> = HashSet::new();
        let mut closed: HashSet<(SnapshotId, ChannelId)> = HashSet::new();
        let mut marked: Vec<HashSet<SnapshotId>> = vec![HashSet::new(); topology.len()];
        // Each snapshot's marker-sends on each channel, by position, and its marker receipts
        // there so far: the k-th receipt is of the k-th marker sent (the run's order says so).
        let mut marker_sends: HashMap<(SnapshotId, ChannelId), Vec<usize>> = HashMap::new();
        let mut marker_receipts: HashMap<(SnapshotId, ChannelId), usize> = HashMap::new();
        // Each duplicated marker-send line (a broadcast's markers share one) of a snapshot: its
        // process, its anomaly's place in `found`, and the channels whose records its markers
        // close a second time.
        let mut duplicates: HashMap<(SnapshotId, &Location), Duplicate> = HashMap::new();
        for (position, e) in logs.trace.events.iter().enumerate() {
            let (q, i) = logs.origins[position];
            let parsed = &logs.lines[q][i];
            let name = self.name(e.process);
            match e.kind {
                EventKind::Record { snapshot, initiated } => {
                    let Some(&c) = index.get(&snapshot) else { continue };
                    let out = &mut found[c];
                    if !recorded.insert((snapshot, q)) {
                        out.push(Anomaly {
                            message: format!("{name} records its state for snapshot {snapshot} a second time"),
                            at: vec![("record".into(), parsed.at.clone())],
                            consequences: Vec::new(),
                        });
                    } else {
                        if !initiated && !marked[q].contains(&snapshot) && !self.cause_follows(q, i, snapshot) {
                            out.push(Anomaly {
                                message: format!(
                                    "{name} records for snapshot {snapshot} as caused by a marker (\"initiated\": false), but no marker of snapshot {snapshot} reached it before"
                                ),
                                at: vec![("record".into(), parsed.at.clone())],
                                consequences: Vec::new(),
                            });
                        }
                        self.compare_logged_state(out, snapshot, parsed, self.state_at_the_same_point(q, i));
                    }
                }
                EventKind::MarkerSend { snapshot, channel } => {
                    marker_sends.entry((snapshot, channel)).or_default().push(position);
                }
                EventKind::MarkerReceive { snapshot, channel } => {
                    marked[q].insert(snapshot);
                    let k = marker_receipts.entry((snapshot, channel)).or_insert(0);
                    let sent = marker_sends.get(&(snapshot, channel)).and_then(|sends| sends.get(*k)).copied();
                    *k += 1;
                    let Some(&c) = index.get(&snapshot) else { continue };
                    let label = topology.channel_label(channel);
                    if !closed.insert((snapshot, channel)) {
                        let again = Anomaly {
                            message: format!("the record of {label} for snapshot {snapshot} is closed a second time"),
                            at: vec![("marker receipt".into(), parsed.at.clone())],
                            consequences: Vec::new(),
                        };
                        // One anomaly per duplicated marker-send line, the records it closes
                        // again under it.
                        let Some(sent) = sent else {
                            found[c].push(again);
                            continue;
                        };
                        let Some(line) = logs.location(sent) else {
                            found[c].push(again);
                            continue;
                        };
                        let sender = logs.trace.events[sent].process;
                        let duplicate = duplicates.entry((snapshot, line)).or_insert_with(|| {
                            found[c].push(Anomaly { message: String::new(), at: Vec::new(), consequences: Vec::new() });
                            Duplicate { sender, claim: c, index: found[c].len() - 1, channels: Vec::new() }
                        });
                        found[duplicate.claim][duplicate.index].consequences.push(again);
                        duplicate.channels.push(channel);
                    } else {
                        let ids: Vec<&LogId> = match &parsed.body {
                            Body::MarkerReceive { recorded, .. } => recorded.iter().collect(),
                            _ => Vec::new(),
                        };
                        // The record, when it came before this marker in the run.
                        let record = logs.claims[c].records[q].filter(|&r| r < position).map(|r| logs.origins[r].1);
                        self.check_recorded(&mut found[c], snapshot, channel, (q, i), record, &ids);
                    }
                }
                _ => {}
            }
        }
        for ((snapshot, line), Duplicate { sender, claim: c, index: k, mut channels }) in duplicates {
            channels.sort();
            channels.dedup();
            let labels: Vec<String> = channels.iter().map(|&ch| topology.channel_label(ch)).collect();
            let mut at = vec![("marker sent again".to_string(), line.clone())];
            let firsts = channels.iter().filter_map(|ch| marker_sends.get(&(snapshot, *ch))?.first());
            for first_at in firsts.filter_map(|&first| logs.location(first)) {
                if !at.iter().any(|(_, l)| l == first_at) {
                    at.push(("first marker sent".to_string(), first_at.clone()));
                }
            }
            let duplicate = &mut found[c][k];
            duplicate.message = format!(
                "{} sends a marker of snapshot {snapshot} a second time on {}, where it already sent one: a channel carries one marker of a snapshot, and the second closes its record a second time",
                self.name(sender),
                labels.join(", ")
            );
            duplicate.at = at;
        }
        found
    }

    /// The state process `q` logged last before its `record` line at `index`, when no send,
    /// receipt, loss or internal step of `q` lies between (see `same_point`).
    fn state_at_the_same_point(&self, q: usize, index: usize) -> Option<(&A, &Location)> {
        let e = &self.logs.lines[q][*self.same_point.get(&(q, index))?];
        e.state.as_ref().map(|state| (state, &e.at))
    }

    /// Whether the record at `index` of process `q` is logged just before a marker receipt
    /// that may be its cause but whose snapshot could not be told (its sender's log is damaged).
    fn cause_follows(&self, q: usize, index: usize, snapshot: SnapshotId) -> bool {
        self.logs.lines[q][index + 1..]
            .iter()
            .find(|e| !matches!(e.body, Body::MarkerSend { snapshot: Some(s), .. } if s == snapshot))
            .is_some_and(|e| matches!(e.body, Body::MarkerReceive { snapshot: None, .. }))
    }

    /// With opaque states, a recorded state must be the state its process logged at the same
    /// point of its history (`logged`, when it logged one there).
    fn compare_logged_state(
        &self,
        out: &mut Vec<Anomaly>,
        snapshot: SnapshotId,
        parsed: &Parsed<A>,
        logged: Option<(&A, &Location)>,
    ) {
        if !self.opaque {
            return;
        }
        let (Some(recorded), Some((logged, logged_at))) = (&parsed.state, logged) else { return };
        if recorded != logged {
            let json = |a: &A| serde_json::to_string(a).unwrap_or_else(|_| format!("{a:?}"));
            out.push(Anomaly {
                message: format!(
                    "{} records the state {} for snapshot {}, but the state it logged last before recording is {}",
                    self.name(parsed.process),
                    json(recorded),
                    snapshot,
                    json(logged)
                ),
                at: vec![("record".into(), parsed.at.clone()), ("state logged".into(), logged_at.clone())],
                consequences: Vec::new(),
            });
        }
    }

    /// Every id a `recorded` list claims must be a message its process received on that channel
    /// after it recorded and before that marker.
    fn check_recorded(
        &self,
        out: &mut Vec<Anomaly>,
        snapshot: SnapshotId,
        channel: ChannelId,
        (q, close): (usize, usize),
        record: Option<usize>,
        ids: &[&LogId],
    ) {
        let topology = self.topology;
        let label = topology.channel_label(channel);
        let receiver = self.name(ProcessId(q as u16));
        let events = &self.logs.lines[q];
        let marker = ("marker receipt".to_string(), events[close].at.clone());
        let whose = format!("{receiver}'s record of {label} for snapshot {snapshot}");
        if record.is_none() && !ids.is_empty() {
            let list: Vec<String> = ids.iter().map(ToString::to_string).collect();
            out.push(Anomaly {
                message: format!(
                    "{whose} claims {}, but that marker is the first of snapshot {snapshot} to reach {receiver}, which records on it: by the marker rule the record of {label} is empty",
                    list.join(", "),
                ),
                at: vec![marker],
                consequences: Vec::new(),
            });
            return;
        }
        let mut seen: HashSet<&LogId> = HashSet::new();
        for &id in ids {
            let mut at = vec![marker.clone()];
            let problem = if !seen.insert(id) {
                format!("claims message {id} twice")
            } else if let Some(send) = self.sent.get(id) {
                at.push(("send".into(), send.at.clone()));
                match self.gone.get(id) {
                    _ if send.channel != channel => {
                        format!("claims message {id}, which was sent on {}", topology.channel_label(send.channel))
                    }
                    None => format!("claims message {id}, which {receiver} never receives"),
                    Some(&(r, i, loss)) => {
                        at.push((if loss { "loss" } else { "receipt" }.into(), self.logs.lines[r][i].at.clone()));
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
            out.push(Anomaly { message: format!("{whose} {problem}"), at, consequences: Vec::new() });
        }
    }
}
