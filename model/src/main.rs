//! `model`: check the Chandy–Lamport model, explore it in a browser, list the fault variants.

use std::io::Write;
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use chandy_lamport::sim::{replay, DelayChoice, Replay, ReplayError};
use chandy_lamport::Variant;
use clap::{Args, Parser, Subcommand};
use model::{check, ChandyLamport, CheckOptions, Config, InitiatorSpec, Mode, Strategy, TopologySpec};
use stateright::Model;

#[derive(Parser, Debug)]
#[command(name = "model", about = "Model-check Chandy–Lamport snapshots over the library's own core")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Check every property and print a verdict table (exit 0: all hold; 1: a property fails).
    Check {
        #[command(flatten)]
        model: ModelArgs,
        #[command(flatten)]
        checker: CheckerArgs,
        /// Print one JSON object instead of the table.
        #[arg(long)]
        json: bool,
    },
    /// Serve stateright's Explorer for the same configuration.
    Explore {
        #[command(flatten)]
        model: ModelArgs,
        /// Address to serve on.
        #[arg(long, default_value = "127.0.0.1:3000")]
        addr: SocketAddr,
    },
    /// List the fault variants.
    Variants,
    /// Replay a scenario (.top + .events) on the deterministic simulator and print its
    /// snapshots in .snap form; with --expect, compare with the expected files (exit 1 on a
    /// difference or a missing file).
    Replay {
        /// The topology.
        #[arg(long)]
        topology: PathBuf,
        /// The event script.
        #[arg(long)]
        events: PathBuf,
        /// A delay sequence file (one integer a line).
        #[arg(long, conflicts_with = "seed")]
        delays: Option<PathBuf>,
        /// Seed of the delay generator (default 0 when no --delays).
        #[arg(long)]
        seed: Option<u64>,
        /// Compare with PREFIX.snap (one snapshot) or PREFIX0.snap, PREFIX1.snap, ... (several).
        #[arg(long, value_name = "PREFIX")]
        expect: Option<PathBuf>,
        /// Fault variant (see `model variants`).
        #[arg(long, default_value = "none")]
        variant: Variant,
    },
}

/// The model configuration.
#[derive(Args, Debug)]
struct ModelArgs {
    /// Houses (2–8; from the file for a .top topology).
    #[arg(long)]
    procs: Option<usize>,
    /// complete, ring, bidi-ring, star, or a FILE.top.
    #[arg(long, default_value = "complete")]
    topology: TopologySpec,
    /// Jars per house (default 2, or the file's).
    #[arg(long)]
    tokens: Option<u32>,
    /// Actions per house: one-jar transfers (and sales with --internal).
    #[arg(long, default_value_t = 2)]
    sends: u8,
    /// Who may initiate: indices like 0,2, or any.
    #[arg(long, default_value = "0")]
    initiators: InitiatorSpec,
    /// Snapshot ids 0..S.
    #[arg(long, default_value_t = 1)]
    snapshots: u8,
    /// Houses may sell a jar to their port town (an internal step).
    #[arg(long)]
    internal: bool,
    /// Bandits may steal carts in transit (never markers).
    #[arg(long)]
    theft: bool,
    /// Fault variant (see `model variants`).
    #[arg(long, default_value = "none")]
    variant: Variant,
    /// basic, full or literal.
    #[arg(long, default_value = "full")]
    properties: Mode,
}

/// How to explore.
#[derive(Args, Debug)]
struct CheckerArgs {
    /// bfs, dfs or simulation.
    #[arg(long, default_value = "dfs")]
    strategy: Strategy,
    /// Worker threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Symmetry reduction over permutations of houses (DFS and simulation only).
    #[arg(long)]
    symmetry: bool,
    /// Do not explore deeper than this.
    #[arg(long)]
    depth: Option<usize>,
    /// Stop at the first counterexample.
    #[arg(long)]
    stop_on_failure: bool,
    /// Simulation: seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Simulation: states to generate.
    #[arg(long, default_value_t = 1_000_000)]
    max_states: usize,
    /// Address used in Explorer links.
    #[arg(long, default_value = "127.0.0.1:3000")]
    addr: SocketAddr,
}

impl ModelArgs {
    fn build(&self) -> anyhow::Result<ChandyLamport> {
        let config = Config {
            procs: self.procs,
            topology: self.topology.clone(),
            tokens: self.tokens,
            sends: self.sends,
            initiators: self.initiators.clone(),
            snapshots: self.snapshots,
            internal: self.internal,
            theft: self.theft,
            variant: self.variant,
            mode: self.properties,
        };
        Ok(ChandyLamport::new(config.resolve()?))
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Variants => {
            for v in Variant::ALL {
                println!("{:<28} {}", v.name(), v.description());
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Check { model, checker, json } => {
            if checker.symmetry && checker.strategy == Strategy::Bfs {
                anyhow::bail!("--symmetry is honoured only by --strategy dfs or simulation");
            }
            let m = model.build()?;
            let opts = CheckOptions {
                strategy: checker.strategy,
                threads: checker.threads.unwrap_or(CheckOptions::default().threads),
                symmetry: checker.symmetry,
                depth: checker.depth,
                stop_on_failure: checker.stop_on_failure,
                seed: checker.seed,
                max_states: checker.max_states,
                addr: checker.addr.to_string(),
            };
            let result = if json {
                let mut err = std::io::stderr();
                check(m, &opts, Some(&mut err))
            } else {
                let mut out = std::io::stdout();
                check(m, &opts, Some(&mut out))
            }
            .map_err(anyhow::Error::msg)?;
            let mut out = std::io::stdout().lock();
            if json {
                serde_json::to_writer(&mut out, &result)?;
                writeln!(out)?;
            } else {
                model::run::print_table(&result, &mut out)?;
            }
            Ok(if result.ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
        Command::Replay { topology, events, delays, seed, expect, variant } => {
            let delays = match delays {
                Some(file) => DelayChoice::File(file),
                None => DelayChoice::Seed(seed.unwrap_or(0)),
            };
            let request = Replay { expect, variant, ..Replay::new(topology, events, delays) };
            match replay(&request) {
                Ok(outcome) => {
                    print!("{}", outcome.snap_text());
                    match outcome.comparison.as_ref().filter(|c| !c.matches()) {
                        Some(diff) => {
                            eprintln!("MISMATCH with the expected snapshots:\n{diff}");
                            Ok(ExitCode::from(1))
                        }
                        None => Ok(ExitCode::SUCCESS),
                    }
                }
                // A bad file is bad input; a failed check or a missing expectation is a failure.
                Err(e @ ReplayError::Format(_)) => Err(e.into()),
                Err(e) => {
                    eprintln!("FAILED: {e}");
                    Ok(ExitCode::from(1))
                }
            }
        }
        Command::Explore { model, addr } => {
            let m = model.build()?;
            // Fail with a message (not a panic inside the server) if the address is taken.
            drop(TcpListener::bind(addr).with_context(|| format!("cannot serve on {addr}"))?);
            println!("Explorer: http://{addr}/");
            std::io::stdout().flush()?;
            m.checker().serve(addr);
            Ok(ExitCode::SUCCESS)
        }
    }
}
