//! Writing a run of this crate's runtime or simulator as logs.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use thiserror::Error;

use super::line::{Kind, Line, LogApp, LogId};
use crate::check::{EventKind, MsgId, Trace, TraceError};
use crate::protocol::{ChannelId, ProcessId, Topology};
use crate::protocol::{GlobalSnapshot, SnapshotId};

/// Why a run could not be written as logs.
#[derive(Debug, Error)]
pub enum WriteError {
    /// A file or the directory could not be written.
    #[error("cannot write {path}: {message}")]
    Io {
        /// The path.
        path: String,
        /// The error.
        message: String,
    },
    /// A process name that cannot be a file name (or a `.top` node id).
    #[error("process name {0:?} cannot name a log file and a .top node")]
    BadName(String),
    /// Not one token count per process.
    #[error("{got} token counts for {expected} processes")]
    Tokens {
        /// Processes.
        expected: usize,
        /// Counts given.
        got: usize,
    },
    /// The run was not traced (the runtime's `Options::trace` was off).
    #[error("the run was not traced: there are no events to write")]
    Untraced,
    /// The trace is malformed.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// A snapshot not shaped like the topology.
    #[error("snapshot {0} does not have one state per process and one record per channel")]
    Shape(SnapshotId),
    /// An assembled snapshot whose channel record no marker receipt in the trace closed.
    #[error("snapshot {snapshot}: the record of {channel} is assembled, but the trace has no receipt of its marker")]
    NoClose {
        /// The snapshot.
        snapshot: SnapshotId,
        /// The channel.
        channel: String,
    },
    /// An assembled snapshot holding a message never sent on its channel.
    #[error("snapshot {snapshot}: the record of {channel} holds {message}, which was never sent on it")]
    Unmatched {
        /// The snapshot.
        snapshot: SnapshotId,
        /// The channel.
        channel: String,
        /// The message, printed.
        message: String,
    },
    /// A record event with no state to write.
    #[error("event {position}: a record with no state")]
    NoState {
        /// Its position in the trace.
        position: usize,
    },
    /// A state or message serde could not write.
    #[error("cannot write event {position} as JSON: {message}")]
    Json {
        /// Its position in the trace.
        position: usize,
        /// The error.
        message: String,
    },
}

/// Writes a run as `DIR/<process>.jsonl` (one file per process, every process gets one) and
/// `DIR/topology.top` (with `tokens[i]` for process `i`), creating `DIR` if needed. Returns the
/// log files, in process order. See the module docs for what the lines carry.
pub fn write_logs<A: LogApp>(
    dir: &Path,
    topology: &Topology,
    tokens: &[u32],
    trace: &Trace<A>,
    snapshots: &[GlobalSnapshot<A>],
) -> Result<Vec<PathBuf>, WriteError> {
    if tokens.len() != topology.len() {
        return Err(WriteError::Tokens { expected: topology.len(), got: tokens.len() });
    }
    for name in topology.names() {
        let bad = name.is_empty() || name == "." || name == ".." || name.contains(['/', '\\']);
        if bad {
            return Err(WriteError::BadName(name.clone()));
        }
    }
    let top = crate::formats::top::write(topology, tokens).ok_or_else(|| {
        let bad =
            topology.names().iter().find(|n| n.starts_with('#') || n.contains(char::is_whitespace) || n.contains("->"));
        WriteError::BadName(bad.cloned().unwrap_or_default())
    })?;
    let lines = to_lines(topology, trace, snapshots)?;
    let io =
        |path: &Path, e: std::io::Error| WriteError::Io { path: path.display().to_string(), message: e.to_string() };
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let path = dir.join("topology.top");
    std::fs::write(&path, top).map_err(|e| io(&path, e))?;
    let mut files = Vec::with_capacity(lines.len());
    for (p, lines) in topology.processes().zip(lines) {
        let path = dir.join(format!("{}.jsonl", topology.name(p)));
        let mut text = lines.join("\n");
        if !text.is_empty() {
            text.push('\n');
        }
        std::fs::write(&path, text).map_err(|e| io(&path, e))?;
        files.push(path);
    }
    Ok(files)
}

