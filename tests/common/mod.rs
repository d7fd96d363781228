//! Helpers shared by the library's integration tests.

use chandy_lamport::apps::bank::Bank;
use chandy_lamport::sim::{DelaySource, Finished, SimConfig, SimError, Simulator, SETTLE_TICKS};
use chandy_lamport::{ProcessId, Topology, Variant};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// A random bank workload on `topology`: transfers (some refused), three overlapping snapshots
/// from random initiators, ticks; then ticks until every snapshot completes or nothing moves.
pub fn workload(topology: &Topology, variant: Variant, seed: u64) -> Result<Finished<Bank>, SimError> {
    let mut rng = StdRng::seed_from_u64(seed);
    let n = topology.len();
    let config = SimConfig { variant, fault_seed: seed, ..SimConfig::new(DelaySource::Seeded(seed)) };
    let mut sim = Simulator::<Bank>::new(topology.clone(), &vec![10; n], config)?;
    let mut snapshots = 0;
    for _ in 0..60 {
        let p = ProcessId(rng.random_range(0..n) as u16);
        match rng.random_range(0..12) {
            0 if snapshots < 3 => {
                sim.start_snapshot(p)?;
                snapshots += 1;
            }
            1..=3 => sim.tick(rng.random_range(1..=2))?,
            _ => {
                let out = topology.outgoing(p);
                let to = topology.channel(out[rng.random_range(0..out.len())]).to;
                match sim.transfer(p, to, rng.random_range(1..=4)) {
                    Ok(_) | Err(SimError::Refused { .. }) => {}
                    Err(e) => return Err(e),
                }
            }
        }
    }
    sim.run_to_completion()?;
    sim.tick(SETTLE_TICKS)?;
    Ok(sim.finish())
}
