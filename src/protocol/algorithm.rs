//! Which marker rules the core follows: Chandy–Lamport's, or one of the two barrier protocols
//! stream processors (Apache Flink) checkpoint with. One [`Process`](crate::Process) runs all
//! three; the algorithm is a parameter of it, not a second copy of the rules.
//!
//! - [`Algorithm::ChandyLamport`]: record on the first marker, then record each other input
//!   until its marker arrives.
//! - [`Algorithm::Aligned`] (Carbone et al. 2015, arXiv 1506.08603): an input whose barrier has
//!   arrived is *blocked* — nothing more is taken from it — until barriers have arrived on every
//!   input; then the process records and forwards the barrier, and unblocks. No channel state is
//!   recorded, except on a cycle: inputs that are back edges (see
//!   [`Topology::back_edges`](crate::Topology::back_edges)) are not waited for, and what arrives
//!   on them between the recording and their barrier is logged, as Chandy–Lamport records it.
//! - [`Algorithm::Unaligned`] (Flink 1.11+): the first barrier is taken at once, overtaking the
//!   data queued ahead of it on its input; the process records, and its barriers overtake its
//!   own output buffers. The data overtaken on either side is the channel state: the input side
//!   records the messages its barrier overtook and those that arrive on other inputs before
//!   their barriers; the output side records what was buffered when the barrier went out. A
//!   sender's output buffer is part of its core state ([`Process::transmit`](crate::Process::transmit)
//!   moves its head onto the wire).
//!
//! The rest of the code never asks which algorithm runs, only what it does: whether it is
//! [coordinated](Algorithm::coordinated), whether it [aligns](Algorithm::aligns), whether its
//! [barriers overtake](Algorithm::barriers_overtake) queued input, and the other questions
//! below. A new algorithm is one more variant with an answer to each of them, plus whatever
//! rules are really new.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The marker rules a process follows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Algorithm {
    /// Chandy & Lamport (1985).
    #[default]
    ChandyLamport,
    /// Aligned barriers: inputs block until every barrier is in.
    Aligned,
    /// Unaligned barriers: barriers overtake queued data, which becomes channel state.
    Unaligned,
}

impl Algorithm {
    /// Every algorithm, in the order the CLI lists them.
    pub const ALL: [Algorithm; 3] = [Algorithm::ChandyLamport, Algorithm::Aligned, Algorithm::Unaligned];

