//! The steps on a channel: a message delivered (with unaligned barriers, a barrier overtaking
//! the messages ahead of it), a message stolen by bandits, a marker lost.

use chandy_lamport::apps::spec::Spec;
use chandy_lamport::check::{MsgId, StepInput};
use chandy_lamport::{ChannelId, Message};
use smallvec::SmallVec;

use super::super::action::Stop;
use super::super::chans::Tagged;
use super::super::machine::SnapshotModel;
use super::super::memo::{Input, Scratch};
use super::super::state::{StampedMsg, State};
use super::modes::Before;

impl<A: Spec> SnapshotModel<A> {
    /// The message at `index` of `channel` arrives at its receiver.
    pub(super) fn deliver(
        &self,
        next: &mut State<A>,
        channel: u8,
        index: u8,
        before: Before,
        scratch: &mut Scratch<A>,
    ) -> Result<(), Stop> {
        let t = &self.cfg.topology;
        let c = ChannelId(u32::from(channel));
        let q = t.channel(c).to.index();
        let i = index as usize;
        self.ghost_receive(next, c, i, before);
        let overtaken = self.overtaken(next.chans.get(c.index()), i);
        let tagged = next.chans.remove(c.index(), i);
        let input = match tagged.msg {
            Message::App(_) => StepInput::Receive { channel: c, id: MsgId(u64::from(tagged.tag)) },
            Message::Marker(snapshot) => StepInput::Marker { channel: c, snapshot },
            Message::Cancel(_) => StepInput::Idle,
        };
        scratch.step(t, &mut next.procs[q], Input::Receive(c, tagged.msg, overtaken)).map_err(Stop::refused)?;
        self.apply(next, q, input, &scratch.fx, 0);
        Ok(())
    }

    /// Unaligned barriers: the messages ahead of position `i` of channel `chan`, which a barrier
    /// delivered from there overtakes (none with the other algorithms).
    fn overtaken(&self, chan: &[Tagged<A::Msg>], i: usize) -> SmallVec<[StampedMsg<A>; 4]> {
        chan[..i]
            .iter()
            .filter_map(|p| match p.msg {
                Message::App(message) if self.cfg.algorithm.barriers_overtake() => Some(message),
                _ => None,
            })
            .collect()
    }

    /// Bandits steal the message at `index` of `channel`.
    pub(super) fn steal(&self, next: &mut State<A>, channel: u8, index: u8, before: Before) -> Result<(), Stop> {
        let c = ChannelId(u32::from(channel));
        let tagged = next.chans.remove(c.index(), index as usize);
        let Message::App(message) = tagged.msg else { return Err(Stop::NotAStep) };
        self.ghost_theft(next, c, message, tagged.tag, before);
        self.trace_lost(next, c, tagged.tag);
        Ok(())
    }

    /// The marker at `index` of `channel` is lost.
    pub(super) fn lose_marker(&self, next: &mut State<A>, channel: u8, index: u8) {
        next.chans.remove(channel as usize, index as usize);
    }
}
