//! The one place this crate gets its threads and locks from: `std` normally, loom under
//! `--cfg loom`, shuttle under `--cfg shuttle` (the cfg shim pattern: the implementation never
//! names `std::sync` or `std::thread` itself).

#[cfg(loom)]
pub(crate) use loom::{
    sync::{Arc, Mutex, MutexGuard},
    thread,
};

#[cfg(all(shuttle, not(loom)))]
pub(crate) use shuttle::{
    sync::{Arc, Mutex, MutexGuard},
    thread,
};

#[cfg(not(any(loom, shuttle)))]
pub(crate) use std::{
    sync::{Arc, Mutex, MutexGuard},
    thread,
};
