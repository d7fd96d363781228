//! The model's actions: one step of a run (a process's move, a delivery, a theft or a lost
//! marker on a channel, an initiation, the barrier coordinator's and the job's steps), why an
//! action may give no ordinary successor, and each action in words.

use std::fmt::Display;

use chandy_lamport::apps::spec::{Move, Spec};
use chandy_lamport::{ChannelId, Message, ProcessId};

use super::machine::SnapshotModel;
use super::state::{StampedMsg, State};

/// One step of the model; `M` and `S` are the application's messages and internal steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action<M, S> {
    /// `from` sends `msg` on `channel` (a move of its application).
    Send {
        /// The sending process.
        from: u8,
        /// One of its outgoing channels.
        channel: u8,
        /// The message.
        msg: M,
    },
    /// `process` takes internal step `step` (a move of its application).
    Internal {
        /// The process.
        process: u8,
        /// The step.
        step: S,
    },
    /// The message at `index` of `channel` arrives (index 0 unless channels are non-FIFO).
    Deliver {
        /// The channel.
        channel: u8,
        /// Position in the channel.
        index: u8,
    },
    /// Bandits steal the message at `index` of `channel`.
    Steal {
        /// The channel.
        channel: u8,
        /// Position in the channel.
        index: u8,
    },
    /// The marker at `index` of `channel` is lost (`lose-markers`).
    LoseMarker {
        /// The channel.
        channel: u8,
        /// Position in the channel.
        index: u8,
    },
    /// `process` initiates `snapshot`.
    Initiate {
        /// The process.
        process: u8,
        /// The snapshot.
        snapshot: u8,
    },
    /// `process` is idle and does the work a fault variant deferred (held markers, a held-back
    /// recording); enabled only while it has some.
    Flush {
        /// The process.
        process: u8,
    },
    /// Unaligned barriers: the oldest message in `process`'s output buffer for `channel` goes onto
    /// the wire.
    Transmit {
        /// The sending process.
        process: u8,
        /// One of its outgoing channels.
        channel: u8,
    },
    /// Barrier algorithms: the coordinator triggers its next checkpoint (the trigger goes to
    /// every source; each handles it with an `Initiate`).
    Trigger,
    /// Barrier algorithms: the coordinator's periodic timer fires while `--max-concurrent`
    /// checkpoints are pending. Offered only where it changes the state: under
    /// `trigger-stops-after-abort` (FLINK-13256), which cancels the timer then; Flink's
    /// coordinator drops the request and nothing changes.
    TimerAtMax,
    /// Barrier algorithms: `process` acknowledges its complete part of `snapshot` to the
    /// coordinator (the part is written).
    Ack {
        /// The process.
        process: u8,
        /// The checkpoint.
        snapshot: u8,
    },
    /// Barrier algorithms: every process has acknowledged `snapshot`; the coordinator completes it
    /// (its metadata is written, older pending checkpoints are subsumed). Not yet restorable.
    Complete {
        /// The checkpoint.
        snapshot: u8,
    },
    /// Barrier algorithms: completed `snapshot` goes into the completed-checkpoint store: a
    /// recovery restores it from now on, and the processes are told (they drop their parts).
    Store {
        /// The checkpoint.
        snapshot: u8,
    },
    /// Barrier algorithms: `process` declines `snapshot` (its state could not be written).
    Decline {
        /// The process.
        process: u8,
        /// The checkpoint.
        snapshot: u8,
    },
    /// Barrier algorithms: the job crashes and recovers from the newest completed checkpoint.
    Crash,
}

/// The model's action type for application `A`.
pub type Act<A> = Action<<A as chandy_lamport::Application>::Msg, <A as chandy_lamport::Application>::Step>;

/// Why an action taken in a state leads to no ordinary successor.
pub(crate) enum Stop {
    /// The action is not a step of that state.
    NotAStep,
    /// The core refused the step (its error): the successor is the state marked refused.
    Refused(String),
}

impl Stop {
    /// The core (or the coordinator) refused the step with `error`.
    pub(crate) fn refused(error: impl Display) -> Stop {
        Stop::Refused(error.to_string())
    }
}

