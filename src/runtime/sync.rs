//! The one place the runtime gets threads and channels from: `std` normally, loom under
//! `--cfg loom`, shuttle under `--cfg shuttle`, so the same runtime code runs under every
//! scheduler those tools explore.

#[cfg(loom)]
pub(crate) use loom::{sync::atomic, sync::mpsc, thread};

#[cfg(all(shuttle, not(loom)))]
pub(crate) use shuttle::{sync::atomic, sync::mpsc, thread};

#[cfg(not(any(loom, shuttle)))]
pub(crate) use std::{sync::atomic, sync::mpsc, thread};
