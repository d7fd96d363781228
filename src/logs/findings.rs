//! Findings in the logs' own words: process and channel names as the topology spells them,
//! message ids as the logs spell them, and the file:line of every event involved.

use std::collections::HashMap;

use serde::Serialize;

use super::claims::Anomaly;
use super::semantics::Conserved;
use crate::check::{Clause, EventKind, EventRef, FifoBreak, Item, MsgId, Show, Trace, Violation};
use crate::formats::jsonl::{Claim, Damage, LogApp, LogId, Logs, Mislogged};
use crate::protocol::{Application, ChannelId, ProcessId, SnapshotId, Topology};

/// One thing found wrong, with the log lines it concerns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The clause (`a` … `e`), `initiation`, `logged-states`, `claims`, `fifo`, `total`,
    /// `damage` or `logging` (a logging error: the logs do not tell the order of a snapshot's
    /// events, which is no verdict on the algorithm); for a warning, `marker-rule`.
    pub clause: &'static str,
    /// What is wrong.
    pub message: String,
    /// The log lines involved, each with its role (`send at P0.jsonl:6`).
    pub at: Vec<String>,
    /// What follows from it: findings of the same snapshot that this one explains.
    pub consequences: Vec<Finding>,
}

/// The clause's short name, as in the JSON.
pub(super) fn clause_name(clause: Clause) -> &'static str {
    match clause {
        Clause::NoInwardCrossing => "a",
        Clause::ExactRecords => "b",
        Clause::RecordedReachable => "c",
        Clause::EndReachable => "d",
        Clause::Terminated => "e",
        Clause::Initiation => "initiation",
        Clause::LoggedStates => "logged-states",
    }
}

/// The title a finding of `clause` is printed under.
pub(super) fn clause_title(clause: &str) -> &'static str {
    match clause {
        "a" => "(a) nothing crosses the cut inward",
        "b" => "(b) channel records hold exactly the in-flight messages",
        "c" => "(c) recorded state reachable from start",
        "d" => "(d) end state reachable from recorded state",
        "e" => "(e) snapshot terminates",
        "initiation" => "only initiators initiate",
        "logged-states" => "logged states",
        "fifo" => "FIFO channels (the theorem's precondition)",
        "total" => "the recorded total is the initial total",
        "damage" => "damaged logs",
        "logging" => "a logging error (not a verdict on the algorithm)",
        "marker-rule" => "the marker rule (the theorem still holds)",
        _ => "the logs' claims",
    }
}

/// States, messages and steps as the logs spell them: JSON.
pub(super) struct AsJson;

impl<A: LogApp> Show<A> for AsJson {
    fn state(&self, state: &A) -> String {
        serde_json::to_string(state).unwrap_or_else(|_| format!("{state:?}"))
    }
    fn msg(&self, msg: &A::Msg) -> String {
        serde_json::to_string(msg).unwrap_or_else(|_| format!("{msg:?}"))
    }
    fn step(&self, step: &A::Step) -> String {
        serde_json::to_string(step).unwrap_or_else(|_| format!("{step:?}"))
    }
}

/// Names in the logs' words.
pub(super) struct Names<'a, A: Application> {
    pub(super) topology: &'a Topology,
    pub(super) logs: &'a Logs<A>,
    /// Each process's last event in the run.
    last: Vec<Option<usize>>,
    /// The first sending of each snapshot's marker on each channel.
    markers: HashMap<(SnapshotId, ChannelId), usize>,
    /// Each message's send, by position.
    sends: HashMap<MsgId, usize>,
    /// Each message's receipt or loss, by position, and whether it is a loss.
    gone: HashMap<MsgId, (usize, bool)>,
    /// Our id of each message id as the logs spell it.
    ids: HashMap<&'a LogId, MsgId>,
}

impl<'a, A: LogApp> Names<'a, A> {
    pub(super) fn new(topology: &'a Topology, logs: &'a Logs<A>) -> Self {
        let mut last = vec![None; topology.len()];
        let mut markers = HashMap::new();
        let (mut sends, mut gone) = (HashMap::new(), HashMap::new());
        for (position, e) in logs.trace.events.iter().enumerate() {
            last[e.process.index()] = Some(position);
            match e.kind {
                EventKind::MarkerSend { snapshot, channel } => {
                    markers.entry((snapshot, channel)).or_insert(position);
                }
                EventKind::Send { id, .. } => {
                    sends.insert(id, position);
                }
                EventKind::Receive { id, .. } => {
                    gone.insert(id, (position, false));
                }
                EventKind::Lost { id, .. } => {
                    gone.insert(id, (position, true));
                }
                _ => {}
            }
        }
        let ids = logs.names.iter().map(|(id, name)| (name, *id)).collect();
        Names { topology, logs, last, markers, sends, gone, ids }
    }
}

