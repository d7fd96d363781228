//! The user-defined application of `model/examples/gossip.rs`, model-checked through the
//! library as the example does: it passes, and a broken snapshot breaks its stable predicate.

#[path = "../examples/gossip.rs"]
mod gossip;

use chandy_lamport::Variant;
use model::system::properties::{END_REACHABLE, REACHABLE, STABLE};
use model::Verdict;

#[test]
fn gossip_passes_with_both_examples_found() {
    let result = gossip::check_gossip(Variant::None);
    assert!(result.ok, "{}", result.summary);
    assert_eq!(result.unique_states, 9_508);
    for p in &result.properties {
        assert!(matches!(p.verdict, Verdict::Holds | Verdict::ExampleFound), "{}: {:?}", p.name, p.verdict);
    }
    let names: Vec<&str> = result.properties.iter().map(|p| p.name.as_str()).collect();
    assert!(names.contains(&"a snapshot sees everyone agree"));
    assert!(!names.contains(&model::system::properties::LEDGER), "gossip conserves nothing: no ledger");
}

#[test]
fn a_stale_recorded_state_breaks_gossip_agreement_detection() {
    let result = gossip::check_gossip(Variant::StaleState);
    let failing: Vec<&str> =
        result.properties.iter().filter(|p| p.verdict == Verdict::Counterexample).map(|p| p.name.as_str()).collect();
    assert_eq!(failing, [REACHABLE, END_REACHABLE, STABLE]);
}
