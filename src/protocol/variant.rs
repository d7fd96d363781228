//! Named fault variants: deliberately broken versions of the algorithm, to show the checks can fail.
//!
//! The default, [`Variant::None`], is the correct algorithm. The core consults the variant only on
//! the rare branches where a fault would act, so a correct run pays one predictable comparison.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::algorithm::Algorithm;

/// A fault injected into the marker rules (core variants) or the channels (channel variants).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Variant {
    /// The correct algorithm.
    #[default]
    None,
    /// On recording, the markers are held back until the process's next step (or until it is
    /// idle): a message sent as that next step overtakes them.
    SendBeforeMarker,
    /// Channel records are always empty.
    NoChannelRecording,
    /// The first marker a recorded process receives closes every channel record of that process.
    CloseAllOnFirstMarker,
    /// A channel's record is not closed by its marker: it keeps recording until the process's
    /// last marker arrives.
    KeepRecordingAfterMarker,
    /// A process that records on receiving a marker sends no markers.
    NoMarkerForwarding,
    /// A process that receives its first marker records its state (and sends its markers) only
    /// after handling one more incoming message (or when it is idle).
    LateRecord,
    /// A process records its state as it was before its latest receipt.
    StaleState,
    /// A channel record lists its messages in reverse arrival order.
    RecordsReversed,
    /// With two snapshots in flight, a marker of one closes the other's record of its channel.
    SwapRecord,
    /// On recording, a process sends markers on all its outgoing channels but its last one.
    SkipOneMarker,
    /// A message recorded on a channel is recorded once more when the channel's record closes.
    RecordTwice,
    /// On recording, a process sends every marker twice; the receiver's core refuses the second.
    DoubleMarker,
    /// Channel fault: any message in transit may be delivered, not just the head.
    NonFifo,
    /// Channel fault: markers may be lost in transit.
    LoseMarkers,
    /// Aligned barriers (FLINK-17568): an input is not blocked after its barrier, so data
    /// behind the barrier is processed before the process records.
    ProcessAfterBarrier,
    /// Aligned barriers on a cycle: back edges are not waited for, but what arrives on them
    /// between the recording and their barrier is not logged either.
    AlignedCycleNoBackedge,
    /// Unaligned barriers: only the first outgoing channel's output buffer is recorded (an
    /// output-side analogue of FLINK-18139, no Flink bug).
    PartialOutputBuffers,
    /// Unaligned barriers (FLINK-20654, FLINK-21104): after a decline, an obsolete barrier of
    /// the declined checkpoint, arriving before its cancellation, is taken for the barrier of the
    /// checkpoint in progress on that channel.
    MixedBarriersAfterDecline,
    /// The checkpoint coordinator (FLINK-13256): the periodic timer, firing while
    /// max-concurrent checkpoints are pending, is cancelled until one of them completes or is
    /// declined; a failover aborts them all and never reschedules it.
    TriggerStopsAfterAbort,
    /// Barrier algorithms: a process that declines a checkpoint sends no cancellation barriers,
    /// so the processes downstream wait for barriers that never come.
    NoCancellationBarriers,
    /// The checkpoint coordinator: a completed checkpoint does not subsume older pending ones,
    /// which may complete later and replace it as the one a recovery restores.
    NoSubsumption,
    /// Unaligned barriers (FLINK-17568): the barrier's arrival and the checkpoint are two steps
    /// (the network thread sees the barrier, the task thread runs the checkpoint later), and the
    /// task takes in one more message between them — possibly one behind the barrier.
    DeferredUnalignedCheckpoint,
    /// Unaligned barriers (FLINK-18139): whether an input still has in-flight data to record is
    /// looked up by its index within its input gate (always 0: one channel per gate) instead of
    /// its index among all inputs, so every input of a multi-input process is checked as its
    /// first one: once the first input's barrier is in, the others' in-flight data is not
    /// recorded.
    WrongInflightChannels,
    /// Recovery: each channel's recorded items are put back in reverse order.
    RestoreReversed,
    /// Recovery: each process's recorded input channel state is put back on another of its
    /// inputs, so the items seem to come from another upstream process.
    RestoreMisrouted,
    /// Unaligned barriers (FLINK-20654): a process still taking in restored channel state does
    /// not decline a checkpoint, and the restored items it takes in after recording are not
    /// recorded as channel state (Flink 1.12.0's recovered input channels were invisible to the
    /// channel-state persister).
    CheckpointDuringRecovery,
}

/// A variant name that does not exist.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("unknown variant {name:?} (known: {})", Variant::ALL.iter().map(|v| v.name()).collect::<Vec<_>>().join(", "))]
pub struct UnknownVariant {
    /// The name given.
    pub name: String,
}

