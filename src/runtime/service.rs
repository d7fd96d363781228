//! What the runtime needs of an application ([`Service`]) and what a command may do
//! ([`Outbox`]).

use std::fmt::Debug;

use thiserror::Error;

use crate::protocol::{Application, ChannelId, ProcessId, Topology};

/// An application the runtime can drive with commands from outside.
pub trait Service: Application<Msg: Send + 'static, Step: Send + 'static> + Send + 'static {
    /// A request from outside (e.g. "transfer 3 jars to P2").
    type Command: Send + 'static;
    /// Why a command was refused.
    type Rejection: std::error::Error + Send + 'static;

    /// Whether the application takes steps of its own ([`Service::react`]). A reactive
    /// application runs only on a topology without cycles: at shutdown a process flushes only
    /// once every incoming channel has been flushed, so it never has to send after its flush.
    const REACTIVE: bool = false;

    /// Handles a command: looks at the local state and queues the steps that carry it out
    /// (sends to neighbours, internal steps). The core then applies them in order through the
    /// application's transitions, so every change of the state is a traced step.
    fn on_command(
        &self,
        cmd: Self::Command,
        out: &mut Outbox<'_, Self::Msg, Self::Step>,
    ) -> Result<(), Self::Rejection>;

    /// Reactive applications ([`Service::REACTIVE`]): the steps the application takes by
    /// itself after each command, each message received and each (re)start, e.g. a dataflow
    /// passing on what it took in. None by default.
    fn react(&self, _out: &mut Outbox<'_, Self::Msg, Self::Step>) {}
}

/// A step queued by a command.
pub(crate) enum Queued<M, S> {
    /// Send a message on a channel.
    Send(ChannelId, M),
    /// An internal step.
    Internal(S),
}

/// Where a command's steps go (messages `M`, internal steps `S`); only neighbours can be sent
/// to.
pub struct Outbox<'a, M, S> {
    topology: &'a Topology,
    me: ProcessId,
    queued: &'a mut Vec<Queued<M, S>>,
}

/// A send to a process that is not a neighbour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[error("{to} is not a neighbour")]
pub struct NotANeighbour {
    /// The destination asked for.
    pub to: ProcessId,
}

impl<'a, M, S> Outbox<'a, M, S> {
    pub(crate) fn new(topology: &'a Topology, me: ProcessId, queued: &'a mut Vec<Queued<M, S>>) -> Self {
        Outbox { topology, me, queued }
    }

    /// The process whose steps these are.
    pub fn me(&self) -> ProcessId {
        self.me
    }

    /// The topology the process runs on.
    pub fn topology(&self) -> &Topology {
        self.topology
    }

    /// Whether there is a channel to `to`.
    pub fn is_neighbour(&self, to: ProcessId) -> bool {
        self.topology.channel_between(self.me, to).is_some()
    }

    /// The processes this one has channels to.
    pub fn neighbours(&self) -> impl Iterator<Item = ProcessId> + '_ {
        self.topology.outgoing(self.me).iter().map(|&c| self.topology.channel(c).to)
    }

    /// Queues a send of `msg` to `to`; it happens when the command returns.
    pub fn send(&mut self, to: ProcessId, msg: M) -> Result<(), NotANeighbour> {
        let channel = self.topology.channel_between(self.me, to).ok_or(NotANeighbour { to })?;
        self.queued.push(Queued::Send(channel, msg));
        Ok(())
    }

    /// Queues internal step `step`; it happens when the command returns, in queue order.
    pub fn internal(&mut self, step: S) {
        self.queued.push(Queued::Internal(step));
    }
}
