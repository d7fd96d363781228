//! What the simulator refuses or fails at.

use thiserror::Error;

use crate::core::{CoreError, Refusal, SnapshotId};
use crate::snapshot::AssemblyError;
use crate::topology::ProcessId;

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
    /// The sender's application refused the send ([`crate::core::Application::on_send`]).
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
