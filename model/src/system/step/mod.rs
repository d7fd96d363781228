//! One step of the model: an action taken in a state, the core stepping the process it concerns
//! and the model carrying out the effects the core returns.
//!
//! `SnapshotModel::advance` hands each kind of action to its own function: the processes' steps
//! (`process`: sends, internal steps, initiations, flushes, unaligned transmissions), the
//! channels' (`channel`: deliveries, thefts, lost markers), the barrier coordinator's
//! (`coordinator`: triggers, acknowledgements, completion, storage, declines, crashes) and the
//! job's recovery (`recovery`). Each carries out the core's effects the same way (`effects`).
//! What full mode (the ghost data) and literal mode (the history) add to a step is in `modes`;
//! basic mode adds nothing.

mod channel;
mod coordinator;
mod effects;
mod modes;
mod process;
mod recovery;

use chandy_lamport::apps::spec::Spec;

use super::action::{Act, Action, Stop};
use super::bookkeeping::Tally;
use super::machine::SnapshotModel;
use super::memo::Scratch;
use super::state::State;

impl<A: Spec> SnapshotModel<A> {
    /// The state `action` leads to from `last` (stateright's `next_state`), or `None` when
    /// `action` is not a step of `last`.
    pub fn successor(&self, last: &State<A>, action: Act<A>) -> Option<State<A>> {
        self.books.with_scratch(|s| self.step(last, action, s))
    }

    /// One step: `action` taken in `last`, the core's effects collected in `s.fx`. A step the
    /// core refuses gives `last` marked refused (the core leaves a process unchanged when it
    /// refuses).
    fn step(&self, last: &State<A>, action: Act<A>, s: &mut Scratch<A>) -> Option<State<A>> {
        let mut next = last.clone();
        match self.advance(&mut next, action, s) {
            Ok(()) => Some(next),
            Err(Stop::NotAStep) => None,
            Err(Stop::Refused(error)) => {
                let mut dead = last.clone();
                dead.refused = Some(error.into_boxed_str());
                Some(dead)
            }
        }
    }

    /// Takes `action` in `next` itself (what `next` held before is the state the step is taken
    /// from); on an error `next` is left part-changed and must be discarded or restored.
    pub(crate) fn advance(&self, next: &mut State<A>, action: Act<A>, scratch: &mut Scratch<A>) -> Result<(), Stop> {
        let before = self.before_step(next);
        match action {
            Action::Send { from, channel, msg } => self.send(next, from, channel, msg, before, scratch)?,
            Action::Internal { process, step } => self.internal(next, process, step, scratch)?,
            Action::Deliver { channel, index } => self.deliver(next, channel, index, before, scratch)?,
            Action::Steal { channel, index } => self.steal(next, channel, index, before)?,
            Action::LoseMarker { channel, index } => self.lose_marker(next, channel, index),
            Action::Initiate { process, snapshot } => self.initiate(next, process, snapshot, scratch)?,
            Action::Flush { process } => self.flush(next, process, scratch),
            Action::Transmit { process, channel } => self.transmit(next, process, channel, scratch)?,
            Action::Trigger => self.trigger(next)?,
            Action::TimerAtMax => self.timer_at_max(next)?,
            Action::Ack { process, snapshot } => self.ack(next, process, snapshot)?,
            Action::Complete { snapshot } => self.complete(next, snapshot)?,
            Action::Store { snapshot } => self.store(next, snapshot)?,
            Action::Decline { process, snapshot } => self.decline(next, process, snapshot, scratch)?,
            Action::Crash => self.crash(next)?,
        }
        if self.after_crash(next) && self.quiet(next) {
            self.books.tally(Tally::QuietAfterCrash);
        }
        self.after_step(next, before);
        Ok(())
    }
}