impl<A: LogApp> Names<'_, A> {
    fn process(&self, p: ProcessId) -> &str {
        self.topology.name(p)
    }

    fn channel(&self, c: ChannelId) -> String {
        self.topology.channel_label(c)
    }

    /// A message id as the logs spell it (`"7"`).
    pub(super) fn msg(&self, id: MsgId) -> String {
        self.logs.names.get(&id).map_or_else(|| id.to_string(), ToString::to_string)
    }

    /// `text` with every message id of ours (`m2.75`) spelled as the logs spell it.
    pub(super) fn rename(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < text.len() {
            let starts = bytes[i] == b'm' && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric());
            let digits = |from: usize| from + bytes[from..].iter().take_while(|b| b.is_ascii_digit()).count();
            if starts {
                let (p_end, dot) = (digits(i + 1), digits(i + 1));
                if p_end > i + 1 && bytes.get(dot) == Some(&b'.') {
                    let n_end = digits(dot + 1);
                    let boundary = !bytes.get(n_end).is_some_and(u8::is_ascii_alphanumeric);
                    if n_end > dot + 1 && boundary {
                        if let (Ok(p), Ok(n)) = (text[i + 1..p_end].parse::<u16>(), text[dot + 1..n_end].parse::<u64>())
                        {
                            out.push_str(&self.msg(MsgId::new(ProcessId(p), n)));
                            i = n_end;
                            continue;
                        }
                    }
                }
            }
            let c = text[i..].chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
        }
        out
    }

    fn item(&self, item: Item) -> String {
        match item {
            Item::Message(id) => format!("message {}", self.msg(id)),
            Item::Marker(s) => format!("the marker of snapshot {s}"),
        }
    }

    /// `ROLE at FILE:LINE` for the event at `position`.
    fn at(&self, role: &str, position: usize) -> String {
        match self.logs.location(position) {
            Some(l) => format!("{role} at {l}"),
            None => format!("{role}: event {position}"),
        }
    }

    fn event(&self, role: &str, e: &EventRef) -> String {
        self.at(role, e.position)
    }

    fn record_at(&self, claim: &Claim<A>, p: ProcessId) -> Option<String> {
        let position = claim.records.get(p.index()).copied().flatten()?;
        Some(self.at(&format!("{}'s record", self.process(p)), position))
    }

    fn close_at(&self, claim: &Claim<A>, c: ChannelId) -> Option<String> {
        let position = claim.closes.get(c.index()).copied().flatten()?;
        Some(self.at(&format!("the record of {} closed", self.channel(c)), position))
    }

    /// The ids a channel's record claims, as the logs spell them.
    fn claimed(&self, claim: &Claim<A>, c: ChannelId) -> String {
        let ids: Vec<String> = claim.recorded.get(c.index()).into_iter().flatten().map(ToString::to_string).collect();
        format!("[{}]", ids.join(", "))
    }

    /// Why message `id`, claimed by the record of `channel`, was not in flight at the cut (`":
    /// A sent it after it recorded"`), with the lines that show it pushed onto `at`: its send
    /// and the record it follows, or its receipt or loss and the record it precedes. Empty
    /// when no log sends it on `channel` (the claims' own finding says so).
    fn not_in_flight(&self, claim: &Claim<A>, channel: ChannelId, id: &LogId, at: &mut Vec<String>) -> String {
        let Some((msg, &send)) = self.ids.get(id).and_then(|m| Some((*m, self.sends.get(m)?))) else {
            return String::new();
        };
        let events = &self.logs.trace.events;
        if !matches!(events[send].kind, EventKind::Send { channel: c, .. } if c == channel) {
            return String::new();
        }
        let ch = self.topology.channel(channel);
        let recorded = |p: ProcessId| claim.records.get(p.index()).copied().flatten();
        at.push(self.at("send", send));
        if recorded(ch.from).is_some_and(|r| send > r) {
            at.extend(self.record_at(claim, ch.from));
            return format!(": {} sent it after it recorded", self.process(ch.from));
        }
        match self.gone.get(&msg) {
            Some(&(lost, true)) => {
                at.push(self.at("loss", lost));
                ": it was lost in transit before the cut".to_string()
            }
            Some(&(receipt, false)) if recorded(ch.to).is_some_and(|r| receipt < r) => {
                at.push(self.at("receipt", receipt));
                at.extend(self.record_at(claim, ch.to));
                format!(": {} received it before it recorded", self.process(ch.to))
            }
            _ => String::new(),
        }
    }

    /// A violation of the theorem, in the logs' words.
    pub(super) fn violation(&self, claim: &Claim<A>, v: &Violation) -> Finding {
        let mut at: Vec<String> = Vec::new();
        let message = match v {
            Violation::NotRecorded { process, .. } => {
                let name = self.process(*process);
                match self.last.get(process.index()).copied().flatten() {
                    Some(position) => at.push(self.at(&format!("{name}'s last event"), position)),
                    None => at.push(format!("{name} has no event in the run")),
                }
                format!("{name} never recorded its state")
            }
            Violation::NotClosed { channel, .. } => {
                let receiver = self.process(self.topology.channel(*channel).to);
                let sender = self.process(self.topology.channel(*channel).from);
                match self.markers.get(&(claim.id, *channel)) {
                    Some(&position) => at.push(self.at("its marker sent", position)),
                    None => at.push(format!("{sender} sent no marker of snapshot {} on it", claim.id)),
                }
                format!(
                    "the record of {} was never closed: {receiver} received no marker of snapshot {} on it",
                    self.channel(*channel),
                    claim.id
                )
            }
            Violation::InwardCrossing { msg, channel, send, receive, .. } => {
                let ch = self.topology.channel(*channel);
                at.extend([self.event("send", send), self.event("receipt", receive)]);
                at.extend(self.record_at(claim, ch.from));
                at.extend(self.record_at(claim, ch.to));
                format!(
                    "message {} on {} crosses the cut inward: sent after {} recorded, received before {} recorded",
                    self.msg(*msg),
                    self.channel(*channel),
                    self.process(ch.from),
                    self.process(ch.to)
                )
            }
            Violation::MissingMessage { channel, msg, send, .. } => {
                at.push(self.event("send", send));
                at.extend(self.close_at(claim, *channel));
                format!(
                    "message {}, in flight on {} at the cut, is missing from its record {}",
                    self.msg(*msg),
                    self.channel(*channel),
                    self.claimed(claim, *channel)
                )
            }
            Violation::ExtraMessage { channel, index, received, .. } => {
                let id = claim.recorded.get(channel.index()).and_then(|ids| ids.get(*index));
                let why = id.map(|id| self.not_in_flight(claim, *channel, id, &mut at)).unwrap_or_default();
                at.extend(self.close_at(claim, *channel));
                at.extend(received.iter().map(|r| self.event("its receipt after the cut", r)));
                let what = id.map_or_else(|| format!("its message at index {index}"), |id| format!("message {id}"));
                format!(
                    "the record of {} {} holds {what}, which was not in flight at the cut{why}",
                    self.channel(*channel),
                    self.claimed(claim, *channel)
                )
            }
            Violation::OutOfOrder { channel, expected, .. } => {
                at.extend(self.close_at(claim, *channel));
                let sent: Vec<String> = expected.iter().map(|id| self.msg(*id)).collect();
                format!(
                    "the record of {} holds the in-flight messages out of order: sent as [{}], recorded as {}",
                    self.channel(*channel),
                    sent.join(", "),
                    self.claimed(claim, *channel)
                )
            }
            Violation::RecordedUnreachable { event, reason, .. } => {
                at.extend(event.iter().map(|e| self.event("event", e)));
                format!("the recorded state is not reachable from the state at initiation: {}", self.rename(reason))
            }
            Violation::EndUnreachable { event, reason, .. } => {
                at.extend(event.iter().map(|e| self.event("event", e)));
                format!("the end state is not reachable from the recorded state: {}", self.rename(reason))
            }
            Violation::NotAnInitiator { process, event, .. } => {
                at.push(self.event("initiation", event));
                format!("initiated by {}, which may not initiate snapshots", self.process(*process))
            }
            Violation::LoggedState { event, reason, .. } => {
                at.push(self.event("event", event));
                self.rename(reason)
            }
        };
        Finding { clause: clause_name(v.clause()), message, at, consequences: Vec::new() }
    }

    /// The marker-rule breaks of a snapshot that leave its cut consistent: a message sent on a
    /// channel after its sender recorded and before its marker there, that neither crosses the
    /// cut inward (received before its receiver recorded: clause a) nor is claimed by the
    /// channel's record (clause b). One warning per such message, naming its send, the record
    /// and the marker it falls between, and its receipt.
    pub(super) fn marker_rule_breaks(&self, claim: &Claim<A>) -> Vec<Finding> {
        let mut warnings = Vec::new();
        let recorded = |p: ProcessId| claim.records.get(p.index()).copied().flatten();
        for (position, e) in self.logs.trace.events.iter().enumerate() {
            let EventKind::Send { channel, id, .. } = e.kind else { continue };
            let ch = self.topology.channel(channel);
            let (Some(record), Some(&marker)) = (recorded(ch.from), self.markers.get(&(claim.id, channel))) else {
                continue;
            };
            if !(record < position && position < marker) {
                continue;
            }
            let receipt = match self.gone.get(&id) {
                Some(&(receipt, false)) => Some(receipt),
                _ => None,
            };
            let crosses = receipt.is_some_and(|r| recorded(ch.to).map_or(true, |rq| r < rq));
            let name = self.logs.names.get(&id);
            let claimed = claim.recorded.get(channel.index()).is_some_and(|ids| name.is_some_and(|n| ids.contains(n)));
            if crosses || claimed {
                continue;
            }
            let label = self.channel(channel);
            let mut at = vec![self.at("send", position)];
            at.extend(self.record_at(claim, ch.from));
            at.push(self.at(&format!("its marker on {label} sent"), marker));
            at.extend(receipt.map(|r| self.at("receipt", r)));
            warnings.push(Finding {
                clause: "marker-rule",
                message: format!(
                    "snapshot {}: {} sends message {} on {label} after it recorded and before its marker there (the marker rule sends the marker first); the cut is still consistent: {}'s record of {label} leaves the message out",
                    claim.id,
                    self.process(ch.from),
                    self.msg(id),
                    self.process(ch.to),
                ),
                at,
                consequences: Vec::new(),
            });
        }
        warnings
    }

    /// A claim no correct run makes.
    pub(super) fn anomaly(&self, anomaly: &Anomaly) -> Finding {
        let at = anomaly.at.iter().map(|(role, l)| format!("{role} at {l}")).collect();
        let consequences = anomaly.consequences.iter().map(|a| self.anomaly(a)).collect();
        Finding { clause: "claims", message: anomaly.message.clone(), at, consequences }
    }

    /// A FIFO break.
    pub(super) fn fifo(&self, b: &FifoBreak) -> Finding {
        let ch = self.topology.channel(b.channel);
        let message = format!(
            "on {}, {} overtook {}: {} sent it after, and {} received it before",
            self.channel(b.channel),
            self.item(b.early),
            self.item(b.overtaken),
            self.process(ch.from),
            self.process(ch.to)
        );
        let mut at = vec![
            self.at(&format!("{} sent", self.item(b.overtaken)), b.overtaken_send),
            self.at(&format!("{} sent", self.item(b.early)), b.early_send),
            self.at(&format!("{} received", self.item(b.early)), b.early_receipt),
        ];
        match b.overtaken_receipt {
            Some(r) => at.push(self.at(&format!("{} received", self.item(b.overtaken)), r)),
            None => at.push(format!("{} never received", self.item(b.overtaken))),
        }
        Finding { clause: "fifo", message, at, consequences: Vec::new() }
    }

    /// A record logged apart from the marker receipt that caused it.
    pub(super) fn mislogged(&self, m: &Mislogged) -> Finding {
        Finding {
            clause: "logging",
            message: m.message.clone(),
            at: vec![
                format!("record at {}", m.record),
                format!("marker receipt at {}", m.marker),
                format!("between them at {}", m.between),
            ],
            consequences: Vec::new(),
        }
    }

    /// Damage to the logs.
    pub(super) fn damage(&self, d: &Damage) -> Finding {
        Finding {
            clause: "damage",
            message: d.message.clone(),
            at: d.at.iter().map(|l| format!("at {l}")).collect(),
            consequences: Vec::new(),
        }
    }
}

