//! Checking the model: the checker's settings ([`CheckOptions`]), a run of the search over
//! one machine's threads, MPI ranks or a shard ([`check`], [`check_distributed`]), its result
//! and verdicts as data ([`CheckResult`]), the table and verdict line a terminal shows
//! ([`print_table`]), and shards' results merged into one ([`merge`]). The `model` command
//! ([`crate::cli`]) parses flags into these and prints what they return.

pub mod options;
pub mod report;
pub mod run;
pub mod shards;

pub use options::{CheckOptions, Strategy};
pub use report::{print_table, CheckResult, Verdict};
pub use run::{check, check_distributed};
pub use shards::merge;
