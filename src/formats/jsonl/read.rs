//! Reading logs: lines parsed and resolved against the topology, each process's events put in
//! its own order, damage cut off, and the run rebuilt in a causal order.

use super::*;
/// One event line, checked and resolved against the topology.
struct Parsed<A: Application> {
    at: Location,
    process: ProcessId,
    seq: u64,
    body: Body<A::Msg, A::Step>,
    state: Option<A>,
}

enum Body<M, S> {
    Send { channel: ChannelId, msg: LogId, payload: M },
    Receive { channel: ChannelId, msg: LogId },
    Loss { channel: ChannelId, msg: LogId },
    Internal { step: S },
    Record { snapshot: SnapshotId, initiated: bool },
    MarkerSend { snapshot: SnapshotId, channel: ChannelId },
    MarkerReceive { snapshot: SnapshotId, channel: ChannelId, recorded: Vec<LogId> },
}

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

struct Resolver<'t> {
    topology: &'t Topology,
    processes: HashMap<&'t str, ProcessId>,
    channels: HashMap<String, ChannelId>,
}

impl<'t> Resolver<'t> {
    fn new(topology: &'t Topology) -> Self {
        let processes = topology.processes().map(|p| (topology.name(p), p)).collect();
        let channels = (0..topology.channels().len())
            .map(|c| ChannelId(c as u32))
            .map(|c| (topology.channel_label(c), c))
            .collect();
        Resolver { topology, processes, channels }
    }