/// The conserved total of a complete snapshot against the initial total less what was lost
/// before the cut, for an application with one (`amount` of a state and of a message).
pub(super) fn total<A: LogApp>(names: &Names<'_, A>, claim: &Claim<A>, amount: Conserved<A>) -> Option<Finding> {
    let snapshot = claim.snapshot.as_ref()?;
    let trace: &Trace<A> = &names.logs.trace;
    let (state, msg) = (amount.state, amount.msg);
    let states: i128 = snapshot.state.processes.iter().map(state).sum();
    let channels: i128 = snapshot.state.channels.iter().flatten().map(msg).sum();
    let initial: i128 = trace.initial.iter().map(state).sum();
    // A message lost counts before the cut when its sender sent it before recording.
    let mut sends: HashMap<MsgId, (usize, &A::Msg)> = HashMap::new();
    let mut lost = 0;
    for (position, e) in trace.events.iter().enumerate() {
        match &e.kind {
            EventKind::Send { id, msg: m, .. } => {
                sends.insert(*id, (position, m));
            }
            EventKind::Lost { id, .. } => {
                let Some(&(sent, m)) = sends.get(id) else { continue };
                let sender = trace.events[sent].process;
                if claim.records.get(sender.index()).copied().flatten().is_some_and(|r| sent < r) {
                    lost += msg(m);
                }
            }
            _ => {}
        }
    }
    let expected = initial - lost;
    (states + channels != expected).then(|| Finding {
        clause: "total",
        message: format!(
            "the snapshot records a total of {} (states {states}, channel records {channels}); the initial total is {initial}{}, so it should be {expected}",
            states + channels,
            if lost == 0 { String::new() } else { format!(", less {lost} lost before the cut") },
        ),
        at: Vec::new(),
        consequences: Vec::new(),
    })
}
