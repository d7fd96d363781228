//! Applications for the logs of systems this crate knows nothing about: [`Balance`] (integer
//! balances moved by integer payloads) and [`Opaque`] (states and payloads never interpreted).
//! Both exist for the trace checker (`model verify --app balance|none`); no driver runs them.

use std::hash::{Hash, Hasher};

use serde::{Deserialize, Serialize};

use crate::protocol::ProcessId;
use crate::protocol::{Application, Refusal};

/// Any JSON value, compared by value and hashed by its text.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Json(pub serde_json::Value);

impl Hash for Json {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.to_string().hash(state);
    }
}

impl std::fmt::Display for Json {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A process holding an integer balance (a JSON integer, possibly negative): a send debits the
/// payload, a receipt credits it, a loss removes it from the system, and an internal step (any
/// JSON) leaves the balance as it is. The total of the balances and of the messages in transit
/// is therefore the initial total less what was lost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Balance(pub i64);

/// What a message of [`Balance`] carries: a non-negative JSON integer (0 is a message that
/// moves nothing, a ping).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Amount(pub u64);

impl Balance {
    /// The balance after adding (or, negative, removing) `amount`, if it fits in 64 bits.
    fn moved(self, amount: u64, credit: bool) -> Option<Balance> {
        let amount = i64::try_from(amount).ok()?;
        let next = if credit { self.0.checked_add(amount) } else { self.0.checked_sub(amount) };
        next.map(Balance)
    }
}

impl Application for Balance {
    type Msg = Amount;
    type Step = Json;

    fn on_send(&mut self, _to: ProcessId, msg: &Amount) -> Result<(), Refusal> {
        *self = self
            .moved(msg.0, false)
            .ok_or_else(|| Refusal(format!("a send of {} from a balance of {} overflows 64 bits", msg.0, self.0)))?;
        Ok(())
    }

    fn on_message(&mut self, _from: ProcessId, msg: &Amount) {
        // A receipt cannot refuse: past 64 bits the balance stays at the bound, which no logged
        // state can match, so the run is reported inconsistent.
        *self = self.moved(msg.0, true).unwrap_or(Balance(i64::MAX));
    }

    fn on_internal(&mut self, _step: &Json) -> Result<(), Refusal> {
        Ok(())
    }
}

/// A process whose state, messages and internal steps are opaque JSON: no transition changes
/// anything, and the trace checker judges only what needs no application (the cut, the channel
/// records by message id, FIFO, termination, each recorded state against the state the process
/// logged where it recorded).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Opaque(pub Json);

impl Application for Opaque {
    type Msg = Json;
    type Step = Json;

    fn on_send(&mut self, _to: ProcessId, _msg: &Json) -> Result<(), Refusal> {
        Ok(())
    }

    fn on_message(&mut self, _from: ProcessId, _msg: &Json) {}

    fn on_internal(&mut self, _step: &Json) -> Result<(), Refusal> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn balances_move_by_their_payloads_and_refuse_overflow() {
        let mut b: Balance = serde_json::from_str("-5").unwrap();
        b.on_message(ProcessId(1), &Amount(8));
        assert_eq!(b, Balance(3));
        b.on_send(ProcessId(1), &Amount(0)).unwrap();
        b.on_send(ProcessId(1), &Amount(4)).unwrap();
        assert_eq!(b, Balance(-1));
        b.on_internal(&Json(serde_json::json!({"any": "thing"}))).unwrap();
        assert_eq!(b, Balance(-1));
        let mut low = Balance(i64::MIN);
        assert!(low.on_send(ProcessId(0), &Amount(1)).is_err());
        assert_eq!(low, Balance(i64::MIN));
        assert!(Balance(0).on_send(ProcessId(0), &Amount(u64::MAX)).is_err());
        let mut high = Balance(i64::MAX - 1);
        high.on_message(ProcessId(0), &Amount(5));
        assert_eq!(high, Balance(i64::MAX));
        assert!(serde_json::from_str::<Amount>("-1").is_err());
        assert!(serde_json::from_str::<Balance>("{\"jars\":1}").is_err());
    }

    #[test]
    fn opaque_values_are_kept_and_compared_by_value() {
        let a: Opaque = serde_json::from_str(r#"{"x":[1,2],"y":null}"#).unwrap();
        let mut b = a.clone();
        b.on_send(ProcessId(0), &Json(serde_json::json!(7))).unwrap();
        b.on_message(ProcessId(0), &Json(serde_json::json!("ping")));
        assert_eq!(a, b);
        let hash = |v: &Opaque| {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            v.hash(&mut h);
            h.finish()
        };
        assert_eq!(hash(&a), hash(&b));
        assert_ne!(hash(&a), hash(&Opaque(Json(serde_json::json!({"x": [1, 3], "y": null})))));
        assert_ne!(a, serde_json::from_str::<Opaque>("3").unwrap());
        assert_eq!(Json(serde_json::json!([1])).to_string(), "[1]");
    }
}
