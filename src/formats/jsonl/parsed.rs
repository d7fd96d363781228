//! An event line checked and resolved against the topology, and the sends of the logs.

use std::cmp::Ordering;
use std::collections::HashMap;

use super::line::{Location, LogId};
use crate::check::MsgId;
use crate::protocol::{Application, SnapshotId};
use crate::protocol::{ChannelId, ProcessId};

/// One event line, checked and resolved against the topology.
#[derive(Clone, Debug, PartialEq)]
pub struct Parsed<A: Application> {
    /// Where it is.
    pub at: Location,
    /// Whose event it is.
    pub process: ProcessId,
    pub(super) order: Order,
    /// What happened, with the logs' own message ids.
    pub body: Body<A::Msg, A::Step>,
    /// The state logged with it.
    pub state: Option<A>,
}

/// What orders a process's events: `seq`, or `time` when its logs have no `seq`.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Order {
    Seq(u64),
    Time { key: TimeKey, text: String },
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum TimeKey {
    Integer(i128),
    Float(f64),
    /// An RFC 3339 timestamp, in nanoseconds since the Unix epoch.
    Stamp(i128),
}

impl TimeKey {
    /// `None` when the two cannot be compared (a number and a timestamp).
    pub(super) fn compare(self, other: TimeKey) -> Option<Ordering> {
        match (self, other) {
            (TimeKey::Integer(a), TimeKey::Integer(b)) | (TimeKey::Stamp(a), TimeKey::Stamp(b)) => Some(a.cmp(&b)),
            (TimeKey::Integer(a), TimeKey::Float(b)) => (a as f64).partial_cmp(&b),
            (TimeKey::Float(a), TimeKey::Integer(b)) => a.partial_cmp(&(b as f64)),
            (TimeKey::Float(a), TimeKey::Float(b)) => a.partial_cmp(&b),
            _ => None,
        }
    }

    /// The time `value` names; what is wrong with it otherwise (for `LogProblem::BadTime`).
    pub(super) fn parse(value: &serde_json::Value) -> Result<TimeKey, String> {
        match value {
            serde_json::Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
                (Some(i), ..) => Ok(TimeKey::Integer(i128::from(i))),
                (_, Some(u), _) => Ok(TimeKey::Integer(i128::from(u))),
                // JSON numbers are finite: serde_json refuses 1e400.
                (.., Some(f)) => Ok(TimeKey::Float(f)),
                _ => Err(n.to_string()),
            },
            serde_json::Value::String(s) => s
                .parse::<jiff::Timestamp>()
                .map(|t| TimeKey::Stamp(t.as_nanosecond()))
                .map_err(|e| format!("{s:?}: {e}")),
            other => Err(other.to_string()),
        }
    }
}

// A time is a JSON number (finite: serde_json refuses 1e400) or a timestamp: equality is total.
impl Eq for Order {}

impl<A: Application + Eq> Eq for Parsed<A>
where
    A::Msg: Eq,
    A::Step: Eq,
{
}

impl Order {
    pub(super) fn name(&self) -> &'static str {
        match self {
            Order::Seq(_) => "`seq`",
            Order::Time { .. } => "only `time`",
        }
    }
}

/// What an event line says happened, resolved against the topology.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Body<M, S> {
    /// `send`.
    Send {
        /// Its channel.
        channel: ChannelId,
        /// The message's id.
        msg: LogId,
        /// The message.
        payload: M,
    },
    /// `receive`.
    Receive {
        /// Its channel.
        channel: ChannelId,
        /// The message's id.
        msg: LogId,
    },
    /// `loss`.
    Loss {
        /// Its channel.
        channel: ChannelId,
        /// The message's id.
        msg: LogId,
    },
    /// `internal`.
    Internal {
        /// The step.
        step: S,
    },
    /// `record`.
    Record {
        /// The snapshot.
        snapshot: SnapshotId,
        /// Whether the process initiated it.
        initiated: bool,
    },
    /// `marker-send`: `None`s until resolved (a marker-send without `snapshot` belongs to the
    /// snapshot its process recorded last; one without `channel` is one on every outgoing
    /// channel), and where damage leaves them unresolved.
    MarkerSend {
        /// The snapshot.
        snapshot: Option<SnapshotId>,
        /// The channel.
        channel: Option<ChannelId>,
    },
    /// `marker-receive`: a `None` snapshot until resolved (the k-th marker received on a channel
    /// is the k-th sent), and where damage leaves it unresolved.
    MarkerReceive {
        /// The snapshot.
        snapshot: Option<SnapshotId>,
        /// The channel.
        channel: ChannelId,
        /// The ids the process claims its record of the channel holds.
        recorded: Vec<LogId>,
    },
}

/// A message's send: the id the drivers would give it, its channel and line, and its place.
pub(super) struct Sent<'a> {
    pub(super) id: MsgId,
    pub(super) channel: ChannelId,
    pub(super) at: &'a Location,
    pub(super) process: usize,
    pub(super) index: usize,
}

/// Every send of the logs.
pub(super) struct Sends<'a> {
    /// Messages, by the logs' id.
    pub(super) ids: HashMap<&'a LogId, Sent<'a>>,
    /// The marker sendings of each snapshot and channel: (process, index), in order.
    pub(super) markers: HashMap<(SnapshotId, ChannelId), Vec<(usize, usize)>>,
}
