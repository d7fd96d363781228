//! How the logs of one application are judged: whether their states are the application's own
//! (recomputed by its transitions and cross-checked) or opaque JSON, and the amount a snapshot
//! must conserve, for an application that has one.

use crate::apps::json::{Amount, Balance, Json, Opaque};
use crate::formats::jsonl::States;
use crate::protocol::Application;

/// An application's conserved amount (`--app balance`): what a state holds and what a message
/// carries. A snapshot's states and channel records must add up to the initial total.
pub struct Conserved<A: Application> {
    /// Held by a state.
    pub state: fn(&A) -> i128,
    /// Carried by a message.
    pub msg: fn(&A::Msg) -> i128,
}

impl<A: Application> Clone for Conserved<A> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<A: Application> Copy for Conserved<A> {}

/// How the logs of one application are judged.
pub struct Mode<A: Application> {
    /// Interpreted or opaque states.
    pub states: States<A>,
    /// The conserved amount, for an application with one.
    pub amount: Option<Conserved<A>>,
}

impl<A: Application> Mode<A> {
    /// The application's own states, nothing conserved checked.
    pub fn interpreted() -> Self {
        Mode { states: States::Interpreted, amount: None }
    }

    /// Whether states are opaque: then nothing that needs the transitions (clauses c and d, the
    /// logged states) is judged.
    pub fn opaque(&self) -> bool {
        matches!(self.states, States::Opaque { .. })
    }
}

impl Mode<Balance> {
    /// Integer balances (`--app balance`): the amount conserved.
    pub fn balance() -> Self {
        let amount: Conserved<Balance> = Conserved { state: |b| i128::from(b.0), msg: |m: &Amount| i128::from(m.0) };
        Mode { states: States::Interpreted, amount: Some(amount) }
    }
}

impl Mode<Opaque> {
    /// Opaque states (`--app none`): a record may log none.
    pub fn none() -> Self {
        Mode { states: States::Opaque { blank: Opaque(Json(serde_json::Value::Null)) }, amount: None }
    }
}
