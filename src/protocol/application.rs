//! The application running at each process: the interface every driver, the trace checker and
//! the model are generic over.

use std::fmt::Debug;
use std::hash::Hash;

use thiserror::Error;

use super::topology::ProcessId;

/// Why an application refused a local step: a send or an internal step it cannot take now.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{0}")]
pub struct Refusal(pub String);

/// The application running at each process: its state is what a snapshot records.
///
/// Every change of the state is one of three transitions, so a trace checker can recompute any
/// process's state from its initial state and its events: a send, a receipt, an internal step.
/// The core applies them; drivers never change the state behind its back.
pub trait Application: Clone + Eq + Hash + Debug {
    /// Application messages.
    type Msg: Clone + Eq + Hash + Debug;
    /// Internal steps: local events that send nothing (e.g. a sale to the port town).
    type Step: Clone + Eq + Hash + Debug;

    /// The sender's side of sending `msg` to `to` (e.g. a debit). A refused send must leave the
    /// state unchanged.
    fn on_send(&mut self, to: ProcessId, msg: &Self::Msg) -> Result<(), Refusal>;

    /// Applies the receipt of `msg`, sent by `from`.
    fn on_message(&mut self, from: ProcessId, msg: &Self::Msg);

    /// Applies internal step `step`. A refused step must leave the state unchanged.
    fn on_internal(&mut self, step: &Self::Step) -> Result<(), Refusal>;
}
