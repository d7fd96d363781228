//! What the simulator refuses or fails at, and what stops a scenario's replay.

use thiserror::Error;

use super::finished::SnapshotFailure;
use crate::formats::jsonl::WriteError;
use crate::formats::FormatError;
use crate::protocol::AssemblyError;
use crate::protocol::ProcessId;
use crate::protocol::{CoreError, Refusal, SnapshotId};

/// A simulator step that was refused or failed.
///
/// The refusals of a command — [`SimError::UnknownProcess`], [`SimError::NoLink`],
/// [`SimError::Refused`], [`SimError::UnknownSnapshot`] — leave the simulator unchanged. The others
/// stop the run in the middle of a step: the simulator must not be driven further, but
/// [`super::Simulator::finish`] still returns what happened up to there.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum SimError {
    /// A process id that is not in the topology.
    #[error("unknown process {0}")]
    UnknownProcess(ProcessId),
    /// Initial balances (the tokens each initial state is made from) that do not match the
    /// processes.
    #[error("{got} initial balances for {expected} processes")]
    TokenCount {
        /// Processes in the topology.
        expected: usize,
        /// Balances given.
        got: usize,
    },
    /// A send between processes with no channel from the first to the second.
    #[error("no link {from} -> {to}")]
    NoLink {
        /// The sender's name.
        from: String,
        /// The receiver's name.
        to: String,
    },
    /// The sender's application refused the send ([`crate::protocol::Application::on_send`]).
    #[error("{process}: {reason}")]
    Refused {
        /// The sender's name.
        process: String,
        /// Why.
        reason: Refusal,
    },
    /// A snapshot id that was not started.
    #[error("snapshot {0} was never started")]
    UnknownSnapshot(SnapshotId),
    /// The sequence of delays ran out.
    #[error("ran out of delays: {file} holds {available} delays and the run needs more")]
    DelaysExhausted {
        /// The delay file.
        file: String,
        /// How many it holds.
        available: usize,
    },
    /// The core refused a step.
    #[error(transparent)]
    Core(#[from] CoreError),
    /// A local snapshot did not fit its global snapshot.
    #[error(transparent)]
    Assembly(#[from] AssemblyError),
}

/// A replay that could not produce verified snapshots.
#[derive(Debug, Error)]
pub enum ReplayError {
    /// A file could not be read or parsed, or a command failed (unknown node, transfer larger
    /// than the balance, no such link): names the file and the line.
    #[error(transparent)]
    Format(#[from] FormatError),
    /// The simulation failed at a command (e.g. the delays ran out).
    #[error("{file}:{line}: {error}")]
    Command {
        /// The `.events` file.
        file: String,
        /// The command's line.
        line: usize,
        /// What failed.
        error: SimError,
    },
    /// The simulation failed after the last command, while finishing the snapshots.
    #[error("{file}: after the last command: {error}")]
    Completion {
        /// The `.events` file.
        file: String,
        /// What failed.
        error: SimError,
    },
    /// The logs could not be written (`Replay::trace_out`).
    #[error("--trace-out: {0}")]
    Write(#[from] WriteError),
    /// A snapshot never completed, failed the trace checker, or does not conserve tokens.
    #[error("{file}: {failure}")]
    Snapshot {
        /// The `.events` file.
        file: String,
        /// The failure.
        failure: SnapshotFailure,
    },
    /// An expected file the comparison needs does not exist.
    #[error(
        "missing expected file {path} (the run took {snapshots} snapshot(s); one is expected in PREFIX.snap, \
         several in PREFIX0.snap, PREFIX1.snap, ...)"
    )]
    MissingExpected {
        /// The file looked for.
        path: String,
        /// Snapshots the run took.
        snapshots: usize,
    },
}
