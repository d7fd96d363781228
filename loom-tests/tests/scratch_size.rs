#![cfg(loom)]
use chandy_lamport::Variant;
use loom_tests::explore::explore;
use loom_tests::scenario::Scenario;
fn bound() -> Option<usize> {
    std::env::var("B").ok().and_then(|b| b.parse().ok())
}
#[test]
fn s_two_carts2() {
    explore("two carts 2", bound(), || Scenario::two_carts_in_flight(2).run(Variant::None));
}
#[test]
fn s_two_snap2() {
    explore("two snapshots around cart 2", bound(), || Scenario::two_snapshots_around_a_cart(2).run(Variant::None));
}
#[test]
fn s_two_carts3() {
    explore("two carts 3", bound(), || Scenario::two_carts_in_flight(3).run(Variant::None));
}
#[test]
fn s_two_snap3() {
    explore("two snapshots around cart 3", bound(), || Scenario::two_snapshots_around_a_cart(3).run(Variant::None));
}
#[test]
fn s_inflight3() {
    explore("in flight 3", bound(), || Scenario::in_flight_at_shutdown(3).run(Variant::None));
}
#[test]
fn s_fanout3() {
    explore("fan out 3 unwaited", bound(), || Scenario::fan_out(3).unwaited().run(Variant::None));
}
