//! The `model` command: its flags, the checker's settings, running a check, reports and exit
//! codes, shards' merge, and log verification (`model verify`).

pub mod args;
pub mod commands;
pub mod options;
pub mod output;
pub mod report;
pub mod run;
pub mod shards;
pub mod verify;

pub use options::{CheckOptions, Strategy};
pub use report::{CheckResult, Verdict};
pub use run::check;
