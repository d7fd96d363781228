//! Reading logs: lines parsed and resolved against the topology, each process's events put in
//! its own order, markers resolved, damage cut off, and the run rebuilt in a causal order.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use super::line::{Kind, Line, Location, LogApp, LogId};
use super::logs::{Damage, LogError, LogProblem, Logs, Mislogged, States};
use super::parsed::{Body, Order, Parsed, Sends, Sent, TimeKey};
use crate::check::{Event, EventKind, MsgId, Trace, TraceError};
use crate::protocol::{Application, SnapshotId};
use crate::protocol::{ChannelId, ProcessId, Topology};

fn need<T>(kind: Kind, field: &'static str, value: Option<T>) -> Result<T, LogProblem> {
    value.ok_or(LogProblem::MissingField { kind: kind.name(), field })
}

/// The message of a serde_json error without its position (each line is parsed alone: the
/// position is always line 1), with the column kept.
fn json_message(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    match text.strip_suffix(&suffix) {
        Some(message) => format!("{message} (column {})", e.column()),
        None => text,
    }
}

/// The topology's names: processes and channels as the logs spell them.
pub(super) struct Resolver<'t> {
    topology: &'t Topology,
    pub(super) processes: HashMap<&'t str, ProcessId>,
    channels: HashMap<String, ChannelId>,
}

impl<'t> Resolver<'t> {
    pub(super) fn new(topology: &'t Topology) -> Self {
        let processes = topology.processes().map(|p| (topology.name(p), p)).collect();
        let channels = (0..topology.channels().len())
            .map(|c| ChannelId(c as u32))
            .map(|c| (topology.channel_label(c), c))
            .collect();
        Resolver { topology, processes, channels }
    }

    /// The channel named `name`, with `process` at its `outgoing` (sender) or incoming end.
    pub(super) fn channel(&self, process: ProcessId, name: &str, outgoing: bool) -> Result<ChannelId, LogProblem> {
        let c = *self.channels.get(name).ok_or_else(|| LogProblem::UnknownChannel(name.to_string()))?;
        let ch = self.topology.channel(c);
        let end = if outgoing { ch.from } else { ch.to };
        if end != process {
            return Err(LogProblem::WrongEnd {
                process: self.topology.name(process).to_string(),
                channel: name.to_string(),
                end: if outgoing { "sender" } else { "receiver" },
            });
        }
        Ok(c)
    }

