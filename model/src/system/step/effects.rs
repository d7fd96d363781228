//! Carrying out the effects of one core step: messages sent go onto their channels, a state
//! recorded is told to the coordinator's budgets and the ghost, a checkpoint the process gave up
//! is aborted; in literal mode the step goes into the trace.

use chandy_lamport::apps::spec::Spec;
use chandy_lamport::check::StepInput;
use chandy_lamport::{Effect, Message};

use super::super::chans::Tagged;
use super::super::machine::SnapshotModel;
use super::super::state::{StampedMsg, State};

impl<A: Spec> SnapshotModel<A> {
    /// Carries out the effects of one core step of `process` on `input`, in order; an application
    /// message sent carries `tag`.
    pub(super) fn apply(
        &self,
        next: &mut State<A>,
        process: usize,
        input: StepInput,
        effects: &[Effect<StampedMsg<A>>],
        tag: u32,
    ) {
        for effect in effects {
            match effect {
                Effect::Send { channel, message } => {
                    let tag = if matches!(message, Message::App(_)) { tag } else { 0 };
                    next.chans.push(channel.index(), Tagged { msg: *message, tag });
                }
                Effect::Recorded { snapshot, .. } => {
                    self.keep_budget(next, process, *snapshot);
                    self.ghost_record(next, process, *snapshot);
                }
                Effect::Aborted { snapshot } => self.abort(next, *snapshot),
                Effect::Closed { .. } | Effect::Completed { .. } => {}
            }
        }
        self.trace_step(next, process, input, effects);
    }
}
