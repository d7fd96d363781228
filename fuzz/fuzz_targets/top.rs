//! `.top` text: the reader never panics, and what the writer writes of a topology it read reads
//! back as the same topology and tokens.
#![no_main]

use chandy_lamport::formats::top::{write, TopFile};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let Ok(file) = TopFile::parse(text, "fuzz.top") else { return };
    if let Some(written) = write(&file.topology, &file.tokens) {
        let again = TopFile::parse(&written, "written.top").expect("a written .top reads back");
        assert_eq!(again.topology, file.topology);
        assert_eq!(again.tokens, file.tokens);
    }
});
