//! A scenario as `model replay` reads it: `.top`, `.events` and optionally `.snap` text (and a
//! fault variant's name), separated by NUL bytes. Every file the parsers accept is run on the
//! simulator, its snapshots checked by the trace checker and compared with the `.snap` file's:
//! nothing panics or hangs, whatever the files say.
#![no_main]

use chandy_lamport::formats::events::EventsFile;
use chandy_lamport::formats::snap::{compare, SnapFile};
use chandy_lamport::formats::top::TopFile;
use chandy_lamport::protocol::variant::Variant;
use chandy_lamport::sim::{run_events, DelaySource, SimConfig};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let mut parts = text.split('\0');
    let (Some(top), Some(events)) = (parts.next(), parts.next()) else { return };
    let (Ok(top), Ok(events)) = (TopFile::parse(top, "fuzz.top"), EventsFile::parse(events, "fuzz.events")) else {
        return;
    };
    let expected = parts.next().map(|snap| SnapFile::parse(snap, "fuzz.snap"));
    let variant = match parts.next() {
        Some(name) => match name.trim().parse::<Variant>() {
            Ok(variant) => variant,
            Err(_) => return,
        },
        None => Variant::None,
    };
    let config = SimConfig { variant, ..SimConfig::new(DelaySource::Seeded(text.len() as u64)) };
    let Ok(run) = run_events(&top, &events, config) else { return };
    let checked = run.check(&top.topology);
    let blocks = run.blocks(&top.topology);
    if variant == Variant::None {
        // The correct algorithm: every snapshot holds and accounts for every token.
        assert!(checked.is_ok(), "a correct run's snapshot fails: {checked:?}");
    }
    if let Some(Ok(expected)) = expected {
        let _ = compare(&[expected], &blocks, Some(run.total()));
    }
});