    fn parse<A: LogApp>(&self, text: &str, at: Location, states: &States<A>) -> Result<Parsed<A>, LogError> {
        let err = |problem| LogError::at(&at, problem);
        let mut json = serde_json::Deserializer::from_str(text);
        let line: Line<A::Msg, A::Step, A> = serde_path_to_error::deserialize(&mut json).map_err(|e| {
            let path = e.path().to_string();
            let e = e.into_inner();
            let message = json_message(&e);
            // Valid JSON that is not an event is a bad value, wherever serde stopped.
            let valid = serde_json::from_str::<serde_json::Value>(text);
            let app_field = ["state", "payload", "step"]
                .into_iter()
                .find(|f| path == *f || path.strip_prefix(f).is_some_and(|rest| rest.starts_with(['.', '['])));
            err(match valid {
                Ok(serde_json::Value::Object(mut object)) if app_field.is_some_and(|f| object.contains_key(f)) => {
                    let field = app_field.unwrap_or_default();
                    let value = object.remove(field).unwrap_or_default();
                    LogProblem::AppValue { field, path, message, value }
                }
                Ok(serde_json::Value::Object(_)) if path != "." => LogProblem::BadValue(format!("`{path}`: {message}")),
                Ok(serde_json::Value::Object(_)) => LogProblem::BadValue(message),
                Ok(other) => LogProblem::BadValue(format!(
                    "a line is one JSON object (an event), not {}",
                    match other {
                        serde_json::Value::Array(_) => "an array",
                        serde_json::Value::String(_) => "a string",
                        serde_json::Value::Number(_) => "a number",
                        serde_json::Value::Bool(_) => "a boolean",
                        _ => "null",
                    }
                )),
                Err(_) => LogProblem::Malformed(message),
            })
        })?;
        let kind = line.kind;
        if let Some((field, _)) = line.present().into_iter().find(|(f, there)| *there && !kind.fields().contains(f)) {
            return Err(err(LogProblem::ExtraField { kind: kind.name(), field }));
        }
        let process = *self
            .processes
            .get(line.process.as_str())
            .ok_or_else(|| err(LogProblem::UnknownProcess(line.process.clone())))?;
        let order = match (line.seq, &line.time) {
            (Some(seq), _) => Order::Seq(seq),
            (None, Some(time)) => Order::Time {
                key: TimeKey::parse(time).map_err(|why| err(LogProblem::BadTime(why)))?,
                text: time.to_string(),
            },
            (None, None) => return Err(err(LogProblem::NoOrder)),
        };
        let channel = |outgoing: bool| -> Result<ChannelId, LogProblem> {
            let name = need(kind, "channel", line.channel.as_deref())?;
            self.channel(process, name, outgoing)
        };
        let snapshot = || need(kind, "snapshot", line.snapshot).map(SnapshotId);
        let body = match kind {
            Kind::Send => Body::Send {
                channel: channel(true).map_err(err)?,
                msg: need(kind, "msg", line.msg).map_err(err)?,
                payload: need(kind, "payload", line.payload).map_err(err)?,
            },
            Kind::Receive => {
                Body::Receive { channel: channel(false).map_err(err)?, msg: need(kind, "msg", line.msg).map_err(err)? }
            }
            Kind::Loss => {
                Body::Loss { channel: channel(false).map_err(err)?, msg: need(kind, "msg", line.msg).map_err(err)? }
            }
            Kind::Internal => Body::Internal { step: need(kind, "step", line.step).map_err(err)? },
            Kind::Record => {
                let snapshot = snapshot().map_err(err)?;
                let initiated = need(kind, "initiated", line.initiated).map_err(err)?;
                if line.state.is_none() && matches!(states, States::Interpreted) {
                    return Err(err(LogProblem::MissingField { kind: kind.name(), field: "state" }));
                }
                Body::Record { snapshot, initiated }
            }
            Kind::MarkerSend => Body::MarkerSend {
                snapshot: line.snapshot.map(SnapshotId),
                channel: line.channel.as_deref().map(|c| self.channel(process, c, true)).transpose().map_err(err)?,
            },
            Kind::MarkerReceive => Body::MarkerReceive {
                snapshot: line.snapshot.map(SnapshotId),
                channel: channel(false).map_err(err)?,
                recorded: need(kind, "recorded", line.recorded).map_err(err)?,
            },
        };
        Ok(Parsed { at, process, order, body, state: line.state })
    }
}

/// The process a damaged line names, if its text shows it (`"process":"P1"` before the break).
fn process_named_in(text: &str, resolver: &Resolver<'_>) -> Option<ProcessId> {
    let rest = &text[text.find("\"process\"")? + "\"process\"".len()..];
    let rest = rest.trim_start().strip_prefix(':')?.trim_start().strip_prefix('"')?;
    resolver.processes.get(&rest[..rest.find('"')?]).copied()
}

/// Reads log files (one per process, or any split of the events among files) against
/// `topology`, with `initial[i]` the initial state of process `i`: the run in a causal order,
/// the line of every event, the snapshots the logs claim and the damage found. Errors name the
/// file and line.
pub fn read_logs<A: LogApp>(
    topology: &Topology,
    initial: Vec<A>,
    files: &[PathBuf],
    states: &States<A>,
) -> Result<Logs<A>, LogError> {
    let mut texts = Vec::with_capacity(files.len());
    let mut given: HashMap<PathBuf, String> = HashMap::new();
    for path in files {
        let file = path.display().to_string();
        let io = |e: std::io::Error| LogError::new(file.clone(), 0, LogProblem::Io(e.to_string()));
        // The same file twice would read every event twice.
        if let Ok(canonical) = std::fs::canonicalize(path) {
            if let Some(first) = given.insert(canonical, file.clone()) {
                return Err(LogError::new(file, 0, LogProblem::GivenTwice(first)));
            }
        }
        let bytes = std::fs::read(path).map_err(io)?;
        let text = String::from_utf8(bytes).map_err(|e| {
            let valid = e.utf8_error().valid_up_to();
            let line = e.as_bytes()[..valid].iter().filter(|&&b| b == b'\n').count() + 1;
            LogError::new(file.clone(), line, LogProblem::NotUtf8)
        })?;
        texts.push((file, text));
    }
    parse_logs(topology, initial, &texts, states)
}

