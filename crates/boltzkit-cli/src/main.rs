//! `boltzkit`: learn and evaluate Boltzmann machines on discrete data.
//!
//! `main` parses the command line and calls [`run`]; every failure comes back as an
//! `anyhow::Error` and is printed as one line, `error: ...`, on stderr, and with `--json` also
//! as `{"error": "...", "exit_code": N}` on stdout.
//! Exit status: 0 success, 1 failure at run time, 2 usage error (clap's parse errors too;
//! `--help` and `--version` exit 0).

mod args;
mod commands;
mod exit;
mod fsll_run;
mod fw_run;
mod guard;
mod interrupt;
mod progress;
mod report;
mod repro;
mod training_outputs;

use clap::{CommandFactory, FromArgMatches};
use std::process::ExitCode;

/// The top of the command tree: `boltzkit <noun> <verb> [flags]`.
#[derive(Debug, clap::Parser)]
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
    report::started();
    let json = std::env::args_os()
        .take_while(|a| a != "--")
        .any(|a| a == "--json");
    let parsed = command().try_get_matches().and_then(|m| {
        let cli = Cli::from_arg_matches(&m)?;
        Ok((cli, threads_flag(&m)))
    });
    let (cli, threads) = match parsed {
        Ok(parsed) => parsed,
        Err(err) => {
            // a data set named by --data NAME that no source gave is a failure at run time
            let code = if err.kind() == clap::error::ErrorKind::Io {
                exit::RUNTIME_FAILURE
            } else {
                u8::try_from(err.exit_code()).unwrap_or(exit::USAGE_ERROR)
            };
            if json && err.use_stderr() {
                let text = exit::clearer_parse_error(&err.to_string());
                let text = text.trim_start_matches("error: ").to_string();
                let message = exit::one_line(&anyhow::anyhow!(text));
                // the error line is clap's; a closed stdout cannot hide it
                let _ = report::print_stdout(&report::json_error(&message, code));
            }
            if err.use_stderr() {
                let text = err.render().to_string();
                let clearer = exit::clearer_parse_error(&text);
                if clearer != text {
                    eprint!("{clearer}");
                    return ExitCode::from(code);
                }
            }
            if code == exit::RUNTIME_FAILURE {
                let _ = err.print();
                std::process::exit(i32::from(code));
            }
            err.exit();
        }
    };
    match args::set_up_pool(threads).and_then(|()| on_pool(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            let message = exit::one_line(&err);
            let code = exit::code(&err);
            eprintln!("error: {message}");
            if json {
                // already said on stderr; a closed or full stdout adds nothing to say
                let _ = report::print_stdout(&report::json_error(&message, code));
            }
            ExitCode::from(code)
        }
    }
}

/// The command tree, with negative numbers accepted as flag values in every command
/// (`--lr -0.1`, `--coupling -0.5`) and data set names as data files (`--data nltcs:test`).
fn command() -> clap::Command {
    fn allow_negatives(cmd: clap::Command) -> clap::Command {
        let names: Vec<String> = cmd
            .get_subcommands()
            .map(|c| c.get_name().to_string())
            .collect();
        names
            .iter()
            .fold(cmd.allow_negative_numbers(true), |cmd, name| {
                cmd.mut_subcommand(name, allow_negatives)
            })
    }
    commands::data::with_data_names(allow_negatives(Cli::command()))
}

/// Runs the parsed command.
fn run(cli: Cli) -> anyhow::Result<()> {
    cli.command.run()
}

/// Runs the command on a worker of rayon's global pool rather than on the main thread:
/// then every parallel region inside it starts on a worker (the other workers steal its
/// halves) instead of being handed from the main thread to the pool and back, which cost a
/// sleep and a wake-up per region: 6-10% of a PCD-1 MNIST epoch (issue 19; the Python
/// package runs its fits inside its pool the same way).
fn on_pool(cli: Cli) -> anyhow::Result<()> {
    rayon::scope(|_| run(cli))
}

/// The `--threads` value of the subcommand that will run (the deepest one), if given.
fn threads_flag(m: &clap::ArgMatches) -> Option<usize> {
    let mut m = m;
    while let Some((_, sub)) = m.subcommand() {
        m = sub;
    }
    m.try_get_one::<usize>("threads").ok().flatten().copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_tree_is_consistent() {
        command().debug_assert();
    }

    #[test]
    fn negative_numbers_are_values() {
        let m = command()
            .try_get_matches_from([
                "boltzkit",
                "gen",
                "ising",
                "--coupling",
                "-0.5",
                "-o",
                "x.npy",
            ])
            .unwrap();
        let cli = Cli::from_arg_matches(&m).unwrap();
        assert!(format!("{cli:?}").contains("-0.5"), "{cli:?}");
    }
}
