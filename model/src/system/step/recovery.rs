//! The job's recovery (barrier algorithms): after a crash, or a failure more than tolerated,
//! every process restarts from the newest stored checkpoint (or its initial state) and each
//! channel holds that checkpoint's record of it.

use chandy_lamport::apps::spec::Spec;
use chandy_lamport::{ChannelId, Message};

use super::super::bookkeeping::Tally;
use super::super::chans::{Chans, Tagged};
use super::super::machine::SnapshotModel;
use super::super::state::{State, MAX_PROCESSES};

impl<A: Spec> SnapshotModel<A> {
    /// The job fails over (a crash, or a failure more than tolerated) and recovers: the
    /// coordinator's pending checkpoints are aborted, every process is restored from the newest
    /// completed checkpoint (or its initial state), and each channel holds exactly that
    /// checkpoint's record of it, in front.
    pub(super) fn recover(&self, next: &mut State<A>) {
        let t = &self.cfg.topology;
        let Some(ck) = next.ckpt.as_mut() else { return };
        ck.failed_over = true;
        ck.coord.failover();
        ck.triggers = [0; MAX_PROCESSES];
        ck.budgets.clear();
        let latest = ck.latest.clone();
        self.books.tally(Tally::Crashes);
        if let Some(stored) = latest.as_ref() {
            self.books.tally(Tally::Restores);
            if stored.rec.channels.iter().any(|c| !c.is_empty()) {
                self.books.tally(Tally::RestoresWithChannelState);
            }
        }
        self.ghost_crash(next, latest.as_ref().map(|l| l.id.0 as usize));
        let mut chans = Chans::new(t.channels().len());
        let procs = match latest.as_deref() {
            Some(stored) => {
                let restored = chandy_lamport::protocol::restored_channels(self.cfg.variant, t, &stored.rec.channels);
                for (c, record) in restored.iter().enumerate() {
                    for message in record {
                        chans.push(c, Tagged { msg: Message::App(*message), tag: 0 });
                    }
                }
                next.budget[..t.len()].copy_from_slice(&stored.budgets);
                t.processes().map(|p| self.process(p, stored.rec.processes[p.index()])).collect()
            }
            None => {
                next.budget[..t.len()].fill(self.cfg.sends);
                t.processes().map(|p| self.process(p, A::initial(p, self.cfg.tokens[p.index()]))).collect()
            }
        };
        next.procs = procs;
        for (c, channel) in t.channels().iter().enumerate() {
            let count = chans.get(c).len();
            if count > 0 {
                let restored = next.procs[channel.to.index()].edit(|h| h.restore_input(t, ChannelId(c as u32), count));
                restored.expect("a channel is an input of its receiver");
            }
        }
        next.chans = chans;
    }
}
