use super::*;
use crate::rng::rng_from_seed;
use crate::testutil::shared_data;
use ndarray::Array4;
use rand::Rng;

fn random_couplings(l: usize, q: usize, seed: u64) -> Array4<f64> {
    let mut rng = rng_from_seed(seed);
    let mut j = Array4::<f64>::zeros((l, l, q, q));
    for a in 0..l {
        for b in a + 1..l {
            for x in 0..q {
                for y in 0..q {
                    let v = rng.random::<f64>() - 0.5;
                    j[[a, b, x, y]] = v;
                    j[[b, a, y, x]] = v;
                }
            }
        }
    }
    j
}

/// The zero-sum gauge of a block, by its definition (the twin of the model's gauge).
fn gauged(block: ArrayView2<'_, f64>) -> Array2<f64> {
    let (qa, qb) = block.dim();
    let r = block.mean_axis(ndarray::Axis(1)).unwrap();
    let c = block.mean_axis(ndarray::Axis(0)).unwrap();
    let m = block.mean().unwrap();
    Array2::from_shape_fn((qa, qb), |(a, b)| block[[a, b]] - r[a] - c[b] + m)
}

#[test]
fn frobenius_leaves_out_the_gap() {
    let b = ndarray::array![[1.0, 2.0], [3.0, 4.0]];
    assert_eq!(frobenius(b.view(), None), 30f64.sqrt());
    assert_eq!(frobenius(b.view(), Some(0)), 4.0);
    assert_eq!(frobenius(b.view(), Some(1)), 1.0);
}

/// APC by its definition, written the other way round (full rows, diagonal excluded).
fn brute_apc(f: &Array2<f64>) -> Array2<f64> {
    let l = f.nrows();
    let row =
        |i: usize| (0..l).filter(|&j| j != i).map(|j| f[[i, j]]).sum::<f64>() / (l - 1) as f64;
    let all = (0..l).map(&row).sum::<f64>() / l as f64;
    Array2::from_shape_fn((l, l), |(i, j)| {
        if i == j {
            0.0
        } else {
            f[[i, j]] - row(i) * row(j) / all
        }
    })
}

#[test]
fn scores_equal_their_definitions() {
    let (l, q) = (7, 3);
    let mut j = random_couplings(l, q, 2);
    for a in 0..l {
        for b in 0..l {
            let g = gauged(j.slice(ndarray::s![a, b, .., ..]));
            j.slice_mut(ndarray::s![a, b, .., ..]).assign(&g);
        }
    }
    let raw = coupling_scores(
        l,
        |a, b| j.slice(ndarray::s![a, b, .., ..]),
        Some(0),
        &ScoreParams {
            apc: false,
            exclude_gap: false,
        },
    )
    .unwrap();
    for a in 0..l {
        assert_eq!(raw[[a, a]], 0.0);
        for b in 0..l {
            assert_eq!(raw[[a, b]], raw[[b, a]]);
        }
    }
    let block = j.slice(ndarray::s![2, 5, .., ..]);
    let norm = block.iter().map(|v| v * v).sum::<f64>().sqrt();
    assert!((raw[[2, 5]] - norm).abs() < 1e-15);
    let with_apc = coupling_scores(
        l,
        |a, b| j.slice(ndarray::s![a, b, .., ..]),
        Some(0),
        &ScoreParams::default(),
    )
    .unwrap();
    let brute = brute_apc(&raw);
    for (x, y) in with_apc.iter().zip(brute.iter()) {
        assert!((x - y).abs() < 1e-12, "{x} vs {y}");
    }
    let e = coupling_scores(
        l,
        |a, b| j.slice(ndarray::s![a, b, .., ..]),
        None,
        &ScoreParams {
            apc: true,
            exclude_gap: true,
        },
    )
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("invalid setting `exclude_gap`"), "{e}");
}

#[test]
fn couplings_file_is_plmc_format_and_reads_back() {
    let m = Array2::from_shape_fn((3, 3), |(i, j)| {
        if i == j {
            0.0
        } else {
            0.1 * (i + j) as f64 + 0.0000004
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.txt");
    write_couplings(&path, &m, &[5, 6, 9], Some(&['M', 'I', 'S'])).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        text,
        "5 M 6 I 0 0.100000\n5 M 9 S 0 0.200000\n6 I 9 S 0 0.300000\n"
    );
    write_couplings(&path, &m, &[1, 2, 3], None).unwrap();
    assert!(std::fs::read_to_string(&path)
        .unwrap()
        .starts_with("1 - 2 - 0 0.100000\n"));
    let back = read_couplings(&path).unwrap();
    assert_eq!(back[2], PairScore::new(2, 3, 0.3));
    std::fs::write(&path, "1 2\n").unwrap();
    let e = read_couplings(&path).unwrap_err().to_string();
    assert!(e.contains("c.txt:1: expected 'i A_i j A_j 0 score'"), "{e}");
    let npy = dir.path().join("m.npy");
    write_matrix(&npy, &m).unwrap();
    let (shape, data) = crate::data::read_npy_f64(&npy).unwrap();
    assert_eq!((shape, data[1]), (vec![3, 3], m[[0, 1]]));
}

#[test]
fn reads_plmc_dhfr_couplings() {
    let Some(dir) = shared_data() else { return };
    let pairs = read_couplings(&dir.join("dca/DHFR.plmc.couplings")).unwrap();
    assert_eq!(pairs.len(), 159 * 158 / 2);
    assert_eq!(pairs[0], PairScore::new(1, 2, 0.275207));
}
