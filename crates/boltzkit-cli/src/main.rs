//! `boltzkit`: learn and evaluate Boltzmann machines on discrete data.
//!
//! `main` parses the command line and calls [`run`]; every failure comes back as an
//! `anyhow::Error` and is printed as one line, `error: ...`, on stderr.
//! Exit status: 0 success, 1 failure at run time, 2 usage error (clap's own parse errors exit
//! 2 through `clap::Error::exit`; `--help` and `--version` exit 0).

mod args;
mod commands;
mod exit;
mod fsll_run;
mod fw_run;
mod interrupt;
mod progress;
mod report;
mod repro;

use clap::Parser;
use std::process::ExitCode;

/// The top of the command tree: `boltzkit <noun> <verb> [flags]`.
#[derive(Debug, Parser)]
#[command(
    name = "boltzkit",
    version,
    about = "Learn and evaluate Boltzmann machines and their relatives on discrete data",
    long_about = "Learn and evaluate Boltzmann machines and their relatives on discrete data.\n\n\
Commands are `boltzkit <noun> <verb> [flags]`; `boltzkit <noun> --help` lists the verbs of a \
noun and `boltzkit <noun> <verb> --help` its flags. Every command takes --seed N, --json, \
--threads N and -q/--quiet. Randomized commands print their seed (`seed: N`) on stderr and \
record it in the --json summary: rerun with the same --seed to get the same bytes, whatever \
--threads is.\n\n\
Examples:\n  \
boltzkit gen ising --rows 5 --cols 4 --coupling 0.5 --samples 1000 -o ising.npy --truth p.npy\n  \
boltzkit gen bn --vars 20 --parents 2 --samples 5000 -o bn.csv --seed 7 --json\n\n\
Exit status: 0 success, 1 failure at run time (unreadable data, I/O), 2 usage error, 130 \
interrupted (training commands write the last good model first).",
    propagate_version = true,
    arg_required_else_help = true
)]
struct Cli {
    #[command(subcommand)]
    command: commands::Command,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {}", exit::one_line(&err));
            ExitCode::from(exit::code(&err))
        }
    }
}

/// Runs the parsed command.
fn run(cli: Cli) -> anyhow::Result<()> {
    cli.command.run()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn command_tree_is_consistent() {
        Cli::command().debug_assert();
    }
}
