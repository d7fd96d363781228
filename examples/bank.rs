//! Trading houses passing jars of oil on the threaded runtime, with overlapping snapshots taken
//! from random initiators; every snapshot is checked by the trace checker and for conservation.
//!
//! `cargo run --release --example bank -- --procs 5 --transfers 10000 --snapshots 10`
//! (`--trace-out DIR` also writes the run as JSON-lines logs, for `model verify`)

use std::io::Write;
use std::process::ExitCode;

use chandy_lamport::protocol::Topology;
use chandy_lamport::runtime::workload::{run, Workload};
use clap::{Parser, ValueEnum};

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Shape {
    Complete,
    Ring,
    BidiRing,
    Star,
}

/// Run a bank cluster and verify every snapshot.
#[derive(Parser, Debug)]
struct Args {
    /// Number of houses (processes).
    #[arg(long, default_value_t = 5)]
    procs: usize,
    /// Transfer commands to issue.
    #[arg(long, default_value_t = 10_000)]
    transfers: usize,
    /// Snapshots to take.
    #[arg(long, default_value_t = 10)]
    snapshots: usize,
    /// Jars each house starts with.
    #[arg(long, default_value_t = 100)]
    jars: u32,
    /// Channel graph.
    #[arg(long, value_enum, default_value_t = Shape::Complete)]
    topology: Shape,
    /// Seed for transfers and initiators (default: from the clock; printed).
    #[arg(long)]
    seed: Option<u64>,
    /// Also write the run as JSON-lines logs into DIR: DIR/<house>.jsonl and DIR/topology.top
    /// (check them with `model verify --topology DIR/topology.top --trace DIR/*.jsonl`).
    #[arg(long, value_name = "DIR")]
    trace_out: Option<std::path::PathBuf>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let topology = match args.topology {
        Shape::Complete => Topology::complete(args.procs),
        Shape::Ring => Topology::ring(args.procs),
        Shape::BidiRing => Topology::bidi_ring(args.procs),
        Shape::Star => Topology::star(args.procs),
    };
    let topology = match topology {
        Ok(t) => t,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "error: {e}");
            return ExitCode::from(2);
        }
    };
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
    });
    let names = topology.names().to_vec();
    let mut w = Workload::new(topology, args.transfers, args.snapshots);
    w.jars = args.jars;
    w.seed = seed;
    w.trace_out = args.trace_out.clone();
    let header = format!(
        "{} houses, {} jars each, {} transfers, {} snapshots (seed {seed})\n",
        args.procs, args.jars, args.transfers, args.snapshots
    );
    if let Err(code) = print(&header) {
        return code;
    }
    match run(&w) {
        Ok(report) => {
            let mut text = String::new();
            for s in &report.snapshots {
                let who: Vec<&str> = s.initiators.iter().map(|p| names[p.index()].as_str()).collect();
                text += &format!(
                    "snapshot {}: initiated at {}; {} jars in houses + {} in transit on {} channels = {}; verified\n",
                    s.id,
                    who.join(", "),
                    s.in_houses,
                    s.in_transit,
                    s.busy_channels,
                    s.in_houses + s.in_transit
                );
            }
            text += &format!("({} transfers refused for lack of jars)\n", report.refused);
            if let Some(dir) = &args.trace_out {
                text += &format!("logs written to {} (<house>.jsonl, topology.top)\n", dir.display());
            }
            text += &format!("{} snapshots verified, total conserved\n", report.snapshots.len());
            print(&text).err().unwrap_or(ExitCode::SUCCESS)
        }
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "FAILED: {e}");
            ExitCode::from(1)
        }
    }
}

/// Writes `text` to standard output; a closed pipe or a full disk is reported, exit 4 (as the
/// `model` command does), never a panic.
fn print(text: &str) -> Result<(), ExitCode> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes()).and_then(|()| out.flush()).map_err(|e| {
        let _ = writeln!(std::io::stderr(), "error: cannot write the output: {e}");
        ExitCode::from(4)
    })
}
