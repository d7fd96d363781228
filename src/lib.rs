//! Chandy–Lamport distributed snapshots: the marker rules as a sans-IO core, drivers around it
//! (a threaded runtime, a deterministic simulator), and a trace checker that verifies a recorded
//! run against the theorem.
//!
//! The running example is a ring of trading houses passing jars of oil ([`apps::bank`]): the recorded
//! balances plus the jars recorded in transit must equal the ledger. [`apps::orders`] is a second
//! application, whose houses can deadlock.
//!
//! # Quick start
//!
//! Build a topology, run the threaded runtime with an application, take a snapshot, and verify
//! the recorded run against the theorem:
//!
//! ```
//! use chandy_lamport::apps::bank::Bank;
//! use chandy_lamport::runtime::BankCommand;
//! use chandy_lamport::runtime::{Cluster, Options};
//! use chandy_lamport::{verify, ProcessId, SnapshotId, Topology};
//!
//! // Three houses on a one-way ring, ten jars each.
//! let topology = Topology::ring(3)?;
//! let options = Options { trace: true, ..Options::default() };
//! let cluster = Cluster::start(topology.clone(), vec![Bank::new(10); 3], options)?;
//!
//! // Trade while house 0 initiates snapshot 0.
//! for i in 0..3u16 {
//!     let to = ProcessId((i + 1) % 3);
//!     cluster.command(ProcessId(i), BankCommand::Transfer { to, amount: 2 })?;
//! }
//! cluster.initiate(SnapshotId(0), ProcessId(0))?;
//! cluster.command(ProcessId(1), BankCommand::Transfer { to: ProcessId(2), amount: 1 })?;
//! let snapshot = cluster.wait(SnapshotId(0))?;
//!
//! // Conservation: the jars recorded in houses and in transit are the ledger's 30.
//! assert_eq!(snapshot.state.total(), 30);
//!
//! // The trace checker replays the run by the application's transitions and checks every
//! // clause of the theorem: nothing crosses the cut, the records are exact, S* is reachable
//! // from S_begin and S_end from S*.
//! let outcome = cluster.shutdown()?;
//! let trace = outcome.trace.expect("a traced run");
//! let verified = verify(&topology, &trace, &snapshot)?;
//! assert_eq!(verified.star, snapshot.state);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Your own application
//!
//! An application is two traits. [`Application`] says how a send, a receipt and an internal
//! step change a process's state — the trace checker recomputes every state by them.
//! [`apps::spec::Spec`] says what the harness needs to drive and check it: what each process may do
//! next, a conserved quantity if there is one, and the stable predicates to test on snapshots.
//! The core runs any application unchanged:
//!
//! ```
//! use chandy_lamport::protocol::{Application, Effect, Message, Process, Refusal};
//! use chandy_lamport::{ProcessId, SnapshotId, Topology};
//!
//! /// A process that counts the pings it received.
//! #[derive(Clone, Debug, PartialEq, Eq, Hash)]
//! struct Pings(u32);
//!
//! impl Application for Pings {
//!     type Msg = ();
//!     type Step = ();
//!     fn on_send(&mut self, _to: ProcessId, _msg: &()) -> Result<(), Refusal> {
//!         Ok(())
//!     }
//!     fn on_message(&mut self, _from: ProcessId, _msg: &()) {
//!         self.0 += 1;
//!     }
//!     fn on_internal(&mut self, _step: &()) -> Result<(), Refusal> {
//!         Ok(())
//!     }
//! }
//!
//! let t = Topology::ring(2)?;
//! let (to_p1, to_p0) = (t.channel_between(ProcessId(0), ProcessId(1)).unwrap(), t.channel_between(ProcessId(1), ProcessId(0)).unwrap());
//! let (mut p0, mut p1) = (Process::new(ProcessId(0), Pings(0)), Process::new(ProcessId(1), Pings(0)));
//! let mut out = Vec::new();
//! p0.send(&t, to_p1, (), &mut out)?; // a ping in flight on P0->P1
//! p0.initiate(&t, SnapshotId(0), &mut out)?; // P0 records 0 pings, sends a marker to P1
//! p1.receive(&t, to_p1, Message::App(()), &mut out)?; // the ping arrives before the marker
//! p1.receive(&t, to_p1, Message::Marker(SnapshotId(0)), &mut out)?; // P1 records 1 ping
//! let marker = out.iter().rev().find_map(|e| match e {
//!     Effect::Send { channel, message } if *channel == to_p0 => Some(*message),
//!     _ => None,
//! });
//! p0.receive(&t, to_p0, marker.unwrap(), &mut out)?; // P0's record of P1->P0: empty
//! assert_eq!(p0.take_local_snapshot(&t, SnapshotId(0))?.state, Pings(0));
//! assert_eq!(p1.take_local_snapshot(&t, SnapshotId(0))?.state, Pings(1));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! To model-check an application, implement [`apps::spec::Spec`] and hand it to the `model` crate's
//! `SnapshotModel<A>`: `model/examples/gossip.rs` does it in one file
//! (`cargo run --release -p model --example gossip`). To check another implementation's logs,
//! see [`logs`] and `model verify`. To judge every execution of your own threaded Rust
//! implementation under loom and shuttle, see `chandy_lamport::testing` (cargo feature `testing`).

#![deny(missing_docs)]

pub mod apps;
pub mod check;
pub mod formats;
pub mod logs;
pub mod protocol;
pub mod runtime;
pub mod sim;
#[cfg(feature = "testing")]
pub mod testing;

pub use crate::apps::spec::{Move, Setup, Spec, Stable, View};
pub use crate::check::{
    check, unterminated, verify, Clause, Event, EventKind, MsgId, Report, Trace, Verified, Violation,
};
pub use crate::protocol::{
    Ack, Algorithm, Application, Assembler, Channel, ChannelId, Coordinator, CoordinatorError, CoreError, Effect,
    Failure, GlobalSnapshot, GlobalState, Initiators, LocalSnapshot, Message, Process, ProcessId, Slot, SnapshotId,
    Tokens, Topology, TopologyError, Variant,
};
