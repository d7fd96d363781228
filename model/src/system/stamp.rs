//! Messages with identity. In `full` and `literal` modes every message the model sends carries its
//! sender's sequence number, so a channel record holding the wrong messages, or the right messages in
//! the wrong order, differs from the messages truly in flight. `basic` mode stamps every message 0:
//! there messages are alike, as in the reference model (`../shared/anchors`).

use std::fmt;

use chandy_lamport::protocol::{Application, Refusal};
use chandy_lamport::ProcessId;
use serde::{Deserialize, Serialize};

/// An application whose messages are stamped; it behaves exactly as the application inside.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Stamped<A>(pub A);

/// A message with its stamp: the `seq`-th message its sender sent (from 1), or 0 for an
/// anonymous message (basic mode). The channel names the sender, so channel and `seq` identify
/// a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Stamp<M> {
    /// The sender's sequence number, or 0.
    pub seq: u8,
    /// The message.
    pub msg: M,
}

impl<A> std::ops::Deref for Stamped<A> {
    type Target = A;
    fn deref(&self) -> &A {
        &self.0
    }
}

impl<A: Application> Application for Stamped<A> {
    type Msg = Stamp<A::Msg>;
    type Step = A::Step;

    fn on_send(&mut self, to: ProcessId, m: &Self::Msg) -> Result<(), Refusal> {
        self.0.on_send(to, &m.msg)
    }

    fn on_message(&mut self, from: ProcessId, m: &Self::Msg) {
        self.0.on_message(from, &m.msg)
    }

    fn on_internal(&mut self, step: &A::Step) -> Result<(), Refusal> {
        self.0.on_internal(step)
    }
}

impl<M: fmt::Debug> fmt::Display for Stamp<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.seq {
            0 => write!(f, "{:?}", self.msg),
            seq => write!(f, "#{seq} {:?}", self.msg),
        }
    }
}
