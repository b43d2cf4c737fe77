use super::*;
use crate::potts::{read_alignment, AlignmentParams};
use crate::rng::rng_from_seed;
use crate::testutil::{on_threads, shared_data};
use ndarray::Array2;
use rand::Rng;

/// The slow twin: every ordered pair, every site.
fn brute_counts(codes: &Array2<u8>, identity: f64) -> Vec<u32> {
    let (n, sites) = codes.dim();
    (0..n)
        .map(|s| {
            (0..n)
                .filter(|&t| {
                    let same = (0..sites)
                        .filter(|&c| codes[[s, c]] == codes[[t, c]])
                        .count();
                    same as f64 >= identity * sites as f64 - 1e-9
                })
                .count() as u32
        })
        .collect()
}

/// Clustered random sequences: mutants of four ancestors at rates from 0% (exact copies) to
/// 60%, so that pairs fall on both sides of the threshold; code 0 plays the gap.
fn mutants(n: usize, sites: usize, q: u8, seed: u64) -> Array2<u8> {
    let mut rng = rng_from_seed(seed);
    let ancestors: Vec<Vec<u8>> = (0..4)
        .map(|_| (0..sites).map(|_| rng.random_range(0..q)).collect())
        .collect();
    let mut codes = Array2::<u8>::zeros((n, sites));
    for (s, mut row) in codes.outer_iter_mut().enumerate() {
        let rate = [0.0, 0.05, 0.15, 0.3, 0.6][(s / 4) % 5];
        for (c, v) in row.iter_mut().enumerate() {
            *v = if rng.random::<f64>() < rate {
                rng.random_range(0..q)
            } else {
                ancestors[s % 4][c]
            };
        }
    }
    codes
}

#[test]
fn counts_equal_brute_force() {
    for &(n, sites) in &[
        (1, 5),
        (7, 1),
        (40, 10),
        (300, 63),
        (300, 130),
        (530, 64),
        (261, 300),
    ] {
        let codes = mutants(n, sites, 21, n as u64 + sites as u64);
        for identity in [0.3, 0.62, 0.8, 0.9, 1.0] {
            let fast = neighbour_counts(codes.view(), identity).unwrap();
            assert_eq!(
                fast,
                brute_counts(&codes, identity),
                "{n} × {sites} at {identity}"
            );
        }
    }
}

#[test]
fn kernels_agree_and_stop_only_when_no_pair_can_reach() {
    let mut rng = rng_from_seed(11);
    for sites in [1, 31, 64, 65, 200, 517] {
        let codes = mutants(LANES + ROWS, sites, 4, sites as u64);
        let flat = codes.as_slice().unwrap();
        let blocks = Blocks::new(&flat[ROWS * sites..], LANES, sites);
        let rows: [&[u8]; ROWS] = std::array::from_fn(|r| &flat[r * sites..(r + 1) * sites]);
        let brute: Vec<Vec<u32>> = (0..ROWS)
            .map(|r| {
                (0..LANES)
                    .map(|k| {
                        let other = codes.row(ROWS + k);
                        rows[r].iter().zip(other).filter(|(x, y)| x == y).count() as u32
                    })
                    .collect()
            })
            .collect();
        let best = *brute.iter().flatten().max().unwrap() as usize;
        for need in [
            0,
            1,
            best / 2,
            best,
            best + 1,
            sites,
            rng.random_range(0..=sites),
        ] {
            for kernel in kernel::kernels() {
                let mut totals = [[0; LANES]; ROWS];
                let complete = kernel(&rows, blocks.block(0), need, &mut totals);
                assert_eq!(complete, best >= need, "{sites} sites, need {need}");
                if complete {
                    for (r, total) in totals.iter().enumerate() {
                        assert_eq!(total[..], brute[r][..], "{sites} sites, need {need}");
                    }
                }
            }
        }
    }
}

#[test]
fn counts_do_not_depend_on_threads() {
    let codes = mutants(700, 90, 21, 5);
    let one = on_threads(1, || neighbour_counts(codes.view(), 0.8).unwrap());
    let three = on_threads(3, || neighbour_counts(codes.view(), 0.8).unwrap());
    assert_eq!(one, three);
    assert!(one.iter().any(|&m| m > 1) && one.contains(&1));
}

#[test]
fn bad_settings_and_shapes() {
    let codes = Array2::<u8>::zeros((3, 4));
    for bad in [0.0, -0.1, 1.5, f64::NAN] {
        let e = neighbour_counts(codes.view(), bad).unwrap_err().to_string();
        assert!(e.starts_with("invalid setting `identity`"), "{e}");
    }
    let empty = Array2::<u8>::zeros((0, 4));
    assert!(matches!(
        neighbour_counts(empty.view(), 0.8),
        Err(Error::InvalidData(_))
    ));
    assert_eq!(min_identical(0.8, 60), 48);
    assert_eq!(min_identical(0.8, 159), 128);
    assert_eq!(min_identical(1.0, 7), 7);
}

#[test]
fn plmc_number_format() {
    assert_eq!(c_exp(1.0 / 90.0), "1.1111111111111112e-02");
    assert_eq!(c_exp(1.0), "1.0000000000000000e+00");
    assert_eq!(c_exp(0.5), "5.0000000000000000e-01");
    assert_eq!(c_exp(1.0 / 1234.0), "8.1037277147487841e-04");
}

#[test]
fn file_round_trip_and_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.txt");
    let w = [0.5, 0.0, 1.0 / 3.0, 1.0];
    write_weights(&path, &w).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().nth(1), Some("0.0"));
    assert_eq!(read_weights(&path, Some(4)).unwrap(), w);
    let e = read_weights(&path, Some(5)).unwrap_err().to_string();
    assert!(
        e.ends_with("expected 5 weights (one per sequence of the alignment file), found 4"),
        "{e}"
    );
    std::fs::write(&path, "1.0\n-2\n").unwrap();
    let e = read_weights(&path, None).unwrap_err().to_string();
    assert!(
        e.contains("w.txt:2: expected one weight") && e.contains("\"-2\""),
        "{e}"
    );
}

#[test]
fn dhfr_weights_equal_plmc_file_byte_for_byte() {
    let Some(dir) = shared_data() else { return };
    let params = AlignmentParams {
        focus: Some("DYR_ECOLI".into()),
        skip_unknown: true,
        ..Default::default()
    };
    let ali = read_alignment(&dir.join("dca/DHFR.a2m"), &params).unwrap();
    let w = sequence_weights(ali.codes.view(), DEFAULT_IDENTITY).unwrap();
    let out = tempfile::tempdir().unwrap();
    let path = out.path().join("w.txt");
    write_weights(&path, &ali.spread(&w, 0.0).unwrap()).unwrap();
    let ours = std::fs::read_to_string(&path).unwrap();
    let plmc = std::fs::read_to_string(dir.join("dca/DHFR.plmc.weights.txt")).unwrap();
    assert!(ours == plmc, "weights differ from plmc's");
    let back = read_weights(&dir.join("dca/DHFR.plmc.weights.txt"), Some(ali.n_read)).unwrap();
    assert_eq!(ali.gather(&back).unwrap(), w);
}
