//! A user-defined application, model-checked through the library: processes gossip the largest
//! value they have heard of. Neither the bank nor the orders: no conserved quantity, and a stable
//! predicate of its own ("everyone agrees").
//!
//! `cargo run --release -p model --example gossip [-- --variant stale-state]`

use std::process::ExitCode;

use chandy_lamport::apps::spec::{Move, Setup, Spec, Stable, View};
use chandy_lamport::protocol::{Application, Refusal};
use chandy_lamport::{ProcessId, Topology, Variant};
use model::{check, CheckOptions, CheckResult, Config, InitiatorSpec, SnapshotModel, Strategy, TopologySpec};
use serde::{Deserialize, Serialize};

/// A process: the largest value it has heard of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Gossip {
    /// The largest value heard of so far.
    pub max: u8,
}

/// A message: "the largest value I know is this".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Tell(pub u8);

impl Application for Gossip {
    type Msg = Tell;
    type Step = ();

    /// A process tells only what it knows.
    fn on_send(&mut self, _to: ProcessId, msg: &Tell) -> Result<(), Refusal> {
        if msg.0 == self.max {
            Ok(())
        } else {
            Err(Refusal(format!("tells {} but knows {}", msg.0, self.max)))
        }
    }

    fn on_message(&mut self, _from: ProcessId, msg: &Tell) {
        self.max = self.max.max(msg.0);
    }

    fn on_internal(&mut self, _step: &()) -> Result<(), Refusal> {
        Ok(())
    }
}

/// Everyone holds the same value and nothing in transit is larger: values only grow and every
/// receipt takes the larger, so once true it stays true.
fn agreed(v: &View<'_, Gossip>) -> bool {
    let Some(first) = v.states.first() else { return true };
    v.states.iter().all(|s| s.max == first.max) && v.channels.iter().flatten().all(|m| m.0 <= first.max)
}

impl Spec for Gossip {
    const NAME: &'static str = "gossip";

    /// `p + tokens` fits a byte for every process of the model.
    const MAX_TOKENS: u32 = u8::MAX as u32 - model::system::state::MAX_PROCESSES as u32;

    /// Process `p` starts knowing `p + tokens` (different values, so there is news to spread).
    fn initial(p: ProcessId, tokens: u32) -> Self {
        Gossip { max: u8::try_from(u32::from(p.0) + tokens).unwrap_or(u8::MAX) }
    }

    /// A process may tell any neighbour what it knows (each telling costs one unit of budget).
    fn moves(&self, me: ProcessId, topology: &Topology, _setup: &Setup, out: &mut dyn FnMut(Move<Tell, ()>)) {
        for &channel in topology.outgoing(me) {
            out(Move::Send { channel, msg: Tell(self.max) });
        }
    }

    fn stable() -> &'static [Stable<Self>] {
        &[Stable {
            name: "everyone agrees",
            holds: agreed,
            examples: Some(("a snapshot sees everyone agree", "everyone agrees after a snapshot that saw otherwise")),
        }]
    }
}

/// Checks gossip among three processes on a one-way ring, every property, exhaustively.
pub fn check_gossip(variant: Variant) -> CheckResult {
    let config = Config {
        procs: Some(3),
        topology: TopologySpec::Ring,
        tokens: Some(0),
        sends: 2,
        initiators: InitiatorSpec::Only(vec![0]),
        variant,
        ..Config::default()
    };
    let model = SnapshotModel::<Gossip>::new(config.resolve().expect("a valid configuration"));
    let options = CheckOptions { strategy: Strategy::Bfs, threads: 1, ..CheckOptions::default() };
    check(model, &options, None).expect("the options fit the model")
}

#[allow(dead_code)] // a test includes this file as a module
fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let variant = match args.as_slice() {
        [] => Variant::None,
        [flag, name] if flag == "--variant" => match name.parse() {
            Ok(v) => v,
            Err(e) => {
                eprintln!("error: --variant: {e}");
                return ExitCode::from(2);
            }
        },
        _ => {
            eprintln!("usage: gossip [--variant NAME]");
            return ExitCode::from(2);
        }
    };
    let result = check_gossip(variant);
    let mut out = std::io::stdout();
    model::check::print_table(&result, &mut out).expect("stdout");
    ExitCode::from(result.exit_code)
}
