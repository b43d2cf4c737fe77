//! Sequence weights at scale (BENCHMARKS.md): builds a synthetic protein family of `N`
//! sequences × `L` sites with a realistic neighbour structure (20 ancestors; each sequence a
//! mutant of one at a rate drawn from 2% to 40%, one in ten an exact copy of an earlier
//! sequence, runs of gaps at the ends), or resamples the rows of a real alignment `FILE` up to
//! `N` with 0-20% mutations; times `sequence_weights` at identity 0.8 (wall and process CPU
//! seconds) and prints N_eff. With OUT, writes the alignment as FASTA first (for plmc's
//! `--save-weights` on the same rows).
//!
//! `cargo run --release -p boltzkit --example weights_bench -- N L|FILE [OUT.fasta]`

use boltzkit::potts::weights::sequence_weights;
use boltzkit::potts::{read_alignment, AlignmentParams};
use boltzkit::rng::rng_from_seed;
use ndarray::Array2;
use rand::Rng;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

const LETTERS: &[u8] = b"-ACDEFGHIKLMNPQRSTVWY";

/// Synthetic family: mutants of 20 ancestors, exact copies, gapped ends.
fn synthetic(n: usize, sites: usize) -> Array2<u8> {
    let mut rng = rng_from_seed(7);
    let ancestors: Vec<Vec<u8>> = (0..20)
        .map(|_| (0..sites).map(|_| rng.random_range(1..21)).collect())
        .collect();
    let mut codes = Array2::<u8>::zeros((n, sites));
    for s in 0..n {
        if s > 0 && rng.random::<f64>() < 0.1 {
            let from = rng.random_range(0..s);
            let copy = codes.row(from).to_owned();
            codes.row_mut(s).assign(&copy);
            continue;
        }
        let rate = rng.random_range(0.02..0.4);
        let gap_left = if rng.random::<f64>() < 0.3 {
            rng.random_range(0..sites / 5 + 1)
        } else {
            0
        };
        let a = &ancestors[rng.random_range(0..20)];
        for (c, v) in codes.row_mut(s).iter_mut().enumerate() {
            *v = if c < gap_left {
                0
            } else if rng.random::<f64>() < rate {
                rng.random_range(0..21)
            } else {
                a[c]
            };
        }
    }
    codes
}

/// The rows of a real alignment resampled to `n`, each mutated at 0-20%.
fn resampled(path: &Path, n: usize) -> boltzkit::Result<Array2<u8>> {
    let ali = read_alignment(path, &AlignmentParams::default())?;
    let q = ali.alphabet.len() as u8;
    let (m, sites) = ali.codes.dim();
    let mut rng = rng_from_seed(9);
    let mut codes = Array2::<u8>::zeros((n, sites));
    for s in 0..n {
        let from = ali.codes.row(rng.random_range(0..m));
        let rate = rng.random_range(0.0..0.2);
        for (v, &c) in codes.row_mut(s).iter_mut().zip(from) {
            *v = if rng.random::<f64>() < rate {
                rng.random_range(0..q)
            } else {
                c
            };
        }
    }
    Ok(codes)
}

fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|s| s.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}

fn main() -> boltzkit::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: weights_bench N L|FILE [OUT.fasta]");
        std::process::exit(2);
    }
    let n: usize = args[1].parse().expect("N: a count of sequences");
    let codes = match args[2].parse::<usize>() {
        Ok(sites) => synthetic(n, sites),
        Err(_) => resampled(Path::new(&args[2]), n)?,
    };
    if let Some(out) = args.get(3) {
        let mut text = Vec::with_capacity(codes.len() + 16 * n);
        for (s, row) in codes.outer_iter().enumerate() {
            writeln!(text, ">s{s}").unwrap();
            text.extend(row.iter().map(|&c| LETTERS[c as usize % LETTERS.len()]));
            text.push(b'\n');
        }
        std::fs::write(out, text).map_err(|e| boltzkit::Error::io(Path::new(out), e))?;
    }
    let (cpu, wall) = (cpu_seconds(), Instant::now());
    let weights = sequence_weights(codes.view(), 0.8)?;
    println!(
        "{} x {}: weights {:.3} s wall, {:.2} s CPU, N_eff {:.2}",
        codes.nrows(),
        codes.ncols(),
        wall.elapsed().as_secs_f64(),
        cpu_seconds() - cpu,
        weights.iter().sum::<f64>()
    );
    Ok(())
}
