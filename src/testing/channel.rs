//! FIFO channels that record their own messages: a send records the `send` (with a fresh
//! message id), the acceptance of a received message records its `receive`, a marker sent
//! records its `marker-send`. An implementation built on them makes no recorder call for its
//! messages; what a marker's receipt makes the process do (record, or close a channel's record)
//! stays its own to record.
//!
//! They are built on the runtime's mpsc (`std`'s, or loom's or shuttle's under `--cfg loom` or
//! `--cfg shuttle`), so the same code runs under every scheduler. Loom does not model a
//! channel's disconnection (a receiver whose senders are gone is never woken): end a channel
//! with [`Sender::close`], which the receiver reads as [`Incoming::Closed`].
//!
//! Each end belongs to one thread at a time (neither is `Sync`): a process's threads share its
//! outgoing [`Sender`]s under the lock that orders the process's events, and each incoming
//! channel has one reader. Call [`Sender::send`] and [`Delivery::accept`] while holding that
//! lock, so that the event is recorded where it happens in the process's order.

use std::cell::Cell;
use std::marker::PhantomData;

use thiserror::Error;

use super::recorder::{ProcessRecorder, Recorder};
use crate::formats::jsonl::LogApp;
use crate::protocol::{ProcessId, SnapshotId};
use crate::runtime::sync::mpsc;

/// What travels on a channel.
enum Envelope<M> {
    Message { id: String, payload: M },
    Marker(SnapshotId),
    Closed,
}

/// The receiving end is gone: nothing was sent, nothing recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[error("the channel {from}->{to} has no receiver: nothing was sent")]
pub struct Disconnected {
    /// The sending process.
    pub from: ProcessId,
    /// The receiving process.
    pub to: ProcessId,
}

/// A recording FIFO channel from process `from` to process `to`, whose events go to `recorder`.
pub fn channel<A: LogApp>(recorder: &Recorder<A>, from: ProcessId, to: ProcessId) -> (Sender<A>, Receiver<A>) {
    let (tx, rx) = mpsc::channel();
    let sender = Sender { recorder: recorder.process(from), to, tx, not_sync: PhantomData };
    let receiver = Receiver { recorder: recorder.process(to), from, rx, not_sync: PhantomData };
    (sender, receiver)
}

/// The sending end of a recording channel.
pub struct Sender<A: LogApp> {
    recorder: ProcessRecorder<A>,
    to: ProcessId,
    tx: mpsc::Sender<Envelope<A::Msg>>,
    not_sync: PhantomData<Cell<()>>,
}

impl<A: LogApp> Sender<A> {
    /// The receiving process.
    pub fn to(&self) -> ProcessId {
        self.to
    }

    fn disconnected(&self) -> Disconnected {
        Disconnected { from: self.recorder.process(), to: self.to }
    }

    /// Sends `payload` as a message with a fresh id (returned), and records the send; `state` is
    /// the sender's state after it (or `None`).
    pub fn send(&self, payload: A::Msg, state: impl Into<Option<A>>) -> Result<String, Disconnected> {
        let id = self.recorder.new_message_id();
        let envelope = Envelope::Message { id: id.clone(), payload: payload.clone() };
        self.tx.send(envelope).map_err(|_| self.disconnected())?;
        self.recorder.send(self.to, &id, payload, state);
        Ok(id)
    }

    /// Sends a marker of `snapshot`, and records it.
    pub fn send_marker(&self, snapshot: SnapshotId) -> Result<(), Disconnected> {
        self.tx.send(Envelope::Marker(snapshot)).map_err(|_| self.disconnected())?;
        self.recorder.marker_send(snapshot, self.to);
        Ok(())
    }

    /// Ends the channel: the receiver reads [`Incoming::Closed`] after everything sent before.
    pub fn close(self) -> Result<(), Disconnected> {
        self.tx.send(Envelope::Closed).map_err(|_| self.disconnected())
    }
}

/// The receiving end of a recording channel.
pub struct Receiver<A: LogApp> {
    recorder: ProcessRecorder<A>,
    from: ProcessId,
    rx: mpsc::Receiver<Envelope<A::Msg>>,
    not_sync: PhantomData<Cell<()>>,
}

/// What a receiver took from its channel.
pub enum Incoming<A: LogApp> {
    /// A message, not yet recorded: [`Delivery::accept`] it where the process applies it.
    Message(Delivery<A>),
    /// A marker of this snapshot. Its receipt is the process's to record: with
    /// [`ProcessRecorder::record_on_marker`] when it makes the process record, else with
    /// [`ProcessRecorder::marker_receive`] and the channel's recorded message ids.
    Marker(SnapshotId),
    /// The sender closed the channel (or, under `std`, dropped it): nothing more will come.
    Closed,
}

impl<A: LogApp> Receiver<A> {
    /// The sending process.
    pub fn from(&self) -> ProcessId {
        self.from
    }

    /// Waits for the next thing on the channel.
    pub fn recv(&self) -> Incoming<A> {
        match self.rx.recv() {
            Ok(Envelope::Message { id, payload }) => Incoming::Message(Delivery {
                recorder: self.recorder.clone(),
                from: self.from,
                message: Some((id, payload)),
            }),
            Ok(Envelope::Marker(snapshot)) => Incoming::Marker(snapshot),
            Ok(Envelope::Closed) | Err(_) => Incoming::Closed,
        }
    }
}

/// A message taken from its channel and not yet applied. Accept it (recording its receipt) under
/// the lock where the process applies it; one dropped unaccepted is recorded as lost, since the
/// process never applied it.
#[must_use = "a delivery dropped unaccepted is recorded as a lost message"]
pub struct Delivery<A: LogApp> {
    recorder: ProcessRecorder<A>,
    from: ProcessId,
    message: Option<(String, A::Msg)>,
}

impl<A: LogApp> Delivery<A> {
    /// The message's id.
    pub fn id(&self) -> &str {
        self.message.as_ref().map(|(id, _)| id.as_str()).unwrap_or_default()
    }

    /// The message's payload.
    pub fn payload(&self) -> &A::Msg {
        &self.message.as_ref().expect("a delivery holds its message until accepted").1
    }

    /// Records the message's receipt (`state`: the receiver's state after applying it, or
    /// `None`) and gives its id and payload.
    pub fn accept(mut self, state: impl Into<Option<A>>) -> (String, A::Msg) {
        let (id, payload) = self.message.take().expect("a delivery holds its message until accepted");
        self.recorder.receive(self.from, &id, state);
        (id, payload)
    }
}

impl<A: LogApp> Drop for Delivery<A> {
    fn drop(&mut self) {
        if let Some((id, _)) = self.message.take() {
            self.recorder.loss(self.from, &id, None);
        }
    }
}
