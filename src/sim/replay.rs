//! Replaying a scenario of the course suite: a `.top`, an `.events` script and a delay source in,
//! the snapshots out as `.snap` text — each one checked by the trace checker and for
//! conservation — and, given an expectation prefix, compared with the expected files.
//!
//! This is an edge: the course's scripts move tokens, so the replay plugs the bank
//! ([`crate::apps::bank`]) into the generic [`Simulator`], a token transfer being a cart of
//! [`Jars`] sent with [`Simulator::send`] (see [`Simulator::transfer`]).
//!
//! A command-line front end is a thin wrapper:
//!
//! ```no_run
//! use chandy_lamport::sim::{replay, DelayChoice, Replay};
//!
//! let request = Replay::new("2nodes.top", "2nodes-message.events", DelayChoice::File("delays.txt".into()))
//!     .expect("2nodes-message");
//! match replay(&request) {
//!     Ok(outcome) => {
//!         print!("{}", outcome.snap_text());
//!         if let Some(comparison) = outcome.comparison.as_ref().filter(|c| !c.matches()) {
//!             eprintln!("{comparison}");
//!             std::process::exit(1);
//!         }
//!     }
//!     Err(e) => {
//!         eprintln!("error: {e}");
//!         std::process::exit(2);
//!     }
//! }
//! ```

use std::path::{Path, PathBuf};

use super::delays::{DelaySequence, DelaySource};
use super::error::{ReplayError, SimError};
use super::expected::load_expected;
use super::finished::Finished;
use super::simulator::{SimConfig, Simulator};
use crate::apps::bank::{Bank, BankError, Jars};
use crate::check::MsgId;
use crate::formats::events::{Command, EventsFile};
use crate::formats::jsonl::write_logs;
use crate::formats::snap::{compare, write, Comparison, SnapBlock};
use crate::formats::top::TopFile;
use crate::formats::Problem;
use crate::protocol::Refusal;
use crate::protocol::Variant;
use crate::protocol::{Initiators, ProcessId, Topology};

/// Ticks run after every snapshot has completed, as the course suite does (its largest delay
/// plus one), so the last messages arrive.
pub const SETTLE_TICKS: u64 = 6;

/// Where a replay takes its delays from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DelayChoice {
    /// A delay file, one integer a line (the suite's `delays.txt`).
    File(PathBuf),
    /// The seeded generator.
    Seed(u64),
}

/// What to replay.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Replay {
    /// The `.top` file.
    pub topology: PathBuf,
    /// The `.events` file.
    pub events: PathBuf,
    /// The delays.
    pub delays: DelayChoice,
    /// The expectation prefix: compare with `PREFIX.snap` or `PREFIX0.snap`, `PREFIX1.snap`, ….
    pub expect: Option<PathBuf>,
    /// The fault variant (the correct algorithm by default).
    pub variant: Variant,
    /// Write the run as JSON-lines logs into this directory (`<process>.jsonl` and
    /// `topology.top`, see [`crate::formats::jsonl`]) before its snapshots are checked, so a
    /// failing run is written too.
    pub trace_out: Option<PathBuf>,
}

impl Replay {
    /// A replay of `events` on `topology` with these delays, no comparison, correct algorithm.
    pub fn new(topology: impl Into<PathBuf>, events: impl Into<PathBuf>, delays: DelayChoice) -> Self {
        Replay {
            topology: topology.into(),
            events: events.into(),
            delays,
            expect: None,
            variant: Variant::None,
            trace_out: None,
        }
    }

    /// Compares with the expected files of `prefix`.
    pub fn expect(mut self, prefix: impl Into<PathBuf>) -> Self {
        self.expect = Some(prefix.into());
        self
    }
}

/// A replay's result: verified snapshots, and the comparison when an expectation was given.
#[derive(Clone, Debug)]
pub struct ReplayOutcome {
    /// The topology replayed.
    pub topology: Topology,
    /// The snapshots, by id, in `.snap` form.
    pub blocks: Vec<SnapBlock>,
    /// The comparison with the expected files, when a prefix was given.
    pub comparison: Option<Comparison>,
    /// The whole run (trace, final states).
    pub run: Finished<Bank>,
}

impl ReplayOutcome {
    /// The snapshots as `.snap` text, one block per id.
    pub fn snap_text(&self) -> String {
        write(&self.blocks)
    }

    /// False only when a comparison was made and found differences.
    pub fn matches(&self) -> bool {
        self.comparison.as_ref().map_or(true, Comparison::matches)
    }
}

