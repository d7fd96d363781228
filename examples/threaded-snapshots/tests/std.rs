#![cfg(not(any(loom, shuttle)))]
//! The implementation on real threads: whatever the OS schedules, the correct copy's every run
//! holds (the broken copies fail only in rare schedules here: loom and shuttle find them).

use threaded_snapshots::{Bug, Scenario};

#[test]
fn the_correct_implementation_holds_on_real_threads() {
    for _ in 0..20 {
        Scenario::shuttle(5, Bug::None, 2).run().assert_holds();
        Scenario::loom(Bug::None, 2).run().assert_holds();
    }
}
