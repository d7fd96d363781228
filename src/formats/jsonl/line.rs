//! The lines of the logs: their fields as serde reads and writes them, and where a line is.

use std::fmt;

use serde::de::{self, DeserializeOwned, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::protocol::Application;

/// An application whose runs can be written and read as JSON lines: its states, messages and
/// internal steps have a JSON form.
pub trait LogApp:
    Application<Msg: Serialize + DeserializeOwned, Step: Serialize + DeserializeOwned> + Serialize + DeserializeOwned
{
}

impl<A> LogApp for A where
    A: Application<Msg: Serialize + DeserializeOwned, Step: Serialize + DeserializeOwned>
        + Serialize
        + DeserializeOwned
{
}

/// What an event line says happened (the `kind` field).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// `send`.
    Send,
    /// `receive`.
    Receive,
    /// `loss`.
    Loss,
    /// `internal`.
    Internal,
    /// `record`.
    Record,
    /// `marker-send`.
    MarkerSend,
    /// `marker-receive`.
    MarkerReceive,
}

impl Kind {
    /// The name in the logs.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Send => "send",
            Kind::Receive => "receive",
            Kind::Loss => "loss",
            Kind::Internal => "internal",
            Kind::Record => "record",
            Kind::MarkerSend => "marker-send",
            Kind::MarkerReceive => "marker-receive",
        }
    }

    /// The optional fields (other than `state`) a line of this kind has.
    pub(super) fn fields(self) -> &'static [&'static str] {
        match self {
            Kind::Send => &["channel", "msg", "payload"],
            Kind::Receive | Kind::Loss => &["channel", "msg"],
            Kind::Internal => &["step"],
            Kind::Record => &["snapshot", "initiated"],
            Kind::MarkerSend => &["snapshot", "channel"],
            Kind::MarkerReceive => &["snapshot", "channel", "recorded"],
        }
    }
}

/// A message id as the logs spell it: a string, or a non-negative integer (read as the string
/// of its digits).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LogId(pub String);

impl fmt::Display for LogId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

impl Serialize for LogId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for LogId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct IdVisitor;
        impl Visitor<'_> for IdVisitor {
            type Value = LogId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a message id: a string or a non-negative integer")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<LogId, E> {
                Ok(LogId(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<LogId, E> {
                Ok(LogId(v.to_string()))
            }
        }
        deserializer.deserialize_any(IdVisitor)
    }
}

/// One line of the logs, as serde reads and writes it (`M` the message, `S` the internal step,
/// `A` the state). Which optional fields a line has depends on its kind (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Line<M, S, A> {
    /// The process's name.
    pub process: String,
    /// The event's number among its process's events (when absent, `time` orders them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    /// When the event happened, by the process's clock: a number or an RFC 3339 timestamp
    /// (orders a process's events when the logs have no `seq`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<serde_json::Value>,
    /// What happened.
    pub kind: Kind,
    /// The snapshot id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<u32>,
    /// The channel, `"FROM->TO"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    /// The message id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub msg: Option<LogId>,
    /// The message sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payload: Option<M>,
    /// The internal step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<S>,
    /// Whether a record was an initiation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initiated: Option<bool>,
    /// The ids recorded for the channel a marker closes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recorded: Option<Vec<LogId>>,
    /// The state after the event (the recorded state, on a `record` line).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<A>,
}

impl<M, S, A> Line<M, S, A> {
    /// The optional fields present, by name.
    pub(super) fn present(&self) -> [(&'static str, bool); 7] {
        [
            ("snapshot", self.snapshot.is_some()),
            ("channel", self.channel.is_some()),
            ("msg", self.msg.is_some()),
            ("payload", self.payload.is_some()),
            ("step", self.step.is_some()),
            ("initiated", self.initiated.is_some()),
            ("recorded", self.recorded.is_some()),
        ]
    }
}

/// A line of a log file.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Location {
    /// The file, as given.
    pub file: String,
    /// 1-based line number.
    pub line: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}
