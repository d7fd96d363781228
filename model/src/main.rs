//! `model`: check the Chandy–Lamport model, explore it in a browser, list the fault variants,
//! replay a course scenario, verify another implementation's logs (see [`model::cli`]).

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    model::cli::commands::main()
}
