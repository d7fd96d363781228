//! Logs one process's Chandy-Lamport events as the JSON lines `model verify` reads. Copy this
//! file into your project as a module (`mod snapshot_log;`); it needs only the standard
//! library. One `SnapshotLog` per process, shared by all of that process's threads (`Arc`):
//!
//! ```ignore
//! let log = SnapshotLog::create("P0", "logs/P0.jsonl")?;
//! let msg = log.new_id(); // a run-wide unique message id
//! log.send("P0->P1", &msg, "5", Some("95"))?; // payload 5, state 95 after the send
//! log.receive("P1->P0", "P1-3", Some("98"))?;
//! log.record(0, None, Some("98"))?; // P0 initiates snapshot 0
//! log.record(1, Some("P2->P0"), Some("97"))?; // a marker on P2->P0 made P0 record
//! log.marker_send(0, Some("P0->P1"))?;
//! log.marker_receive(0, "P1->P0", &["P1-4"])?; // closes P1->P0's record
//! ```
//!
//! Every call writes one event under one lock, numbered by `seq` in the order of the calls:
//! call it right after the event, in the thread that made it happen, while that thread still
//! holds whatever lock orders the process's events. `record` with a marker channel writes the
//! marker's receipt and the record it caused as two adjacent lines, so another thread's line
//! never comes between them. Payloads, steps and states are JSON text, written as given
//! (`&balance.to_string()`, or `serde_json::to_string(&state)?`); a state (`None`: none) is the
//! process's state right after the event, on `record` the state recorded.

// A program uses only some of these calls.
#![allow(dead_code)]

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// The log of one process.
pub struct SnapshotLog {
    process: String,
    /// The file, and the `seq` of the next event.
    file: Mutex<(File, u64)>,
    ids: AtomicU64,
}

impl SnapshotLog {
    /// Starts the log of `process` (its name as in the topology) in the file at `path`.
    pub fn create(process: &str, path: impl AsRef<Path>) -> io::Result<Self> {
        Ok(SnapshotLog {
            process: process.to_string(),
            file: Mutex::new((File::create(path)?, 0)),
            ids: AtomicU64::new(0),
        })
    }

    /// A message id no other process's log gives: `<process>-<n>`.
    pub fn new_id(&self) -> String {
        format!("{}-{}", self.process, self.ids.fetch_add(1, Ordering::Relaxed))
    }

    /// Message `msg` sent on `channel` (`FROM->TO`) carrying `payload` (JSON).
    pub fn send(&self, channel: &str, msg: &str, payload: &str, state: Option<&str>) -> io::Result<()> {
        let fields = format!(r#""kind":"send","channel":{},"msg":{},"payload":{payload}"#, quote(channel), quote(msg));
        self.write(&[(fields, state)])
    }

    /// Message `msg` taken from `channel` and applied.
    pub fn receive(&self, channel: &str, msg: &str, state: Option<&str>) -> io::Result<()> {
        self.write(&[(format!(r#""kind":"receive","channel":{},"msg":{}"#, quote(channel), quote(msg)), state)])
    }

    /// Message `msg` lost in transit on `channel` (logged by the channel's receiver).
    pub fn loss(&self, channel: &str, msg: &str, state: Option<&str>) -> io::Result<()> {
        self.write(&[(format!(r#""kind":"loss","channel":{},"msg":{}"#, quote(channel), quote(msg)), state)])
    }

    /// An internal step (JSON).
    pub fn internal(&self, step: &str, state: Option<&str>) -> io::Result<()> {
        self.write(&[(format!(r#""kind":"internal","step":{step}"#), state)])
    }

    /// The process records `state` for `snapshot`: as the initiator when `marker` is `None`;
    /// else because the first marker of `snapshot` arrived on channel `marker`, whose receipt
    /// (closing that channel empty) is written with the record, adjacent.
    pub fn record(&self, snapshot: u32, marker: Option<&str>, state: Option<&str>) -> io::Result<()> {
        let record = format!(r#""kind":"record","snapshot":{snapshot},"initiated":{}"#, marker.is_none());
        match marker {
            None => self.write(&[(record, state)]),
            Some(channel) => {
                let receipt = format!(
                    r#""kind":"marker-receive","snapshot":{snapshot},"channel":{},"recorded":[]"#,
                    quote(channel)
                );
                self.write(&[(receipt, None), (record, state)])
            }
        }
    }

    /// A marker of `snapshot` sent on `channel` (`None`: on every outgoing channel at once).
    pub fn marker_send(&self, snapshot: u32, channel: Option<&str>) -> io::Result<()> {
        let channel = channel.map(|c| format!(r#","channel":{}"#, quote(c))).unwrap_or_default();
        self.write(&[(format!(r#""kind":"marker-send","snapshot":{snapshot}{channel}"#), None)])
    }

    /// A later marker of `snapshot` on `channel`: it closes the channel's record, `recorded` the
    /// ids of the messages received on it since the process recorded, in order.
    pub fn marker_receive(&self, snapshot: u32, channel: &str, recorded: &[impl AsRef<str>]) -> io::Result<()> {
        let ids: Vec<String> = recorded.iter().map(|id| quote(id.as_ref())).collect();
        let fields = format!(
            r#""kind":"marker-receive","snapshot":{snapshot},"channel":{},"recorded":[{}]"#,
            quote(channel),
            ids.join(",")
        );
        self.write(&[(fields, None)])
    }

    /// Writes the events (each its fields after `seq`, and its state) under the lock, adjacent.
    fn write(&self, events: &[(String, Option<&str>)]) -> io::Result<()> {
        let mut guard = self.file.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let (file, seq) = &mut *guard;
        let mut text = String::new();
        for (fields, state) in events {
            text += &format!(r#"{{"process":{},"seq":{seq},{fields}"#, quote(&self.process));
            if let Some(state) = state {
                text += &format!(r#","state":{state}"#);
            }
            text += "}\n";
            *seq += 1;
        }
        file.write_all(text.as_bytes())
    }
}

/// `s` as a JSON string.
fn quote(s: &str) -> String {
    let mut q = String::from("\"");
    for c in s.chars() {
        match c {
            '"' | '\\' => q.extend(['\\', c]),
            c if (c as u32) < 0x20 => q += &format!("\\u{:04x}", c as u32),
            c => q.push(c),
        }
    }
    q + "\""
}
