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
}
