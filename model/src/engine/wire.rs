//! States on the wire: what a distributed search needs of a model to send a state to the
//! process that owns it.

use stateright::Model;
use thiserror::Error;

/// Bytes that are not a state of the model decoding them: what is wrong with them.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("not a state{}: {why}", if *.of_model { " of this model" } else { "" })]
pub struct NotAState {
    /// Whether the bytes are a state's, but of another model or configuration (they decode,
    /// and the state does not fit).
    pub of_model: bool,
    /// What is wrong.
    pub why: String,
}

impl NotAState {
    /// Bytes that do not decode.
    pub fn bytes(why: impl Into<String>) -> Self {
        NotAState { of_model: false, why: why.into() }
    }

    /// A state that decodes but does not fit the model.
    pub fn of_model(why: impl Into<String>) -> Self {
        NotAState { of_model: true, why: why.into() }
    }
}

/// A model whose states can be encoded as bytes and decoded in another process (of the same
/// build and configuration). The contract the distributed search relies on: `decode` of what
/// `encode` wrote gives a state equal to the original, with the same fingerprint, from which the
/// model's steps are the original's.
pub trait Wire: Model {
    /// Appends the encoding of `state` to `out`.
    fn encode(&self, state: &Self::State, out: &mut Vec<u8>);

    /// The state `bytes` encode (as [`Wire::encode`] wrote them), or why they do not.
    fn decode(&self, bytes: &[u8]) -> Result<Self::State, NotAState>;

    /// Counters the model keeps of the steps it took (none by default): a distributed search
    /// sums them over the ranks.
    fn counters(&self) -> Vec<u64> {
        Vec::new()
    }

    /// Sets the counters (to the ranks' sum, after a distributed search).
    fn set_counters(&self, _counters: &[u64]) {}
}

/// Appends what `write` appends to `out`, after its length (4 bytes, little-endian): one frame
/// of a buffer of encodings.
pub fn framed(out: &mut Vec<u8>, write: impl FnOnce(&mut Vec<u8>)) {
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    write(out);
    let len = u32::try_from(out.len() - at - 4).expect("an encoding of under 4 GiB");
    out[at..at + 4].copy_from_slice(&len.to_le_bytes());
}
