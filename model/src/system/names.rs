//! The properties' names, exactly as reported, and the index of each one's latch in the model
//! (the model sizes its latches by [`KINDS`]; the properties say which is whose).

/// (a)
pub const CROSSING: &str = "nothing crosses the cut inward";
/// (b)
pub const RECORDS: &str = "channel records hold exactly the in-flight messages";
/// Conservation.
pub const LEDGER: &str = "recorded total equals the ledger";
/// (e)
pub const TERMINATES: &str = "snapshot terminates";
/// (c)
pub const REACHABLE: &str = "recorded state reachable from start";
/// (d)
pub const END_REACHABLE: &str = "end state reachable from recorded state";
/// Stable properties.
pub const STABLE: &str = "stable detection is sound";
/// No step pruned: the core refuses nothing the model offers.
pub const ACCEPTS: &str = "the core accepts every step the model offers";
/// Example: a non-empty record.
pub const RECORD_MESSAGE: &str = "a channel record holds a message";
/// Example: overlap.
pub const OVERLAP: &str = "two snapshots overlap";
/// Example: S* never occurred (literal mode, internal steps).
pub const NEVER_OCCURRED: &str = "recorded state never occurred";
/// Barrier algorithms: the coordinator ends every checkpoint.
pub const CHECKPOINTS_END: &str = "every checkpoint completes or is aborted";
/// Barrier algorithms: completions in id order.
pub const IDS_INCREASE: &str = "completed checkpoint ids increase";
/// Barrier algorithms: the coordinator keeps triggering.
pub const TRIGGERING: &str = "triggering never stops while the job runs";
/// Aligned barriers on an acyclic graph.
pub const NO_CHANNEL_STATE: &str = "aligned barriers on an acyclic graph record no channel state";
/// Barrier algorithms, deterministic applications: recovery loses and duplicates nothing.
pub const EXACTLY_ONCE: &str = "exactly-once: every quiet state is the failure-free run's";
/// Barrier algorithms: every stored checkpoint is judged when stored, by restoring it.
pub const STORED_RECOVERS: &str = "every stored checkpoint restores to a failure-free end";

/// Barrier algorithms, the premise of the ledger and of the stored checkpoints' restores.
pub const STORED: &str = "a checkpoint is stored";
/// Barrier algorithms with crashes, the premise of exactly-once.
pub const QUIET_AFTER_CRASH: &str = "a quiet state follows a crash";

/// The fixed properties, in latch order.
pub const NAMES: [&str; 19] = [
    ACCEPTS,
    CROSSING,
    RECORDS,
    LEDGER,
    TERMINATES,
    REACHABLE,
    END_REACHABLE,
    STABLE,
    RECORD_MESSAGE,
    OVERLAP,
    NEVER_OCCURRED,
    CHECKPOINTS_END,
    IDS_INCREASE,
    TRIGGERING,
    NO_CHANNEL_STATE,
    EXACTLY_ONCE,
    STORED_RECOVERS,
    STORED,
    QUIET_AFTER_CRASH,
];

/// The latch of "a snapshot detects P".
pub(crate) const DETECTS: usize = NAMES.len();
/// The latch of "P comes true after a snapshot that saw none".
pub(crate) const AFTER: usize = NAMES.len() + 1;

/// Number of property kinds (latches).
pub const KINDS: usize = NAMES.len() + 2;

/// The latch of property `name` (its position in [`NAMES`]).
pub(crate) fn index(name: &str) -> usize {
    NAMES.iter().position(|n| *n == name).unwrap_or(0)
}
