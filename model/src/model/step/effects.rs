//! Carrying out the effects of one core step: messages sent go onto their channels, a state
//! recorded is told to the coordinator's budgets and the ghost, a checkpoint the house gave up
//! is aborted; in literal mode the step goes into the trace.

use chandy_lamport::apps::spec::Spec;
use chandy_lamport::check::StepInput;
use chandy_lamport::{Effect, Message};

use super::super::chans::Packet;
use super::super::machine::ChandyLamport;
use super::super::state::{Cart, State};

impl<A: Spec> ChandyLamport<A> {
    /// Carries out the effects of one core step of `house` on `input`, in order; an application
    /// message sent carries `tag`.
    pub(super) fn apply(
        &self,
        next: &mut State<A>,
        house: usize,
        input: StepInput,
        effects: &[Effect<Cart<A>>],
        tag: u32,
    ) {
        for effect in effects {
            match effect {
                Effect::Send { channel, message } => {
                    let tag = if matches!(message, Message::App(_)) { tag } else { 0 };
                    next.chans.push(channel.index(), Packet { msg: *message, tag });
                }
                Effect::Recorded { snapshot, .. } => {
                    self.keep_budget(next, house, *snapshot);
                    self.ghost_record(next, house, *snapshot);
                }
                Effect::Aborted { snapshot } => self.abort(next, *snapshot),
                Effect::Closed { .. } | Effect::Completed { .. } => {}
            }
        }
        self.trace_step(next, house, input, effects);
    }
}