    /// The channel named `name`, with `process` at its `outgoing` (sender) or incoming end.
    fn channel(&self, process: ProcessId, name: &str, outgoing: bool) -> Result<ChannelId, LogProblem> {
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

    fn parse<A: LogApp>(&self, text: &str, at: Location) -> Result<Parsed<A>, LogError> {
        let err = |problem| LogError::at(&at, problem);
        let line: Line<A::Msg, A::Step, A> = serde_json::from_str(text).map_err(|e| {
            let message = json_message(&e);
            err(match e.classify() {
                serde_json::error::Category::Data => LogProblem::BadValue(message),
                _ => LogProblem::Malformed(message),
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
                if line.state.is_none() {
                    return Err(err(LogProblem::MissingField { kind: kind.name(), field: "state" }));
                }
                Body::Record { snapshot, initiated }
            }
            Kind::MarkerSend => {
                Body::MarkerSend { snapshot: snapshot().map_err(err)?, channel: channel(true).map_err(err)? }
            }
            Kind::MarkerReceive => Body::MarkerReceive {
                snapshot: snapshot().map_err(err)?,
                channel: channel(false).map_err(err)?,
                recorded: need(kind, "recorded", line.recorded).map_err(err)?,
            },
        };
        Ok(Parsed { at, process, seq: line.seq, body, state: line.state })
    }
}

/// Reads log files (one per process, or any split of the events among files) against
/// `topology`, with `initial[i]` the initial state of process `i`: the run in a causal order,
/// the line of every event, and the snapshots the logs claim. Errors name the file and line.
pub fn read_logs<A: LogApp>(topology: &Topology, initial: Vec<A>, files: &[PathBuf]) -> Result<Logs<A>, LogError> {
    let mut texts = Vec::with_capacity(files.len());
    for path in files {
        let file = path.display().to_string();
        let text =
            std::fs::read_to_string(path).map_err(|e| LogError::new(file.clone(), 0, LogProblem::Io(e.to_string())))?;
        texts.push((file, text));
    }
    parse_logs(topology, initial, &texts)
}

/// [`read_logs`] on texts already read: `(file name, text)` pairs.
pub fn parse_logs<A: LogApp>(
    topology: &Topology,
    initial: Vec<A>,
    texts: &[(String, String)],
) -> Result<Logs<A>, LogError> {
    let file_of = |i: usize| texts.get(i).map_or_else(|| "<logs>".to_string(), |(f, _)| f.clone());
    if initial.len() != topology.len() {
        let problem = LogProblem::InitialStates { expected: topology.len(), got: initial.len() };
        return Err(LogError::new(file_of(0), 0, problem));
    }
    let resolver = Resolver::new(topology);
    let name = |p: ProcessId| topology.name(p).to_string();
    // Every line, by process.
    let mut by_process: Vec<Vec<Parsed<A>>> = (0..topology.len()).map(|_| Vec::new()).collect();
    for (file, text) in texts {
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let parsed = resolver.parse::<A>(line, Location { file: file.clone(), line: i + 1 })?;
            by_process[parsed.process.index()].push(parsed);
        }
    }
    // Each process's events in seq order: 0, 1, 2, ...
    for (p, events) in by_process.iter_mut().enumerate() {
        events.sort_by_key(|e| e.seq);
        for i in 0..events.len() {
            let (seq, expected) = (events[i].seq, i as u64);
            if seq == expected {
                continue;
            }
            let process = name(ProcessId(p as u16));
            let problem = if i > 0 && events[i - 1].seq == seq {
                LogProblem::SeqRepeated { process, seq, first: events[i - 1].at.clone() }
            } else {
                LogProblem::SeqGap { process, expected, found: seq }
            };
            return Err(LogError::at(&events[i].at, problem));
        }
    }
    // The sends: each id once; the messages get the ids the drivers give them.
    struct Sent<'a> {
        id: MsgId,
        channel: ChannelId,
        at: &'a Location,
    }
    let mut sent: HashMap<&LogId, Sent<'_>> = HashMap::new();
    let mut markers_sent: HashMap<(SnapshotId, ChannelId), (usize, &Location)> = HashMap::new();
    for (p, events) in by_process.iter().enumerate() {
        let mut count = 0;
        for e in events {
            match &e.body {
                Body::Send { channel, msg, .. } => {
                    if let Some(first) = sent.get(msg) {
                        let problem = LogProblem::DuplicateId { id: msg.clone(), first: first.at.clone() };
                        return Err(LogError::at(&e.at, problem));
                    }
                    let id = MsgId::new(ProcessId(p as u16), count);
                    count += 1;
                    sent.insert(msg, Sent { id, channel: *channel, at: &e.at });
                }
                Body::MarkerSend { snapshot, channel } => {
                    markers_sent.entry((*snapshot, *channel)).or_insert((0, &e.at)).0 += 1;
                }
                _ => {}
            }
        }
    }
    // The events, with receipts, losses and records resolved.
    let mut gone: HashMap<&LogId, &Location> = HashMap::new();
    let mut markers_received: HashMap<(SnapshotId, ChannelId), usize> = HashMap::new();
    let mut logs: Vec<Vec<Event<A>>> = Vec::with_capacity(by_process.len());
    let mut recorded_ids: HashMap<(usize, usize), Vec<MsgId>> = HashMap::new();
    for (p, events) in by_process.iter().enumerate() {
        let mut log = Vec::with_capacity(events.len());
        for (index, e) in events.iter().enumerate() {
            let err = |problem| LogError::at(&e.at, problem);
            let kind = match &e.body {
                Body::Send { channel, msg, payload } => {
                    EventKind::Send { channel: *channel, id: sent[msg].id, msg: (*payload).clone() }
                }
                Body::Receive { channel, msg } | Body::Loss { channel, msg } => {
                    let what = if matches!(e.body, Body::Receive { .. }) { "receipt" } else { "loss" };
                    let send = sent.get(msg).ok_or_else(|| err(LogProblem::NeverSent { what, id: msg.clone() }))?;
                    if send.channel != *channel {
                        return Err(err(LogProblem::OtherChannel {
                            what,
                            id: msg.clone(),
                            channel: topology.channel_label(*channel),
                            sent_on: topology.channel_label(send.channel),
                            sent_at: send.at.clone(),
                        }));
                    }
                    if let Some(first) = gone.insert(msg, &e.at) {
                        return Err(err(LogProblem::ReceivedTwice { id: msg.clone(), first: first.clone() }));
                    }
                    match e.body {
                        Body::Receive { .. } => EventKind::Receive { channel: *channel, id: send.id },
                        _ => EventKind::Lost { channel: *channel, id: send.id },
                    }
                }
                Body::Internal { step } => EventKind::Internal { step: step.clone() },
                Body::Record { snapshot, initiated } => {
                    EventKind::Record { snapshot: *snapshot, initiated: *initiated }
                }
                Body::MarkerSend { snapshot, channel } => {
                    EventKind::MarkerSend { snapshot: *snapshot, channel: *channel }
                }
                Body::MarkerReceive { snapshot, channel, recorded } => {
                    let received = markers_received.entry((*snapshot, *channel)).or_default();
                    *received += 1;
                    if markers_sent.get(&(*snapshot, *channel)).map_or(0, |(n, _)| *n) < *received {
                        let channel = topology.channel_label(*channel);
                        return Err(err(LogProblem::MarkerNeverSent { snapshot: *snapshot, channel }));
                    }
                    let ids = recorded
                        .iter()
                        .map(|m| {
                            sent.get(m).map(|s| s.id).ok_or_else(|| LogProblem::RecordedNeverSent { id: m.clone() })
                        })
                        .collect::<Result<Vec<_>, _>>()
                        .map_err(err)?;
                    recorded_ids.insert((p, index), ids);
                    EventKind::MarkerReceive { snapshot: *snapshot, channel: *channel }
                }
            };
            log.push(Event { process: e.process, kind, state: e.state.clone() });
        }
        logs.push(log);
    }
    let location = |(p, index): (usize, usize)| by_process[p][index].at.clone();
    let trace = Trace::merge(initial, logs).map_err(|e| match e {
        TraceError::Unmergeable { at, what, .. } => {
            let waiting = &by_process[at.0][at.1];
            let sent_at = match &waiting.body {
                Body::Receive { msg, .. } | Body::Loss { msg, .. } => sent.get(msg).map(|s| s.at.clone()),
                Body::MarkerReceive { snapshot, channel, .. } => {
                    markers_sent.get(&(*snapshot, *channel)).map(|(_, at)| (*at).clone())
                }
                _ => None,
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
            (p, next[p] - 1)
        })
        .collect();
    let locations: Vec<Location> = origins.iter().map(|&o| location(o)).collect();
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
    let claims = super::claims::claims(topology, &trace, &origins, &recorded_ids);
    let names = sent.iter().map(|(log_id, s)| (s.id, (*log_id).clone())).collect();
    Ok(Logs { trace, locations, claims, names })
}

