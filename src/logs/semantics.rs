//! What the logs' states and payloads mean to the judge: whether their states are the application's own
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

/// What the logs' states and payloads mean: the application's own, or opaque JSON; and the
/// amount a snapshot conserves, for an application with one.
pub struct Semantics<A: Application> {
    /// Interpreted or opaque states.
    pub states: States<A>,
    /// The conserved amount, for an application with one.
    pub amount: Option<Conserved<A>>,
}

impl<A: Application> Semantics<A> {
    /// The application's own states, nothing conserved checked.
    pub fn interpreted() -> Self {
        Semantics { states: States::Interpreted, amount: None }
    }

    /// Whether states are opaque: then nothing that needs the transitions (clauses c and d, the
    /// logged states) is judged.
    pub fn is_opaque(&self) -> bool {
        matches!(self.states, States::Opaque { .. })
    }
}

impl Semantics<Balance> {
    /// Integer balances (`--app balance`): the amount conserved.
    pub fn balance() -> Self {
        let amount: Conserved<Balance> = Conserved { state: |b| i128::from(b.0), msg: |m: &Amount| i128::from(m.0) };
        Semantics { states: States::Interpreted, amount: Some(amount) }
    }
}

impl Semantics<Opaque> {
    /// Opaque states (`--app none`): never interpreted, and a record may log none.
    pub fn opaque() -> Self {
        Semantics { states: States::Opaque { blank: Opaque(Json(serde_json::Value::Null)) }, amount: None }
    }
}