/// [`read_logs`] on texts already read: `(file name, text)` pairs.
pub fn parse_logs<A: LogApp>(
    topology: &Topology,
    initial: Vec<A>,
    texts: &[(String, String)],
    states: &States<A>,
) -> Result<Logs<A>, LogError> {
    let file_of = |i: usize| texts.get(i).map_or_else(|| "<logs>".to_string(), |(f, _)| f.clone());
    if initial.len() != topology.len() {
        let problem = LogProblem::InitialStates { expected: topology.len(), got: initial.len() };
        return Err(LogError::new(file_of(0), 0, problem));
    }
    let resolver = Resolver::new(topology);
    let mut damage: Vec<Damage> = Vec::new();
    let mut damaged = vec![false; topology.len()];
    // Every line, by process. A last line cut short (no newline, the JSON unfinished) is damage:
    // the process was stopped while writing it.
    let mut by_process: Vec<Vec<Parsed<A>>> = (0..topology.len()).map(|_| Vec::new()).collect();
    for (file, text) in texts {
        // A byte-order mark is how some writers begin UTF-8 text, not part of the first line.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let count = text.lines().count();
        let mut last_of: Vec<Option<usize>> = vec![None; topology.len()];
        let mut last_read: Option<usize> = None;
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let at = Location { file: file.clone(), line: i + 1 };
            match resolver.parse::<A>(line, at.clone(), states) {
                Ok(parsed) => {
                    last_read = Some(i + 1);
                    let p = parsed.process.index();
                    last_of[p] = Some(by_process[p].len());
                    by_process[p].push(parsed);
                }
                Err(e) if i + 1 == count && !text.ends_with('\n') && matches!(*e.problem, LogProblem::Malformed(_)) => {
                    let process = process_named_in(line, &resolver);
                    let named = process.map(|p| format!(" (a line of {})", topology.name(p))).unwrap_or_default();
                    let last = match last_read {
                        Some(l) => format!("the last event read from it is at {file}:{l}"),
                        None => "no event was read from it".to_string(),
                    };
                    damage.push(Damage {
                        process,
                        at: Some(at),
                        message: format!("the file ends mid-line{named}: the line is not read, and {last}"),
                    });
                    // The process the line names, or else the processes whose lines this file
                    // holds, may have done more than was logged.
                    match process {
                        Some(p) => damaged[p.index()] = true,
                        None => {
                            last_of.iter().enumerate().filter(|(_, l)| l.is_some()).for_each(|(p, _)| damaged[p] = true)
                        }
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }
    for (p, events) in by_process.iter_mut().enumerate() {
        order(events, topology.name(ProcessId(p as u16)))?;
    }
    let by_process = resolve_marker_sends(topology, by_process)?;
    let mut by_process = resolve_marker_receipts(by_process);
    let mut mislogged = Vec::new();
    for events in &mut by_process {
        mislogged.extend(record_after_its_marker(topology, events));
    }
    let any = by_process.iter().any(|e| !e.is_empty());
    for p in topology.processes() {
        if any && by_process[p.index()].is_empty() {
            damaged[p.index()] = true;
            let message = format!("{} has no events in the logs: its log is missing or empty", topology.name(p));
            damage.push(Damage { process: Some(p), at: None, message });
        }
    }
    let sent = sends(&by_process)?;
    check_receipts(topology, &by_process, &sent)?;
    let interpreted = matches!(states, States::Interpreted);
    let dangling = dangling_receipts(topology, &by_process, &sent, interpreted, &mut damage, &mut damaged);
    // The events kept (all but the dangling receipts), with receipts and losses resolved.
    let mut logs: Vec<Vec<Event<A>>> = Vec::with_capacity(by_process.len());
    let mut included: Vec<Vec<usize>> = Vec::with_capacity(by_process.len());
    for (p, events) in by_process.iter().enumerate() {
        let mut log = Vec::with_capacity(events.len());
        let mut indices = Vec::with_capacity(events.len());
        for (index, e) in events.iter().enumerate() {
            if dangling[p].binary_search(&index).is_ok() {
                continue;
            }
            indices.push(index);
            let kind = match &e.body {
                Body::Send { channel, msg, payload } => {
                    EventKind::Send { channel: *channel, id: sent.ids[msg].id, msg: payload.clone() }
                }
                Body::Receive { channel, msg } => EventKind::Receive { channel: *channel, id: sent.ids[msg].id },
                Body::Loss { channel, msg } => EventKind::Lost { channel: *channel, id: sent.ids[msg].id },
                Body::Internal { step } => EventKind::Internal { step: step.clone() },
                Body::Record { snapshot, initiated } => {
                    EventKind::Record { snapshot: *snapshot, initiated: *initiated }
                }
                Body::MarkerSend { snapshot: Some(snapshot), channel: Some(channel) } => {
                    EventKind::MarkerSend { snapshot: *snapshot, channel: *channel }
                }
                Body::MarkerReceive { snapshot: Some(snapshot), channel, .. } => {
                    EventKind::MarkerReceive { snapshot: *snapshot, channel: *channel }
                }
                Body::MarkerSend { .. } | Body::MarkerReceive { .. } => {
                    // Resolved above, or cut off as damage.
                    let what = "a marker whose snapshot cannot be told".to_string();
                    return Err(LogError::at(&e.at, LogProblem::MarkerSnapshot(what)));
                }
            };
            log.push(Event { process: e.process, kind, state: e.state.clone() });
        }
        logs.push(log);
        included.push(indices);
    }
    let trace = Trace::merge(initial, logs).map_err(|e| match e {
        TraceError::Unmergeable { at, .. } => {
            // `at` counts the process's events in the run: its dangling receipts are not there.
            let waiting = &by_process[at.0][included[at.0].get(at.1).copied().unwrap_or(at.1)];
            let (what, sent_at) = match &waiting.body {
                Body::Receive { msg, .. } | Body::Loss { msg, .. } => {
                    (format!("message {msg}"), sent.ids.get(msg).map(|s| s.at.clone()))
                }
                Body::MarkerReceive { snapshot: Some(snapshot), channel, .. } => (
                    format!("the marker of snapshot {snapshot} on {}", topology.channel_label(*channel)),
                    sent.markers
                        .get(&(*snapshot, *channel))
                        .and_then(|m| m.first())
                        .map(|&(q, i)| by_process[q][i].at.clone()),
                ),
                _ => ("an event".to_string(), None),
            };
            LogError::at(&waiting.at, LogProblem::Cycle { what, sent_at })
        }
        other => LogError::new(file_of(0), 0, other.into()),
    })?;
    // Where each event of the merged trace came from: each process's events keep their order.
    let mut next = vec![0usize; topology.len()];
    let origins: Vec<(usize, usize)> = trace
        .events
        .iter()
        .map(|e| {
            let p = e.process.index();
            next[p] += 1;
            (p, included[p][next[p] - 1])
        })
        .collect();
    // With interpreted states, a process's state is unknown from its first receipt of a message
    // the logs never send on: the position of its next event in the trace.
    let mut unknown: Vec<Option<usize>> = vec![None; topology.len()];
    if interpreted {
        let first: Vec<Option<usize>> = dangling
            .iter()
            .enumerate()
            .map(|(p, d)| d.iter().copied().find(|&i| matches!(by_process[p][i].body, Body::Receive { .. })))
            .collect();
        for (position, &(p, index)) in origins.iter().enumerate() {
            if unknown[p].is_none() && first[p].is_some_and(|d| d < index) {
                unknown[p] = Some(position);
            }
        }
    }
    let locations: Vec<Location> = origins.iter().map(|&(p, i)| by_process[p][i].at.clone()).collect();
    trace.validate(topology).map_err(|e| {
        let position = match &e {
            TraceError::NotSent { position, .. }
            | TraceError::MarkerNotSent { position, .. }
            | TraceError::Duplicate { position, .. }
            | TraceError::DuplicateId { position, .. }
            | TraceError::WrongChannel { position, .. }
            | TraceError::UnknownProcess { position, .. } => Some(*position),
            _ => None,
        };
        match position.and_then(|p| locations.get(p)) {
            Some(at) => LogError::at(at, e.into()),
            None => LogError::new(file_of(0), 0, e.into()),
        }
    })?;
    let names: HashMap<MsgId, LogId> = sent.ids.iter().map(|(log_id, s)| (s.id, (*log_id).clone())).collect();
    let context = super::claims::Context {
        topology,
        trace: &trace,
        origins: &origins,
        by_process: &by_process,
        sent: &sent,
        damaged: &damaged,
        mislogged: &mislogged,
        dangling: &dangling,
        states,
    };
    let claims = context.claims();
    let kept = by_process.iter().zip(&dangling).map(|(events, d)| (events.len(), events.len() - d.len())).collect();
    Ok(Logs {
        trace,
        locations,
        claims,
        names,
        damage,
        mislogged,
        kept,
        damaged,
        dangling,
        unknown,
        lines: by_process,
        origins,
    })
}

/// Puts a process's events in its own order: by `seq` (0, 1, 2, … with no gap or repeat), or,
/// when none of its lines has a `seq`, by `time` (strictly increasing).
fn order<A: Application>(events: &mut [Parsed<A>], name: &str) -> Result<(), LogError> {
    let Some(first) = events.first() else { return Ok(()) };
    let (first_at, first_kind) = (first.at.clone(), first.order.name());
    if let Some(other) = events.iter().find(|e| e.order.name() != first_kind) {
        let problem = LogProblem::MixedOrder {
            process: name.to_string(),
            this: other.order.name(),
            other: first_at,
            that: first_kind,
        };
        return Err(LogError::at(&other.at, problem));
    }
    if matches!(first.order, Order::Seq(_)) {
        let seq = |e: &Parsed<A>| match e.order {
            Order::Seq(s) => s,
            Order::Time { .. } => 0,
        };
        events.sort_by_key(seq);
        for i in 0..events.len() {
            let (found, expected) = (seq(&events[i]), i as u64);
            if found == expected {
                continue;
            }
            let process = name.to_string();
            let problem = if i > 0 && seq(&events[i - 1]) == found {
                LogProblem::SeqRepeated { process, seq: found, first: events[i - 1].at.clone() }
            } else {
                LogProblem::SeqGap { process, expected, found }
            };
            return Err(LogError::at(&events[i].at, problem));
        }
        return Ok(());
    }
    let key = |e: &Parsed<A>| match &e.order {
        Order::Time { key, .. } => *key,
        Order::Seq(s) => TimeKey::Integer(i128::from(*s)),
    };
    let stamped = |k: TimeKey| matches!(k, TimeKey::Stamp(_));
    if let Some(other) = events.iter().find(|e| stamped(key(e)) != stamped(key(&events[0]))) {
        return Err(LogError::at(
            &other.at,
            LogProblem::MixedTimes { process: name.to_string(), other: events[0].at.clone() },
        ));
    }
    events.sort_by(|a, b| key(a).compare(key(b)).unwrap_or(Ordering::Equal));
    for pair in events.windows(2) {
        if key(&pair[0]).compare(key(&pair[1])) != Some(Ordering::Less) {
            let time = match &pair[1].order {
                Order::Time { text, .. } => text.clone(),
                Order::Seq(s) => s.to_string(),
            };
            let (first, second) = if pair[0].at <= pair[1].at { (&pair[0], &pair[1]) } else { (&pair[1], &pair[0]) };
            let problem = LogProblem::TimeTie { process: name.to_string(), time, other: first.at.clone() };
            return Err(LogError::at(&second.at, problem));
        }
    }
    Ok(())
}

/// A `marker-send` without `channel` is one on each outgoing channel; one without `snapshot`
/// belongs to the snapshot its process recorded last.
fn resolve_marker_sends<A: Application>(
    topology: &Topology,
    by_process: Vec<Vec<Parsed<A>>>,
) -> Result<Vec<Vec<Parsed<A>>>, LogError> {
    let mut out = Vec::with_capacity(by_process.len());
    for (p, events) in by_process.into_iter().enumerate() {
        let process = ProcessId(p as u16);
        let mut resolved = Vec::with_capacity(events.len());
        let mut last_record = None;
        for e in events {
            match &e.body {
                Body::Record { snapshot, .. } => last_record = Some(*snapshot),
                Body::MarkerSend { snapshot, channel } => {
                    let snapshot = match snapshot.or(last_record) {
                        Some(s) => s,
                        None => {
                            let what = format!(
                                "a marker-send without `snapshot` belongs to the snapshot its process recorded last, but {} has not recorded yet",
                                topology.name(process)
                            );
                            return Err(LogError::at(&e.at, LogProblem::MarkerSnapshot(what)));
                        }
                    };
                    let channels = match channel {
                        Some(c) => vec![*c],
                        None => topology.outgoing(process).to_vec(),
                    };
                    for c in channels {
                        let mut one = e.clone();
                        one.body = Body::MarkerSend { snapshot: Some(snapshot), channel: Some(c) };
                        resolved.push(one);
                    }
                    continue;
                }
                _ => {}
            }
            resolved.push(e);
        }
        out.push(resolved);
    }
    Ok(out)
}

/// A `marker-receive` without `snapshot`: the k-th marker received on a channel is the k-th
/// sent on it (markers keep their order). One with no k-th sending stays unresolved: damage.
fn resolve_marker_receipts<A: Application>(mut by_process: Vec<Vec<Parsed<A>>>) -> Vec<Vec<Parsed<A>>> {
    let mut sent: HashMap<ChannelId, Vec<SnapshotId>> = HashMap::new();
    for e in by_process.iter().flatten() {
        if let Body::MarkerSend { snapshot: Some(s), channel: Some(c) } = e.body {
            sent.entry(c).or_default().push(s);
        }
    }
    for events in &mut by_process {
        let mut count: HashMap<ChannelId, usize> = HashMap::new();
        for e in events {
            if let Body::MarkerReceive { snapshot, channel, .. } = &mut e.body {
                let k = count.entry(*channel).or_default();
                if snapshot.is_none() {
                    *snapshot = sent.get(channel).and_then(|s| s.get(*k)).copied();
                }
                *k += 1;
            }
        }
    }
    by_process
}

/// Whether an event (`body`) may be logged between a non-initiator's `record` of `snapshot` and
/// the later `marker-receive` that caused it: `Some(None)` for its own marker-sends of the
/// snapshot; `Some(Some(channel))` for a receipt (of a message, a loss, another snapshot's
/// marker) on `channel`, which may be there when that is not the marker's channel — another
/// thread's, on either side of the one atomic step; `None` for anything else.
fn may_be_between<M, S>(body: &Body<M, S>, snapshot: SnapshotId) -> Option<Option<ChannelId>> {
    match body {
        Body::MarkerSend { snapshot: Some(s), .. } if *s == snapshot => Some(None),
        Body::Receive { channel, .. } | Body::Loss { channel, .. } => Some(Some(*channel)),
        Body::MarkerReceive { snapshot: Some(s), channel, .. } if *s != snapshot => Some(Some(*channel)),
        _ => None,
    }
}

/// A non-initiator's `record` logged before the `marker-receive` that caused it, with at most
/// its own marker-sends and receipts on other channels between, is read with the receipt moved
/// back to just before it: the record and the receipt are one atomic step, at the record's line
/// (where its state was recorded), and the receipts between come after it. With anything else
/// between, the record and its cause are logged apart: a logging error, returned.
fn record_after_its_marker<A: Application>(topology: &Topology, events: &mut [Parsed<A>]) -> Vec<Mislogged> {
    let mut mislogged = Vec::new();
    let mut marked: HashSet<SnapshotId> = HashSet::new();
    let mut i = 0;
    while i < events.len() {
        match events[i].body {
            Body::MarkerReceive { snapshot: Some(s), .. } => {
                marked.insert(s);
            }
            Body::Record { snapshot, initiated: false } if !marked.contains(&snapshot) => {
                let cause = (i + 1..events.len()).find(
                    |&j| matches!(events[j].body, Body::MarkerReceive { snapshot: Some(s), .. } if s == snapshot),
                );
                if let Some(j) = cause {
                    let Body::MarkerReceive { channel, .. } = events[j].body else { unreachable!("found above") };
                    let misplaced = (i + 1..j).find(|&k| match may_be_between(&events[k].body, snapshot) {
                        Some(on) => on == Some(channel),
                        None => true,
                    });
                    match misplaced {
                        None => {
                            // The receipt is now at i and the record after it, where the next
                            // round finds its snapshot marked.
                            events[i..=j].rotate_right(1);
                            marked.insert(snapshot);
                        }
                        Some(k) => {
                            let name = topology.name(events[i].process);
                            let (record, marker, between) =
                                (events[i].at.clone(), events[j].at.clone(), events[k].at.clone());
                            let what = describe(topology, &events[k].body);
                            mislogged.push(Mislogged {
                                process: events[i].process,
                                snapshot,
                                message: format!(
                                    "{name} logs its record for snapshot {snapshot} (at {record}) before the marker receipt that caused it (at {marker}), with {what} (at {between}) between them, which cannot happen between a marker's receipt and the record it causes: a logging error (another thread's line between the two?), not a verdict on the algorithm; log the record and the marker receipt as one atomic step"
                                ),
                                record,
                                marker,
                                between,
                            });
                        }
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    mislogged
}

/// An event, in words, for a logging error (`a send on P0->P1`).
fn describe<M, S>(topology: &Topology, body: &Body<M, S>) -> String {
    let on = |c: &ChannelId| topology.channel_label(*c);
    match body {
        Body::Send { channel, msg, .. } => format!("a send of message {msg} on {}", on(channel)),
        Body::Receive { channel, msg } => {
            format!("a receipt of message {msg} on {}, the marker's channel", on(channel))
        }
        Body::Loss { channel, msg } => format!("a loss of message {msg} on {}, the marker's channel", on(channel)),
        Body::Internal { .. } => "an internal step".to_string(),
        Body::Record { snapshot, .. } => format!("a record for snapshot {snapshot}"),
        Body::MarkerSend { snapshot: Some(s), .. } => format!("a marker-send of snapshot {s}"),
        Body::MarkerSend { .. } => "a marker-send".to_string(),
        Body::MarkerReceive { snapshot: Some(s), channel, .. } => {
            format!("a receipt of a marker of snapshot {s} on {}", on(channel))
        }
        Body::MarkerReceive { channel, .. } => format!("a receipt of a marker on {}", on(channel)),
    }
}

/// The sends: each id once; the messages get the ids the drivers give them.
fn sends<A: Application>(by_process: &[Vec<Parsed<A>>]) -> Result<Sends<'_>, LogError> {
    let mut ids: HashMap<&LogId, Sent<'_>> = HashMap::new();
    let mut markers: HashMap<(SnapshotId, ChannelId), Vec<(usize, usize)>> = HashMap::new();
    for (p, events) in by_process.iter().enumerate() {
        let mut count = 0;
        for (index, e) in events.iter().enumerate() {
            match &e.body {
                Body::Send { channel, msg, .. } => {
                    if let Some(first) = ids.get(msg) {
                        let problem = LogProblem::DuplicateId { id: msg.clone(), first: first.at.clone() };
                        return Err(LogError::at(&e.at, problem));
                    }
                    let id = MsgId::new(ProcessId(p as u16), count);
                    count += 1;
                    ids.insert(msg, Sent { id, channel: *channel, at: &e.at, process: p, index });
                }
                Body::MarkerSend { snapshot: Some(s), channel: Some(c) } => {
                    markers.entry((*s, *c)).or_default().push((p, index));
                }
                _ => {}
            }
        }
    }
    Ok(Sends { ids, markers })
}

/// A message received or lost on another channel than its send's, or twice, is a bad log.
fn check_receipts<A: Application>(
    topology: &Topology,
    by_process: &[Vec<Parsed<A>>],
    sent: &Sends<'_>,
) -> Result<(), LogError> {
    let mut gone: HashMap<&LogId, &Location> = HashMap::new();
    for e in by_process.iter().flatten() {
        let (Body::Receive { channel, msg } | Body::Loss { channel, msg }) = &e.body else { continue };
        let what = if matches!(e.body, Body::Receive { .. }) { "receipt" } else { "loss" };
        if let Some(send) = sent.ids.get(msg) {
            if send.channel != *channel {
                return Err(LogError::at(
                    &e.at,
                    LogProblem::OtherChannel {
                        what,
                        id: msg.clone(),
                        channel: topology.channel_label(*channel),
                        sent_on: topology.channel_label(send.channel),
                        sent_at: send.at.clone(),
                    },
                ));
            }
        }
        if let Some(first) = gone.insert(msg, &e.at) {
            return Err(LogError::at(&e.at, LogProblem::ReceivedTwice { id: msg.clone(), first: first.clone() }));
        }
    }
    Ok(())
}

/// The receipts (of a message or a marker) and losses whose sending no log holds: the
/// sender's log is incomplete (damage, one report per receiving process). Only they are left
/// out of the run: the receiver's other events are whole. What depends on one is not judged —
/// the snapshots whose cut or channel records it may belong to ([`super::claims`]), and with
/// `interpreted` states the receiver's states after a message's receipt ([`Logs::unknown`]).
/// Returns each process's dangling events, by index among its events.
fn dangling_receipts<A: Application>(
    topology: &Topology,
    by_process: &[Vec<Parsed<A>>],
    sent: &Sends<'_>,
    interpreted: bool,
    damage: &mut Vec<Damage>,
    damaged: &mut [bool],
) -> Vec<Vec<usize>> {
    let mut dangling: Vec<Vec<usize>> = vec![Vec::new(); by_process.len()];
    for (q, events) in by_process.iter().enumerate() {
        let mut count: HashMap<(SnapshotId, ChannelId), usize> = HashMap::new();
        for (i, e) in events.iter().enumerate() {
            let never_sent = match &e.body {
                Body::Receive { msg, .. } | Body::Loss { msg, .. } => !sent.ids.contains_key(msg),
                Body::MarkerReceive { snapshot: Some(s), channel, .. } => {
                    let k = count.entry((*s, *channel)).or_default();
                    *k += 1;
                    sent.markers.get(&(*s, *channel)).and_then(|m| m.get(*k - 1)).is_none()
                }
                Body::MarkerReceive { snapshot: None, .. } => true,
                _ => false,
            };
            if never_sent {
                dangling[q].push(i);
            }
        }
        let Some(&first) = dangling[q].first() else { continue };
        let e = &events[first];
        let (channel, what, message) = match &e.body {
            Body::Receive { channel, msg } => (*channel, format!("receives message {msg}"), true),
            Body::Loss { channel, msg } => (*channel, format!("loses message {msg}"), false),
            Body::MarkerReceive { snapshot: Some(s), channel, .. } => {
                (*channel, format!("receives a marker of snapshot {s}"), false)
            }
            Body::MarkerReceive { channel, .. } => (*channel, "receives a marker".to_string(), false),
            _ => continue,
        };
        let from = topology.channel(channel).from;
        damaged[from.index()] = true;
        let (receiver, sender, label) =
            (topology.name(ProcessId(q as u16)), topology.name(from), topology.channel_label(channel));
        let last = match by_process[from.index()].last() {
            Some(l) => format!(" (it ends at {})", l.at),
            None => " (it has no events)".to_string(),
        };
        let states = if interpreted && message { format!(", nor {receiver}'s states after it") } else { String::new() };
        let more = match dangling[q].len() - 1 {
            0 => String::new(),
            1 => format!(" ({receiver} has 1 more such receipt)"),
            n => format!(" ({receiver} has {n} more such receipts)"),
        };
        damage.push(Damage {
            process: Some(from),
            at: Some(e.at.clone()),
            message: format!(
                "{receiver} {what} on {label} that {sender}'s log never sends: {sender}'s log is incomplete{last}, and the snapshots whose cut or channel records this may belong to are not judged{states}{more}"
            ),
        });
    }
    dangling
}
