//! Logs a driver pushes one event at a time, kept in memory: a driver that makes runs (of its
//! own threads, of child processes, of a simulator) hands each event to [`PushedLogs`] as it
//! happens and has the run judged without writing a file. The events are kept as the JSON lines
//! a file would hold (`<process>.jsonl`, one text a process), so the judge reads them exactly as
//! it reads files, and a finding names the line (`P1.jsonl:4`) of the logs [`PushedLogs::texts`]
//! gives.

use std::fmt::Write as _;

use thiserror::Error;

use super::judge::{judge_logs, LogsError, Reader, Watch};
use super::judgement::Judgement;
use super::semantics::Semantics;
use crate::formats::jsonl::{Line, LogApp, Source};
use crate::protocol::Topology;

/// An event a driver pushed that cannot be a line of the logs.
#[derive(Debug, Error)]
pub enum PushError {
    /// The line names a process the topology does not have.
    #[error("unknown process {0:?} (not in the topology)")]
    UnknownProcess(String),
    /// The line gives a `seq` other than the process's next one.
    #[error("{process}'s next event is seq {expected}, not {given}")]
    Seq {
        /// The process.
        process: String,
        /// Its next seq.
        expected: u64,
        /// The seq pushed.
        given: u64,
    },
    /// The line has no JSON form.
    #[error("the event has no JSON form: {0}")]
    Json(#[from] serde_json::Error),
}

/// A run's logs, pushed one event at a time by the driver that makes the run.
pub struct PushedLogs {
    topology: Topology,
    /// Each process's log: `(<process>.jsonl, its lines)`.
    texts: Vec<(String, String)>,
    /// Each process's next `seq`.
    next: Vec<u64>,
}

impl PushedLogs {
    /// Empty logs for the processes of `topology`.
    pub fn new(topology: &Topology) -> Self {
        let texts = topology.processes().map(|p| (format!("{}.jsonl", topology.name(p)), String::new())).collect();
        PushedLogs { topology: topology.clone(), texts, next: vec![0; topology.len()] }
    }

    /// Appends one event to its process's log. A line without `seq` gets the process's next
    /// one; a line with one must give exactly that (events are pushed in each process's order).
    pub fn push<A: LogApp>(&mut self, mut line: Line<A::Msg, A::Step, A>) -> Result<(), PushError> {
        let p = self.topology.process(&line.process).map_err(|_| PushError::UnknownProcess(line.process.clone()))?;
        let expected = self.next[p.index()];
        match line.seq {
            None => line.seq = Some(expected),
            Some(given) if given != expected => {
                return Err(PushError::Seq { process: line.process.clone(), expected, given })
            }
            Some(_) => {}
        }
        let json = serde_json::to_string(&line)?;
        let text = &mut self.texts[p.index()].1;
        // Writing to a String cannot fail.
        let _ = writeln!(text, "{json}");
        self.next[p.index()] += 1;
        Ok(())
    }

    /// The logs so far: `(file name, text)` per process, as [`Source::Texts`] takes them.
    pub fn texts(&self) -> &[(String, String)] {
        &self.texts
    }

    /// Judges the run pushed so far (initial states `initial`), as [`judge_logs`] judges files.
    pub fn judge<A: LogApp>(
        &self,
        initial: Vec<A>,
        semantics: &Semantics<A>,
        reader: Reader,
        watch: &mut dyn Watch,
    ) -> Result<Judgement, LogsError> {
        judge_logs(&self.topology, initial, Source::Texts(&self.texts), semantics, reader, watch)
    }
}