impl Variant {
    /// Every variant, `None` first.
    pub const ALL: [Variant; 27] = [
        Variant::None,
        Variant::SendBeforeMarker,
        Variant::NoChannelRecording,
        Variant::CloseAllOnFirstMarker,
        Variant::KeepRecordingAfterMarker,
        Variant::NoMarkerForwarding,
        Variant::LateRecord,
        Variant::StaleState,
        Variant::RecordsReversed,
        Variant::SwapRecord,
        Variant::SkipOneMarker,
        Variant::RecordTwice,
        Variant::DoubleMarker,
        Variant::NonFifo,
        Variant::LoseMarkers,
        Variant::ProcessAfterBarrier,
        Variant::AlignedCycleNoBackedge,
        Variant::PartialOutputBuffers,
        Variant::MixedBarriersAfterDecline,
        Variant::TriggerStopsAfterAbort,
        Variant::NoCancellationBarriers,
        Variant::NoSubsumption,
        Variant::RestoreReversed,
        Variant::RestoreMisrouted,
        Variant::DeferredUnalignedCheckpoint,
        Variant::WrongInflightChannels,
        Variant::CheckpointDuringRecovery,
    ];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Variant::None => "none",
            Variant::SendBeforeMarker => "send-before-marker",
            Variant::NoChannelRecording => "no-channel-recording",
            Variant::CloseAllOnFirstMarker => "close-all-on-first-marker",
            Variant::KeepRecordingAfterMarker => "keep-recording-after-marker",
            Variant::NoMarkerForwarding => "no-marker-forwarding",
            Variant::LateRecord => "late-record",
            Variant::StaleState => "stale-state",
            Variant::RecordsReversed => "records-reversed",
            Variant::SwapRecord => "swap-record",
            Variant::SkipOneMarker => "skip-one-marker",
            Variant::RecordTwice => "record-twice",
            Variant::DoubleMarker => "double-marker",
            Variant::NonFifo => "non-fifo",
            Variant::LoseMarkers => "lose-markers",
            Variant::ProcessAfterBarrier => "process-after-barrier",
            Variant::AlignedCycleNoBackedge => "aligned-cycle-no-backedge",
            Variant::PartialOutputBuffers => "partial-output-buffers",
            Variant::MixedBarriersAfterDecline => "mixed-barriers-after-decline",
            Variant::TriggerStopsAfterAbort => "trigger-stops-after-abort",
            Variant::NoCancellationBarriers => "no-cancellation-barriers",
            Variant::NoSubsumption => "no-subsumption",
            Variant::RestoreReversed => "restore-reversed",
            Variant::DeferredUnalignedCheckpoint => "deferred-unaligned-checkpoint",
            Variant::WrongInflightChannels => "wrong-inflight-channels",
            Variant::RestoreMisrouted => "restore-misrouted",
            Variant::CheckpointDuringRecovery => "checkpoint-during-recovery",
        }
    }

    /// One line saying what the fault does.
    pub fn description(self) -> &'static str {
        match self {
            Variant::None => "the correct algorithm",
            Variant::SendBeforeMarker => {
                "on recording, the markers wait for the process's next step: a cart sent then leaves first"
            }
            Variant::NoChannelRecording => "channel records are always empty",
            Variant::CloseAllOnFirstMarker => {
                "the first marker a recorded process receives closes all its channel records"
            }
            Variant::KeepRecordingAfterMarker => {
                "a marker does not close its channel's record; recording goes on until the last marker"
            }
            Variant::NoMarkerForwarding => "a process that records on a marker sends no markers",
            Variant::LateRecord => "on its first marker a process records only after handling one more message",
            Variant::StaleState => "a process records its state as it was before its latest receipt",
            Variant::RecordsReversed => "a channel record lists its messages in reverse arrival order",
            Variant::SwapRecord => "with two snapshots in flight, a marker of one closes the other's channel record",
            Variant::SkipOneMarker => "on recording, a process sends no marker on its last outgoing channel",
            Variant::RecordTwice => "each message recorded on a channel is recorded once more when the record closes",
            Variant::DoubleMarker => {
                "on recording, a process sends every marker twice (the receiver refuses the second)"
            }
            Variant::NonFifo => "(channel) any message in transit may be delivered, not just the head",
            Variant::LoseMarkers => "(channel) markers may be lost in transit",
            Variant::ProcessAfterBarrier => {
                "(aligned; FLINK-17568) data behind a barrier is processed before the process records"
            }
            Variant::AlignedCycleNoBackedge => {
                "(aligned) on a cycle, what arrives on a back edge before its barrier is not logged"
            }
            Variant::PartialOutputBuffers => {
                "(unaligned) only the first outgoing channel's buffered data is recorded"
            }
            Variant::MixedBarriersAfterDecline => {
                "(unaligned; FLINK-21104) after a decline, a late barrier of the declined checkpoint ends the newer one's channel record"
            }
            Variant::TriggerStopsAfterAbort => {
                "(coordinator; FLINK-13256) the timer fired at max-concurrent is cancelled, and a failover's abort never reschedules it"
            }
            Variant::NoCancellationBarriers => {
                "(aligned) a house that declines sends no cancellation barriers: downstream houses wait for ever"
            }
            Variant::NoSubsumption => {
                "(coordinator) a completed checkpoint leaves older pending ones, which may complete after it"
            }
            Variant::RestoreReversed => "(recovery) each channel's recorded items are put back in reverse order",
            Variant::WrongInflightChannels => {
                "(unaligned; FLINK-18139) every input is checked for in-flight data as if it were the first"
            }
            Variant::DeferredUnalignedCheckpoint => {
                "(unaligned; FLINK-17568) the checkpoint runs after the barrier's arrival, once the task has taken in one more message"
            }
            Variant::RestoreMisrouted => {
                "(recovery) a house's recorded input channel state is put back on another of its inputs"
            }
            Variant::CheckpointDuringRecovery => {
                "(unaligned; FLINK-20654) a house still taking in restored data checkpoints, and does not record that data"
            }
        }
    }

    /// The algorithm whose fault this is (`None` is correct in every algorithm).
    pub fn algorithm(self) -> Algorithm {
        match self {
            Variant::ProcessAfterBarrier | Variant::AlignedCycleNoBackedge | Variant::NoCancellationBarriers => {
                Algorithm::Aligned
            }
            Variant::PartialOutputBuffers
            | Variant::WrongInflightChannels
            | Variant::MixedBarriersAfterDecline
            | Variant::DeferredUnalignedCheckpoint
            | Variant::CheckpointDuringRecovery => Algorithm::Unaligned,
            // A fault of the coordinator, which both barrier algorithms use: pinned under aligned.
            Variant::TriggerStopsAfterAbort | Variant::NoSubsumption => Algorithm::Aligned,
            // A fault of recovery, which both use: pinned under unaligned, whose checkpoints
            // hold channel state on any graph.
            Variant::RestoreReversed | Variant::RestoreMisrouted => Algorithm::Unaligned,
            _ => Algorithm::ChandyLamport,
        }
    }

    /// The variants a process running `algorithm` can have, `None` first.
    pub fn of(algorithm: Algorithm) -> impl Iterator<Item = Variant> {
        Variant::ALL.into_iter().filter(move |v| v.applies_to(algorithm))
    }

    /// Whether a process running `algorithm` can have this fault: its own algorithm's, or a fault
    /// of the coordinator or of recovery under any [coordinated](Algorithm::coordinated) one.
    pub fn applies_to(self, algorithm: Algorithm) -> bool {
        self == Variant::None
            || self.algorithm() == algorithm
            || ((self.is_coordinator_fault() || self.is_recovery_fault()) && algorithm.coordinated())
    }

    /// True for faults of the checkpoint coordinator rather than of the processes.
    pub(crate) fn is_coordinator_fault(self) -> bool {
        matches!(self, Variant::TriggerStopsAfterAbort | Variant::NoSubsumption)
    }

    /// True for faults of what a recovery restores ([`crate::protocol::restored_channels`]).
    pub fn is_recovery_fault(self) -> bool {
        matches!(self, Variant::RestoreReversed | Variant::RestoreMisrouted)
    }

    /// True for faults of the channels rather than of the marker rules.
    pub fn is_channel_fault(self) -> bool {
        matches!(self, Variant::NonFifo | Variant::LoseMarkers)
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Variant {
    type Err = UnknownVariant;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Variant::ALL.iter().copied().find(|v| v.name() == s).ok_or_else(|| UnknownVariant { name: s.to_string() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_is_described_and_no_two_alike() {
        let mut seen = std::collections::HashSet::new();
        for v in Variant::ALL {
            let d = v.description();
            assert!(d.split_whitespace().count() >= 3, "{v}: {d:?}");
            assert!(seen.insert(d), "{v} shares its description");
        }
    }

    #[test]
    fn names_round_trip_and_unknown_is_an_error() {
        for v in Variant::ALL {
            assert_eq!(v.name().parse::<Variant>(), Ok(v));
            assert!(v.applies_to(v.algorithm()));
        }
        assert!(Variant::None.applies_to(Algorithm::Aligned) && Variant::None.applies_to(Algorithm::Unaligned));
        assert!(!Variant::LateRecord.applies_to(Algorithm::Aligned));
        assert!(!Variant::ProcessAfterBarrier.applies_to(Algorithm::ChandyLamport));
        assert!(!Variant::PartialOutputBuffers.applies_to(Algorithm::Aligned));
        assert!(Variant::RestoreReversed.applies_to(Algorithm::Aligned));
        assert!(!Variant::RestoreMisrouted.applies_to(Algorithm::ChandyLamport));
        assert!(Variant::RestoreMisrouted.is_recovery_fault() && !Variant::NoSubsumption.is_recovery_fault());
        let err = "fifo".parse::<Variant>().unwrap_err();
        assert!(err.to_string().contains("unknown variant \"fifo\""));
        assert!(err.to_string().contains("late-record"));
    }
}
