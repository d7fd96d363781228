//! What goes in and out of a [`Process`](super::process::Process): snapshot ids, what travels
//! on a channel, and the effects a step asks its driver to carry out.

use serde::{Deserialize, Serialize};

use super::topology::ChannelId;

/// Identifies one snapshot; several may be in flight at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SnapshotId(pub u32);

impl std::fmt::Display for SnapshotId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// What travels on a channel: an application message or a marker.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Message<M> {
    /// An application message.
    App(M),
    /// The marker of a snapshot (a barrier, in the barrier algorithms).
    Marker(SnapshotId),
    /// Barrier algorithms only: the checkpoint was cancelled upstream (a cancellation barrier).
    Cancel(SnapshotId),
}

/// What the driver must do after a step, in this order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect<M> {
    /// Put `message` at the tail of `channel`.
    Send {
        /// An outgoing channel of this process.
        channel: ChannelId,
        /// The message or marker.
        message: Message<M>,
    },
    /// This process recorded its local state for `snapshot`.
    Recorded {
        /// The snapshot.
        snapshot: SnapshotId,
        /// True when the recording was an initiation rather than a marker's receipt.
        initiated: bool,
    },
    /// The record of `channel` for `snapshot` is closed.
    Closed {
        /// The snapshot.
        snapshot: SnapshotId,
        /// The incoming channel.
        channel: ChannelId,
    },
    /// This process's part of `snapshot` is complete: fetch it with
    /// [`Process::take_local_snapshot`](crate::protocol::Process::take_local_snapshot) or read it with [`Process::slot`](crate::protocol::Process::slot).
    Completed {
        /// The snapshot.
        snapshot: SnapshotId,
    },
    /// Barrier algorithms only: this process gave up its part of `snapshot` (it declined, a
    /// cancellation barrier arrived, a newer checkpoint's barrier subsumed it, or its trigger
    /// came after a newer one). The coordinator aborts the checkpoint.
    Aborted {
        /// The snapshot.
        snapshot: SnapshotId,
    },
}