/// A message in words: "a message of 1 jar", with its stamp when messages carry identity ("a message
/// of 1 jar (#2)").
pub fn message_words<A: Spec>(message: &StampedMsg<A>) -> String {
    match message.seq {
        0 => A::describe(&message.msg),
        seq => format!("{} (#{seq})", A::describe(&message.msg)),
    }
}

impl<A: Spec> SnapshotModel<A> {
    /// A sentence for `action` taken in `state` (what arrives, who records).
    pub fn describe(&self, state: &State<A>, action: &Act<A>) -> String {
        let t = &self.cfg.topology;
        let ends = |c: u8| {
            let ch = t.channel(ChannelId(u32::from(c)));
            (t.name(ch.from).to_string(), t.name(ch.to).to_string())
        };
        let tagged = |c: u8, i: u8| state.chans.iter().nth(c as usize).and_then(|ch| ch.get(i as usize));
        match *action {
            Action::Deliver { channel, index } => {
                let (from, to) = ends(channel);
                let nth = if index == 0 { String::new() } else { format!(" (overtaking {index})") };
                match tagged(channel, index).map(|p| &p.msg) {
                    Some(Message::App(message)) => {
                        format!("{to} receives {} from {from}{nth}", message_words::<A>(message))
                    }
                    Some(Message::Marker(s)) => {
                        let records =
                            !state.procs[t.channel(ChannelId(u32::from(channel))).to.index()].has_recorded(*s);
                        let first = if records { " (its first)" } else { "" };
                        format!("{to} receives marker {s} from {from}{first}{nth}")
                    }
                    Some(Message::Cancel(s)) => format!("{to} receives the cancellation of checkpoint {s} from {from}"),
                    None => self.describe_action(action),
                }
            }
            _ => self.describe_action(action),
        }
    }

    /// A label for `action` (the Explorer's).
    pub fn describe_action(&self, action: &Act<A>) -> String {
        let t = &self.cfg.topology;
        let name = |p: u8| t.name(ProcessId(u16::from(p))).to_string();
        let chan = |c: u8| t.channel_label(ChannelId(u32::from(c)));
        match *action {
            Action::Send { from, channel, msg } => {
                let mv = Move::Send { channel: ChannelId(u32::from(channel)), msg };
                format!("{} {}", name(from), A::describe_move(&mv, t))
            }
            Action::Internal { process, step } => {
                format!("{} {}", name(process), A::describe_move(&Move::Internal(step), t))
            }
            Action::Deliver { channel, index: 0 } => format!("deliver head of {}", chan(channel)),
            Action::Deliver { channel, index } => format!("deliver message {index} of {}", chan(channel)),
            Action::Steal { channel, index } => format!("bandits steal cart {index} on {}", chan(channel)),
            Action::LoseMarker { channel, index } => format!("marker {index} on {} is lost", chan(channel)),
            Action::Initiate { process, snapshot } => format!("{} initiates snapshot {snapshot}", name(process)),
            Action::Flush { process } => format!("{} is idle: the work it deferred happens", name(process)),
            Action::Transmit { process, channel } => {
                format!("{} puts the oldest cart of its buffer for {} on the road", name(process), chan(channel))
            }
            Action::Trigger => "the coordinator triggers a checkpoint".to_string(),
            Action::TimerAtMax => {
                "the periodic timer fires with --max-concurrent checkpoints pending: it is cancelled".to_string()
            }
            Action::Ack { process, snapshot } => format!("{} acknowledges checkpoint {snapshot}", name(process)),
            Action::Decline { process, snapshot } => format!("{} declines checkpoint {snapshot}", name(process)),
            Action::Complete { snapshot } => {
                format!("every house acknowledged checkpoint {snapshot}: the coordinator completes it")
            }
            Action::Store { snapshot } => {
                format!("checkpoint {snapshot} is stored: recoveries restore it, the houses drop their parts")
            }
            Action::Crash => "crash: every house recovers from the latest completed checkpoint".to_string(),
        }
    }
}