    /// The name the CLI uses.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::ChandyLamport => "chandy-lamport",
            Algorithm::Aligned => "aligned",
            Algorithm::Unaligned => "unaligned",
        }
    }

    /// Whether snapshots are checkpoints run by a coordinator ([`Coordinator`](crate::Coordinator)):
    /// it triggers every initiator together (at the sources, where there are any), numbers the
    /// checkpoints, collects the acknowledgements, stores the latest complete one and restores
    /// it after a crash. With it come rules Chandy–Lamport has none of: a newer checkpoint
    /// subsumes the one in progress and older barriers are obsolete; a process may decline; an
    /// aborted checkpoint sends cancellation barriers downstream. Without it any initiator starts
    /// a snapshot on its own, and a snapshot is never given up.
    pub fn coordinated(self) -> bool {
        match self {
            Algorithm::ChandyLamport => false,
            Algorithm::Aligned => true,
            Algorithm::Unaligned => true,
        }
    }

    /// Whether inputs align: an input whose barrier has arrived is blocked (nothing is taken
    /// from it, barriers and cancellations included) until every input that is not a back edge
    /// has its barrier, and only then does the process record. Back edges are not waited for;
    /// what arrives on them between the recording and their barrier is logged as channel state.
    /// So on an acyclic graph a recording holds no channel state at all.
    pub fn aligns(self) -> bool {
        match self {
            Algorithm::ChandyLamport => false,
            Algorithm::Aligned => true,
            Algorithm::Unaligned => false,
        }
    }

    /// Whether a barrier may be taken in ahead of the application messages queued before it on
    /// its channel (never ahead of restored data, or of another barrier). The messages it
    /// overtook are that channel's state in the snapshot at once, and are taken in later.
    /// Without it a marker is taken in only at the head of its channel, and the core refuses a
    /// receipt that overtakes.
    pub fn barriers_overtake(self) -> bool {
        match self {
            Algorithm::ChandyLamport => false,
            Algorithm::Aligned => false,
            Algorithm::Unaligned => true,
        }
    }

    /// Whether an application send goes into the sender's output buffer, part of its state,
    /// instead of onto the channel at once; [`Process::transmit`](crate::Process::transmit)
    /// puts the buffer's head on the wire, and a driver offers that as a step of its own.
    /// Barriers go out ahead of the buffer: a recording holds what is buffered as its outgoing
    /// channels' state, and the local snapshot carries it. Without it a send leaves at once and
    /// a local snapshot has no output side.
    pub fn buffers_output(self) -> bool {
        match self {
            Algorithm::ChandyLamport => false,
            Algorithm::Aligned => false,
            Algorithm::Unaligned => true,
        }
    }

    /// Whether a message may be recorded as channel state before its receiver takes it in:
    /// while it waits in its sender's output buffer, or on its channel behind a barrier that
    /// overtook it. Without it a message is recorded when it is received (after the receiver
    /// recorded, before that channel's marker), so a message lost on its channel was never
    /// recorded; the model's full mode counts a stolen message as lost before the cut, and
    /// cannot judge theft when this holds.
    pub fn records_before_receipt(self) -> bool {
        match self {
            Algorithm::ChandyLamport => false,
            Algorithm::Aligned => false,
            Algorithm::Unaligned => true,
        }
    }

    /// Whether more than one snapshot may be in progress at once (for a coordinator: a
    /// `max_concurrent` above 1). Chandy–Lamport's snapshots overlap freely, told apart by
    /// their ids, and aligned checkpoints may overlap as Flink's do; Flink has no concurrent
    /// unaligned checkpoints, so the runtime and the model refuse them.
    pub fn concurrent_checkpoints(self) -> bool {
        match self {
            Algorithm::ChandyLamport => true,
            Algorithm::Aligned => true,
            Algorithm::Unaligned => false,
        }
    }

    /// Whether a state of processes following these rules maps onto a symmetric one by a
    /// permutation of the processes (the model checker's symmetry reduction): everything a
    /// process holds is renumbered by [`Process::relabeled`](crate::Process::relabeled). Not
    /// with the barrier algorithms: their back edges and output buffers are numbered by channel
    /// and are not renumbered, and neither is the coordinator's state.
    pub fn permutable(self) -> bool {
        match self {
            Algorithm::ChandyLamport => true,
            Algorithm::Aligned => false,
            Algorithm::Unaligned => false,
        }
    }

    /// Whether the model checker's partial-order reduction may be used with these rules: its
    /// independence argument (which steps commute) was made for them. Not for the barrier
    /// algorithms: blocked inputs and output buffers make more steps dependent, and the
    /// coordinator's steps concern every process.
    pub fn por_argued(self) -> bool {
        match self {
            Algorithm::ChandyLamport => true,
            Algorithm::Aligned => false,
            Algorithm::Unaligned => false,
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown algorithm name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown algorithm {0:?} (expected chandy-lamport, aligned or unaligned)")]
pub struct UnknownAlgorithm(pub String);

impl FromStr for Algorithm {
    type Err = UnknownAlgorithm;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Algorithm::ALL.into_iter().find(|a| a.name() == s).ok_or_else(|| UnknownAlgorithm(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_are_refused() {
        for a in Algorithm::ALL {
            assert_eq!(a.name().parse::<Algorithm>(), Ok(a));
            assert_eq!(a.to_string(), a.name());
        }
        assert_eq!("flink".parse::<Algorithm>(), Err(UnknownAlgorithm("flink".into())));
        assert_eq!(Algorithm::default(), Algorithm::ChandyLamport);
    }

    /// A question the rules ask of an algorithm, by its method's name.
    type Question = (&'static str, fn(Algorithm) -> bool);

    /// The questions, in the order of the table's columns below.
    const QUESTIONS: [Question; 8] = [
        ("coordinated", Algorithm::coordinated),
        ("aligns", Algorithm::aligns),
        ("barriers_overtake", Algorithm::barriers_overtake),
        ("buffers_output", Algorithm::buffers_output),
        ("records_before_receipt", Algorithm::records_before_receipt),
        ("concurrent_checkpoints", Algorithm::concurrent_checkpoints),
        ("permutable", Algorithm::permutable),
        ("por_argued", Algorithm::por_argued),
    ];

    #[test]
    fn every_algorithm_answers_every_question_as_pinned() {
        let (t, f) = (true, false);
        let table = [
            // coordinated, aligns, overtake, buffers, before receipt, concurrent, permutable, por
            (Algorithm::ChandyLamport, [f, f, f, f, f, t, t, t]),
            (Algorithm::Aligned, [t, t, f, f, f, t, f, f]),
            (Algorithm::Unaligned, [t, f, t, t, t, f, f, f]),
        ];
        assert_eq!(table.map(|(a, _)| a), Algorithm::ALL, "one row per algorithm");
        for (algorithm, answers) in table {
            for ((question, ask), answer) in QUESTIONS.into_iter().zip(answers) {
                assert_eq!(ask(algorithm), answer, "{algorithm}: {question}");
            }
        }
    }
}