/// The lines of each process's log (by process index), as [`write_logs`] writes them.
pub(crate) fn to_lines<A: LogApp>(
    topology: &Topology,
    trace: &Trace<A>,
    snapshots: &[GlobalSnapshot<A>],
) -> Result<Vec<Vec<String>>, WriteError> {
    trace.validate(topology)?;
    let events = &trace.events;
    let mut first_record: HashMap<(SnapshotId, ProcessId), usize> = HashMap::new();
    let mut first_close: HashMap<(SnapshotId, ChannelId), usize> = HashMap::new();
    let mut sends: HashMap<MsgId, &A::Msg> = HashMap::new();
    for (position, e) in events.iter().enumerate() {
        match &e.kind {
            EventKind::Record { snapshot, .. } => {
                first_record.entry((*snapshot, e.process)).or_insert(position);
            }
            EventKind::MarkerReceive { snapshot, channel } => {
                first_close.entry((*snapshot, *channel)).or_insert(position);
            }
            EventKind::Send { id, msg, .. } => {
                sends.insert(*id, msg);
            }
            _ => {}
        }
    }
    // The receipts on `channel` at its receiver after its record of `snapshot`, before `end`.
    let window = |snapshot: SnapshotId, channel: ChannelId, end: usize| -> Vec<MsgId> {
        let receiver = topology.channel(channel).to;
        let start = first_record.get(&(snapshot, receiver)).map_or(end, |&r| r + 1);
        events[start.min(end)..end]
            .iter()
            .filter_map(|e| match e.kind {
                EventKind::Receive { channel: c, id } if c == channel => Some(id),
                _ => None,
            })
            .collect()
    };
    // What each assembled snapshot claims: the recorded states, and the records as message ids.
    let mut states: HashMap<(SnapshotId, ProcessId), &A> = HashMap::new();
    let mut claimed: HashMap<(SnapshotId, ChannelId), Vec<MsgId>> = HashMap::new();
    for s in snapshots {
        if s.state.processes.len() != topology.len() || s.state.channels.len() != topology.channels().len() {
            return Err(WriteError::Shape(s.id));
        }
        for (p, state) in topology.processes().zip(&s.state.processes) {
            states.insert((s.id, p), state);
        }
        for (c, record) in s.state.channels.iter().enumerate() {
            let channel = ChannelId(c as u32);
            let label = || topology.channel_label(channel);
            let Some(&close) = first_close.get(&(s.id, channel)) else {
                return Err(WriteError::NoClose { snapshot: s.id, channel: label() });
            };
            let candidates = window(s.id, channel, close);
            let all_sent: Vec<MsgId> = events
                .iter()
                .filter_map(|e| match e.kind {
                    EventKind::Send { channel: c, id, .. } if c == channel => Some(id),
                    _ => None,
                })
                .collect();
            let mut used: Vec<MsgId> = Vec::with_capacity(record.len());
            for message in record {
                let matches = |id: &&MsgId| sends.get(*id).is_some_and(|m| *m == message);
                let fresh = |id: &&MsgId| !used.contains(*id);
                let id = candidates
                    .iter()
                    .filter(fresh)
                    .find(matches)
                    .or_else(|| all_sent.iter().filter(fresh).find(matches))
                    .or_else(|| all_sent.iter().find(matches))
                    .copied()
                    .ok_or_else(|| WriteError::Unmatched {
                        snapshot: s.id,
                        channel: label(),
                        message: format!("{message:?}"),
                    })?;
                used.push(id);
            }
            claimed.insert((s.id, channel), used);
        }
    }
    let mut lines: Vec<Vec<String>> = vec![Vec::new(); topology.len()];
    for (position, e) in events.iter().enumerate() {
        let out = &mut lines[e.process.index()];
        let spell = |id: MsgId| LogId(id.to_string());
        let mut line: Line<&A::Msg, &A::Step, &A> = Line {
            process: topology.name(e.process).to_string(),
            seq: Some(out.len() as u64),
            time: None,
            kind: Kind::Internal,
            snapshot: None,
            channel: None,
            msg: None,
            payload: None,
            step: None,
            initiated: None,
            recorded: None,
            state: e.state.as_ref(),
        };
        match &e.kind {
            EventKind::Send { channel, id, msg } => {
                line.kind = Kind::Send;
                line.channel = Some(topology.channel_label(*channel));
                line.msg = Some(spell(*id));
                line.payload = Some(msg);
            }
            EventKind::Receive { channel, id } | EventKind::Lost { channel, id } => {
                line.kind = if matches!(e.kind, EventKind::Receive { .. }) { Kind::Receive } else { Kind::Loss };
                line.channel = Some(topology.channel_label(*channel));
                line.msg = Some(spell(*id));
            }
            EventKind::Internal { step } => line.step = Some(step),
            EventKind::Record { snapshot, initiated } => {
                line.kind = Kind::Record;
                line.snapshot = Some(snapshot.0);
                line.initiated = Some(*initiated);
                let first = first_record.get(&(*snapshot, e.process)) == Some(&position);
                if let Some(state) = states.get(&(*snapshot, e.process)).filter(|_| first) {
                    line.state = Some(*state);
                }
                if line.state.is_none() {
                    return Err(WriteError::NoState { position });
                }
            }
            EventKind::MarkerSend { snapshot, channel } => {
                line.kind = Kind::MarkerSend;
                line.snapshot = Some(snapshot.0);
                line.channel = Some(topology.channel_label(*channel));
            }
            EventKind::MarkerReceive { snapshot, channel } => {
                line.kind = Kind::MarkerReceive;
                line.snapshot = Some(snapshot.0);
                line.channel = Some(topology.channel_label(*channel));
                let first = first_close.get(&(*snapshot, *channel)) == Some(&position);
                let ids = match claimed.get(&(*snapshot, *channel)).filter(|_| first) {
                    Some(ids) => ids.clone(),
                    None => window(*snapshot, *channel, position),
                };
                line.recorded = Some(ids.into_iter().map(spell).collect());
            }
        }
        let text = serde_json::to_string(&line).map_err(|e| WriteError::Json { position, message: e.to_string() })?;
        out.push(text);
    }
    Ok(lines)
}
