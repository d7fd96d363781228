//! The verdict on one execution: its recorded events handed to the library's judge (the one
//! `model verify` runs, through [`PushedLogs`]), and the assertions a test makes with it.

use thiserror::Error;

use super::recorder::{lock, Recorder};
use crate::formats::jsonl::LogApp;
use crate::logs::text::print_outcome;
use crate::logs::{Judgement, LogsError, PushError, PushedLogs, Reader};

/// An execution that could not be judged: never a pass.
#[derive(Debug, Error)]
pub enum TestingError {
    /// An event has no place in the logs (a process the topology lacks, no JSON form).
    #[error("an event cannot be logged: {0}")]
    Push(#[from] PushError),
    /// The judge refused the events (an unknown channel, a receipt of a message sent on another
    /// channel, an empty run, …): the message names the event as `P1.jsonl:4`.
    #[error("the events cannot be judged: {0}")]
    Logs(#[from] LogsError),
}

/// At most this many events are quoted in a failure's message; past that the logs are left
/// out (a finding still names its events' lines).
const MAX_QUOTED_EVENTS: usize = 200;

impl<A: LogApp> Recorder<A> {
    /// The execution's events as the logs of its processes (`<process>.jsonl`, one text each),
    /// numbered as the findings number them.
    pub fn logs(&self) -> Result<PushedLogs, TestingError> {
        let shared = &self.shared;
        let mut logs = PushedLogs::new(&shared.topology);
        for process in &shared.processes {
            for event in &lock(process).events {
                logs.push::<A>(event.clone())?;
            }
        }
        Ok(logs)
    }

    /// Judges the events recorded so far, as `model verify` judges logs: every snapshot they
    /// mention by the theorem's clauses, and the run's consistency (FIFO, the logged states).
    /// Call it when the execution is over (every thread joined): an event recorded later is not
    /// judged.
    pub fn judge(&self) -> Result<Judgement, TestingError> {
        let logs = self.logs()?;
        let shared = &self.shared;
        let mut judgement = logs.judge(shared.initial.clone(), &shared.semantics, Reader::OnePass, &mut ())?;
        judgement.app = app_name::<A>(shared.semantics.is_opaque());
        Ok(judgement)
    }

    /// Panics, with the findings in the logs' words and the logs themselves, unless every
    /// snapshot of the execution was judged and holds and the run is consistent. An execution
    /// that recorded no snapshot fails (say so with [`Recorder::assert_no_snapshot`]), as does one
    /// that cannot be judged.
    pub fn assert_holds(&self) {
        if let Err(failure) = self.check(Expect::Snapshots) {
            panic!("{failure}");
        }
    }

    /// Panics unless the execution recorded no snapshot, as the caller expected, and its run is
    /// consistent (every channel FIFO, every logged state what the transitions produce). An
    /// execution with no event at all fails: there is no run.
    pub fn assert_no_snapshot(&self) {
        if let Err(failure) = self.check(Expect::NoSnapshot) {
            panic!("{failure}");
        }
    }

    /// The failure's text, or `Ok` when the execution passes: what [`Recorder::assert_holds`]
    /// and the loom and shuttle helpers panic with.
    pub fn check(&self, expect: Expect) -> Result<Judgement, String> {
        let judgement = match self.judge() {
            Ok(judgement) => judgement,
            Err(e) => return Err(self.failure(&format!("the execution cannot be judged: {e}\n"))),
        };
        let passes = match expect {
            Expect::Snapshots => judgement.ok,
            Expect::NoSnapshot => {
                judgement.snapshots.is_empty() && judgement.run.is_empty() && judgement.damage.is_empty()
            }
        };
        if passes {
            return Ok(judgement);
        }
        let mut text = Vec::new();
        // Writing to a Vec cannot fail.
        let _ = print_outcome(&judgement, &mut text);
        let mut text = String::from_utf8_lossy(&text).into_owned();
        if expect == Expect::NoSnapshot && !judgement.snapshots.is_empty() {
            text.push_str("expected no snapshot, and the execution recorded some\n");
        }
        Err(self.failure(&text))
    }

    /// A failure's message: what went wrong, then the logs the findings point into.
    fn failure(&self, what: &str) -> String {
        let mut text = format!("chandy_lamport::testing: the snapshot judge rejects this execution\n{what}");
        match self.logs() {
            Ok(logs) if self.events() <= MAX_QUOTED_EVENTS => {
                text.push_str("the execution's logs:\n");
                for (file, lines) in logs.texts() {
                    for (n, line) in lines.lines().enumerate() {
                        text.push_str(&format!("  {file}:{} {line}\n", n + 1));
                    }
                }
            }
            Ok(_) => text.push_str(&format!("({} events: the logs are not quoted)\n", self.events())),
            Err(_) => {}
        }
        text
    }
}

/// What a passing execution holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// At least one snapshot, every one judged and holding, the run consistent.
    Snapshots,
    /// No snapshot at all (the execution takes none), the run consistent.
    NoSnapshot,
}

/// The name `model verify --app` gives what the states are: `none` for opaque states, else the
/// application type's own name, lowercased (`balance`).
fn app_name<A>(opaque: bool) -> String {
    if opaque {
        return "none".to_string();
    }
    let full = std::any::type_name::<A>();
    let base = full.split('<').next().unwrap_or(full);
    base.rsplit("::").next().unwrap_or(base).to_lowercase()
}