/// Replays a scenario: reads the files, runs the script on the simulator, ticks until every
/// snapshot completed and [`SETTLE_TICKS`] more, checks every snapshot with the trace checker
/// and for conservation, and compares with the expected files when a prefix is given.
pub fn replay(request: &Replay) -> Result<ReplayOutcome, ReplayError> {
    let top = TopFile::read(&request.topology)?;
    let events = EventsFile::read(&request.events)?;
    let delays = match &request.delays {
        DelayChoice::File(path) => DelaySource::Sequence(DelaySequence::read(path)?),
        DelayChoice::Seed(seed) => DelaySource::Seeded(*seed),
    };
    let config = SimConfig { variant: request.variant, ..SimConfig::new(delays) };
    let run = run_events(&top, &events, config)?;
    if let Some(dir) = &request.trace_out {
        let snapshots: Vec<_> = run.snapshots.iter().map(|s| s.global.clone()).collect();
        write_logs(dir, &top.topology, &run.tokens, &run.trace, &snapshots)?;
    }
    run.check(&top.topology).map_err(|failure| ReplayError::Snapshot { file: events.file.clone(), failure })?;
    let blocks = run.blocks(&top.topology);
    let comparison = match &request.expect {
        Some(prefix) => Some(compare_with(prefix, &top.topology, &blocks, run.total())?),
        None => None,
    };
    Ok(ReplayOutcome { topology: top.topology, blocks, comparison, run })
}

/// Compares blocks of a run of `topology` with the expected files of `prefix` (see
/// [`load_expected`]) by the suite's rules, `total` being the tokens every snapshot must account
/// for.
pub fn compare_with(
    prefix: &Path,
    topology: &Topology,
    blocks: &[SnapBlock],
    total: u64,
) -> Result<Comparison, ReplayError> {
    let expected = load_expected(prefix, blocks.len(), topology)?;
    Ok(compare(&expected, blocks, Some(total)))
}

/// Runs an event script on a fresh simulator: every command at once in its time step, then
/// ticks until every snapshot completed (or nothing is left in transit) and [`SETTLE_TICKS`]
/// more. Command errors name the `.events` file and line; a node of `top` without a token count
/// (the houses' jars) is an error naming its line.
pub fn run_events(top: &TopFile, events: &EventsFile, config: SimConfig) -> Result<Finished<Bank>, ReplayError> {
    let mut sim = Simulator::<Bank>::new(top.topology.clone(), &top.counts()?, config)
        .map_err(|error| ReplayError::Completion { file: events.file.clone(), error })?;
    for step in &events.steps {
        let node = |name: &str| -> Result<ProcessId, ReplayError> {
            top.topology
                .process(name)
                .map_err(|_| events.error(step.line, Problem::UnknownNode { name: name.to_string() }).into())
        };
        let result = match &step.command {
            Command::Send { from, to, tokens } => {
                let (from, to) = (node(from)?, node(to)?);
                sim.transfer(from, to, *tokens).map(drop).map_err(|error| match error {
                    // The house refused: its own check again, for the reason the script gets.
                    SimError::Refused { process, reason } => match sim.process(from).map(|q| {
                        let mut house = *q.app();
                        house.withdraw(*tokens)
                    }) {
                        Ok(Err(bank)) => SendFailure::Bank { process, error: bank },
                        _ => SendFailure::Sim(SimError::Refused { process, reason }),
                    },
                    other => SendFailure::Sim(other),
                })
            }
            Command::Snapshot { node: at } => {
                // Markers from a node that cannot reach every process never complete the
                // snapshot: the script asks for what the algorithm cannot do.
                let at = node(at)?;
                if let Err(e) = top.topology.check_initiators(&Initiators::Only(vec![at])) {
                    return Err(events.error(step.line, Problem::Topology(e)).into());
                }
                sim.start_snapshot(at).map(drop).map_err(SendFailure::Sim)
            }
            Command::Tick { count } => sim.tick(*count).map_err(SendFailure::Sim),
        };
        result.map_err(|error| command_error(events, step.line, error))?;
    }
    let finish = |sim: &mut Simulator<Bank>| {
        sim.run_to_completion()?;
        sim.tick(SETTLE_TICKS)
    };
    finish(&mut sim).map_err(|error| ReplayError::Completion { file: events.file.clone(), error })?;
    Ok(sim.finish())
}

impl Simulator<Bank> {
    /// Moves `tokens` from `from` to its neighbour `to` now: a cart of [`Jars`] sent with
    /// [`Simulator::send`], withdrawn at once, delivered later. Refused, with nothing changed,
    /// when there is no link or `from` holds fewer tokens ([`SimError::Refused`]).
    pub fn transfer(&mut self, from: ProcessId, to: ProcessId, tokens: u32) -> Result<MsgId, SimError> {
        self.send(from, to, Jars(tokens))
    }
}

/// Why a command of the script failed: the simulator's error, or the house's own reason for
/// refusing a transfer.
enum SendFailure {
    Sim(SimError),
    Bank { process: String, error: BankError },
}

/// A command's failure: a [`FormatError`] at its line when the script is at fault.
fn command_error(events: &EventsFile, line: usize, failure: SendFailure) -> ReplayError {
    let problem = match failure {
        SendFailure::Bank { process, error: BankError::NotEnoughJars { have, want } } => {
            Problem::NotEnoughTokens { node: process, have, want }
        }
        SendFailure::Bank { error: BankError::Empty, .. } => Problem::EmptyTransfer,
        SendFailure::Sim(SimError::NoLink { from, to }) => Problem::NoLink { from, to },
        SendFailure::Bank { process, error } => {
            let error = SimError::Refused { process, reason: Refusal(error.to_string()) };
            return ReplayError::Command { file: events.file.clone(), line, error };
        }
        SendFailure::Sim(error) => return ReplayError::Command { file: events.file.clone(), line, error },
    };
    events.error(line, problem).into()
}
