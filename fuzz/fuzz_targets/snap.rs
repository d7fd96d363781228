//! `.snap` text: the reader never panics, and the blocks it read are written and read back the
//! same.
#![no_main]

use chandy_lamport::formats::snap::{write, SnapFile};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let Ok(file) = SnapFile::parse(text, "fuzz.snap") else { return };
    let again = SnapFile::parse(&write(&file.blocks), "written.snap").expect("a written .snap reads back");
    assert_eq!(again.blocks, file.blocks);
});
