//! The `model` command: its flags, the commands they run over the library ([`mod@crate::check`],
//! `chandy_lamport::logs`), output and exit codes.

pub mod args;
pub mod commands;
pub mod output;
pub mod verify;
