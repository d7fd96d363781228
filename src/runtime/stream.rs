//! The stream application ([`crate::apps::stream`]) as a runtime service: a source emits its inputs
//! on command, and every house passes on what it takes in by itself ([`Service::react`]), by
//! the application's own moves ([`Spec::moves`]), so the runtime routes items as the model
//! does.

use std::convert::Infallible;

use super::service::{Outbox, Service};
use crate::apps::spec::{Move, Setup, Spec};
use crate::apps::stream::{Item, Stream};
use crate::protocol::Application;

/// A request to a stream house.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StreamCommand {
    /// A source emits up to `count` more of its inputs, in order (fewer when fewer are left;
    /// none at a house that is not a source).
    Emit {
        /// How many.
        count: u8,
    },
}

/// The first send among `state`'s moves, as a destination and an item.
fn first_send(state: &Stream, out: &Outbox<'_, Item, ()>) -> Option<(crate::protocol::ProcessId, Item)> {
    let mut first = None;
    state.moves(out.me(), out.topology(), &Setup::default(), &mut |mv| {
        if let (None, Move::Send { channel, msg }) = (&first, mv) {
            first = Some((out.topology().channel(channel).to, msg));
        }
    });
    first
}

impl Service for Stream {
    type Command = StreamCommand;
    type Rejection = Infallible;

    const REACTIVE: bool = true;

    /// Emits the next inputs (after [`Service::react`] has emptied the backlog, the only move
    /// left is the next input).
    fn on_command(&self, cmd: StreamCommand, out: &mut Outbox<'_, Item, ()>) -> Result<(), Infallible> {
        let StreamCommand::Emit { count } = cmd;
        let mut next = *self;
        for _ in 0..count {
            if next.position >= next.inputs || next.waiting > 0 {
                break;
            }
            let Some((to, item)) = first_send(&next, out) else { break };
            if next.on_send(to, &item).is_err() || out.send(to, item).is_err() {
                break;
            }
        }
        Ok(())
    }

    /// Passes on every item waiting in the backlog, oldest first.
    fn react(&self, out: &mut Outbox<'_, Item, ()>) {
        let mut next = *self;
        while next.waiting > 0 {
            let Some((to, item)) = first_send(&next, out) else { break };
            if next.on_send(to, &item).is_err() || out.send(to, item).is_err() {
                break;
            }
        }
    }
}
