//! Tests of the sparse 0/1 products against the dense GEMM and their portable twins.

use super::lists::{masks8, push_ones, push_ones_with, push_zeros};
use super::sums::{sum_strips_by, sum_strips_portable, Kernel};
use super::*;
use crate::linalg::{sgemm, Op};
use crate::rng::rng_from_seed;
use rand::Rng;

fn random(len: usize, density: f32, seed: u64) -> Vec<f32> {
    let mut rng = rng_from_seed(seed);
    (0..len)
        .map(|_| f32::from(u8::from(rng.random::<f32>() < density)))
        .collect()
}

fn close(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        // f32 sums of up to a few hundred terms: a tolerance relative to the magnitude
        assert!(
            (g - w).abs() < 1e-4 * w.abs().max(1.0),
            "{what}: {g} vs {w}"
        );
    }
}

#[test]
fn density_and_lists() {
    assert_eq!(binary_density(&[0.0, 1.0, 1.0, 0.0]), Some(0.5));
    assert_eq!(binary_density(&[0.0, 0.5]), None);
    assert_eq!(binary_density(&[]), None);
    let mut l = IndexLists::default();
    let a = [0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0];
    assert_eq!(l.rows_of(&a, 3, 0.5), Some(3.0 / 9.0));
    assert_eq!(
        (l.len(), l.get(0), l.get(1), l.get(2)),
        (3, &[1][..], &[0, 1][..], &[][..])
    );
    assert_eq!(l.rows_of(&a, 3, 0.2), None);
    assert_eq!(l.rows_of(&[0.0, 0.5], 2, 1.0), None);
    assert_eq!(l.columns_of(&[&a[..6], &a[6..]], 3, 0.5), Some(3.0 / 9.0));
    assert_eq!(
        (l.get(0), l.get(1), l.get(2)),
        (&[1][..], &[0, 1][..], &[][..])
    );
    assert_eq!(l.columns_of(&[&[1.0, 2.0]], 2, 1.0), None);
    // a long row: ones past the first chunk of LANES, in the remainder too
    let mut row = vec![0f32; 19];
    for i in [0, 7, 8, 15, 16, 18] {
        row[i] = 1.0;
    }
    l.rows_of(&row, 19, 1.0).unwrap();
    assert_eq!(l.get(0), &[0, 7, 8, 15, 16, 18]);
}

/// The column lists built by ranges in parallel equal one `columns_of`, list for list,
/// for 1 to 5 ranges (ranges of one column, more ranges than threads), and give its
/// answer at the density rule's edge (ones just within and just past the budget, spread
/// over several ranges) and on a non-binary entry in any range.
#[test]
fn column_lists_by_ranges_equal_one_pass() {
    let k = 13;
    let parts = [random(7 * k, 0.3, 21), random(4 * k, 0.6, 22)];
    let parts: Vec<&[f32]> = parts.iter().map(|p| &p[..]).collect();
    let ones = parts.iter().flat_map(|p| p.iter()).filter(|&&x| x == 1.0);
    let total = 11 * k;
    // the budget exactly at the ones, then one short
    let at = ones.count() as f64 / total as f64;
    let short = at - 0.5 / total as f64;
    let mut whole = IndexLists::default();
    for threads in [1, 2, 3] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            for n in 1..=5 {
                let mut split = vec![IndexLists::default(); n];
                for max in [1.0, at, short] {
                    let want = whole.columns_of(&parts, k, max);
                    assert_eq!(columns_of_split(&mut split, &parts, k, max), want);
                    if want.is_none() {
                        continue;
                    }
                    for (t, lists) in split.iter().enumerate() {
                        let cols = column_range(k, t, n);
                        assert_eq!(lists.len(), cols.len());
                        assert_eq!(lists.bound, whole.bound);
                        for (j, c) in cols.enumerate() {
                            assert_eq!(lists.get(j), whole.get(c), "{n} ranges, column {c}");
                        }
                    }
                }
                for c in [0, k / 2, k - 1] {
                    let mut bad = parts[1].to_vec();
                    bad[2 * k + c] = 0.5;
                    let bad = [parts[0], &bad[..]];
                    assert_eq!(columns_of_split(&mut split, &bad, k, 1.0), None);
                }
            }
        });
    }
}

/// Column lists built from the rows' lists equal those of the scan of the stacked rows,
/// the density rule included (at the ones, one short); a part that lists a row by its
/// zeros, or was built for rows of another width, is refused.
#[test]
fn column_lists_from_row_lists_equal_the_scan() {
    let k = 37;
    let dense = [
        random(9 * k, 0.2, 31),
        random(5 * k, 0.35, 32),
        random(0, 0.1, 33),
    ];
    let dense: Vec<&[f32]> = dense.iter().map(|p| &p[..]).collect();
    let rows: Vec<IndexLists> = dense
        .iter()
        .map(|d| {
            let mut l = IndexLists::default();
            l.rows_of(d, k, 1.0);
            l
        })
        .collect();
    // the empty part is a block without rows (its width unset)
    assert_eq!((rows[2].len(), rows[2].bound), (0, 0));
    let parts: Vec<&IndexLists> = rows.iter().collect();
    let ones: usize = parts.iter().map(|p| p.listed()).sum();
    let total = 14 * k;
    let at = ones as f64 / total as f64;
    let short = at - 0.5 / total as f64;
    let (mut scan, mut by_lists) = (IndexLists::default(), IndexLists::default());
    for max in [1.0, 0.3, at, short] {
        let want = scan.columns_of(&dense, k, max);
        assert_eq!(by_lists.columns_of_lists(&parts, k, max), want, "max {max}");
        if want.is_some() {
            assert_eq!((by_lists.len(), by_lists.bound), (k, scan.bound));
            for c in 0..k {
                assert_eq!(by_lists.get(c), scan.get(c), "column {c}");
            }
            assert!(!by_lists.has_complements());
        }
    }
    assert_eq!(by_lists.columns_of_lists(&parts, k + 1, 1.0), None);
    let mut flipped = IndexLists::default();
    let mut heavy = dense[0].to_vec();
    heavy[..k].fill(1.0);
    flipped.rows_or_complements_of(&heavy, k, 1.0).unwrap();
    assert!(flipped.has_complements());
    assert_eq!(by_lists.columns_of_lists(&[&flipped], k, 1.0), None);
}

/// `A·B` and `Aᵀ·P` (stacked, scaled) against the dense GEMM on odd shapes: strip tails,
/// empty rows, lists shorter and longer than four.
#[test]
fn match_dense_products() {
    for (rows, k, n) in [
        (13, 37, 130),
        (1, 5, 64),
        (9, 1, 3),
        (20, 70, 65),
        (3, 9, 7),
        (5, 600, 20),
    ] {
        let a = random(rows * k, 0.2, 1);
        let b: Vec<f32> = random(k * n, 0.5, 2).iter().map(|x| x - 0.3).collect();
        let mut want = vec![0f32; rows * n];
        sgemm(Op::N, Op::N, rows, n, k, 1.0, &a, &b, 0.0, &mut want);
        let mut lists = IndexLists::default();
        let mut packed = Packed::default();
        lists.rows_of(&a, k, 1.0).unwrap();
        packed.pack(&b, k, n);
        let mut got = vec![f32::NAN; rows * n];
        sum_selected(&lists, &packed, &mut got);
        close(&got, &want, "A·B");

        // A·Bᵀ through the transposed packing (B is n × k here)
        let bt: Vec<f32> = random(n * k, 0.5, 5).iter().map(|x| x * 0.7).collect();
        sgemm(Op::N, Op::T, rows, n, k, 1.0, &a, &bt, 0.0, &mut want);
        packed.pack_transposed(&bt, n, k);
        sum_selected(&lists, &packed, &mut got);
        close(&got, &want, "A·Bᵀ");

        // rows denser than half listed by their zeros: the column totals minus their sum
        let dense_a = random(rows * k, 0.7, 8);
        sgemm(Op::N, Op::N, rows, n, k, 1.0, &dense_a, &b, 0.0, &mut want);
        lists.rows_or_complements_of(&dense_a, k, 0.5).unwrap();
        assert!(k < 4 || (0..rows).any(|r| lists.is_complement(r)));
        packed.pack(&b, k, n);
        sum_selected(&lists, &packed, &mut got);
        close(&got, &want, "A·B by complements");

        // 0.5·Aᵀ·P − 0.25·A2ᵀ·P2 by one stacked call
        let p: Vec<f32> = random(rows * n, 0.5, 3).iter().map(|x| x * 0.7).collect();
        let a2 = random(2 * k, 0.3, 6);
        let p2: Vec<f32> = random(2 * n, 0.5, 7).iter().map(|x| x - 0.1).collect();
        let mut want = vec![0f32; k * n];
        sgemm(Op::T, Op::N, k, n, rows, 0.5, &a, &p, 0.0, &mut want);
        sgemm(Op::T, Op::N, k, n, 2, -0.25, &a2, &p2, 1.0, &mut want);
        lists.columns_of(&[&a, &a2], k, 1.0).unwrap();
        packed.pack_stacked(&[(&p, 0.5), (&p2, -0.25)], n);
        let mut got = vec![f32::NAN; k * n];
        sum_selected(&lists, &packed, &mut got);
        close(&got, &want, "Aᵀ·P");
    }
}

/// The AVX2 and AVX-512 kernels (those this CPU runs) against their portable twins, bit
/// for bit:
/// 16-column strips (101 rows, and 784 rows: beyond L1) and 8-column strips (1,200
/// rows), plain and complemented lists.
#[test]
fn simd_kernels_equal_portable_twins() {
    let rows = 37;
    // strips of 101, 256 rows summed in pairs (with a single strip left over at n = 40),
    // of 257 and 784 rows one at a time; 8 columns at 1,200 rows
    for (k, n) in [
        (101, 83),
        (101, 40),
        (256, 40),
        (257, 40),
        (784, 83),
        (1200, 83),
    ] {
        let a = random(rows * k, 0.3, 8);
        let b: Vec<f32> = random(k * n, 0.5, 9)
            .iter()
            .map(|x| x * 0.37 - 0.11)
            .collect();
        let mut lists = IndexLists::default();
        lists.rows_of(&a, k, 1.0).unwrap();
        let mut packed = Packed::default();
        packed.pack(&b, k, n);
        assert_eq!(packed.width, if k < 1200 { STRIP } else { LANES });
        let mut fast = vec![0f32; rows * n];
        sum_selected(&lists, &packed, &mut fast);
        let mut slow = vec![0f32; rows * n];
        let strips = 0..packed.strips();
        // SAFETY: `slow` is rows × n; the lists index below k = packed rows
        unsafe { sum_strips_portable(&lists, &packed, &[], slow.as_mut_ptr(), strips.clone()) };
        assert_eq!(fast, slow);
        // every kernel this CPU runs, not only the fastest
        let every_kernel = |lists: &IndexLists, totals: &[f32], want: &[f32]| {
            for kernel in [Kernel::Avx2, Kernel::Avx512] {
                if kernel.runs(packed.width) {
                    let mut got = vec![0f32; rows * n];
                    let out = got.as_mut_ptr();
                    // SAFETY: as above (the totals cover every strip); the CPU runs it
                    unsafe { sum_strips_by(kernel, lists, &packed, totals, out, strips.clone()) };
                    assert_eq!(got, want, "{kernel:?}, {k} × {n}");
                }
            }
        };
        every_kernel(&lists, &[], &slow);
        // complemented lists (rows with 30% and 70% ones)
        let mixed: Vec<f32> = a
            .chunks_exact(k)
            .enumerate()
            .flat_map(|(r, row)| {
                row.iter()
                    .map(move |&x| if r % 2 == 0 { x } else { 1.0 - x })
            })
            .collect();
        lists.rows_or_complements_of(&mixed, k, 1.0).unwrap();
        assert!(lists.is_complement(1) && !lists.is_complement(0));
        sum_selected(&lists, &packed, &mut fast);
        let totals = packed.totals();
        // SAFETY: as above; the totals cover every strip
        unsafe { sum_strips_portable(&lists, &packed, totals, slow.as_mut_ptr(), strips.clone()) };
        assert_eq!(fast, slow);
        every_kernel(&lists, totals, &slow);
    }

    let k = 101;
    let a = random(37 * k, 0.3, 8);
    let mut row = a[..k].to_vec();
    row[17] = 0.5;
    for row in [&a[..k], &row[..]] {
        let mut want = Vec::with_capacity(k);
        let mut got = Vec::with_capacity(k);
        // SAFETY: both have room for a whole row
        let ok_want = unsafe { push_ones_with(row, &mut want, masks8) };
        let ok_got = push_ones(row, &mut got);
        assert_eq!((ok_got, got), (ok_want, want));
    }
}

/// The packings against their plain definitions: a transposed packing (8 × 8 register
/// transposes where the CPU has AVX) equals the packing of the explicit transpose, and a
/// scaled stacked packing the packing of the scaled stack, for widths of 8 and 16
/// columns, partial last strips and columns that are not a multiple of 8.
#[test]
fn packings_equal_their_definitions() {
    for (rows, cols) in [
        (5, 3),
        (16, 37),
        (37, 16),
        (40, 64),
        (784, 20),
        (33, 785),
        (500, 784),
    ] {
        let b: Vec<f32> = (0..rows * cols).map(|i| i as f32 * 0.5 - 3.0).collect();
        let bt: Vec<f32> = (0..cols * rows)
            .map(|t| b[(t % rows) * cols + t / rows])
            .collect();
        let (mut got, mut want) = (Packed::default(), Packed::default());
        got.pack_transposed(&b, rows, cols);
        want.pack(&bt, cols, rows);
        assert_eq!(got, want, "transposed {rows} × {cols}");
        let half = rows / 2 * cols;
        got.pack_stacked(
            &[
                (&b[..half], 1.0),
                (&b[half..rows * cols - cols * (rows % 2)], -0.5),
            ],
            cols,
        );
        let stacked: Vec<f32> = b[..half]
            .iter()
            .copied()
            .chain(
                b[half..rows * cols - cols * (rows % 2)]
                    .iter()
                    .map(|x| -0.5 * x),
            )
            .collect();
        want.pack(&stacked, stacked.len() / cols, cols);
        assert_eq!(got, want, "stacked {rows} × {cols}");
    }
}

/// The listing kernels (the AVX2 left-pack where the CPU has it) against a plain filter:
/// every length 1-40 and 101 (whole chunks of 8 and remainders), densities from none to
/// all ones, appended after entries already in the list.
#[test]
fn listed_ones_and_zeros_equal_a_plain_filter() {
    let mut seed = 20;
    for k in (1..=40).chain([101]) {
        for density in [0.0, 0.13, 0.5, 0.9, 1.0] {
            seed += 1;
            let row = random(k, density, seed);
            let plain = |one: bool| -> Vec<u32> {
                let mut v = vec![7, 3];
                v.extend((0..k as u32).filter(|&i| (row[i as usize] == 1.0) == one));
                v
            };
            let mut ones = vec![7, 3];
            ones.reserve(k);
            assert!(push_ones(&row, &mut ones));
            assert_eq!(ones, plain(true), "ones, k {k}, density {density}");
            let mut zeros = vec![7, 3];
            push_zeros(&row, &mut zeros);
            assert_eq!(zeros, plain(false), "zeros, k {k}, density {density}");
        }
    }
}

/// A reused [`Packed`] (no clearing pass when the shape repeats) holds what a fresh one
/// would: the padding of the last strip stays zero whatever was packed before.
#[test]
fn reused_packing_equals_fresh_packing() {
    let (k, n) = (37, 21);
    let b1: Vec<f32> = random(k * n, 0.5, 10).iter().map(|x| x + 1.0).collect();
    let b2: Vec<f32> = random(k * n, 0.5, 11).iter().map(|x| x - 2.0).collect();
    let mut reused = Packed::default();
    let mut fresh = Packed::default();
    reused.pack(&b1, k, n);
    reused.pack(&b2, k, n);
    fresh.pack(&b2, k, n);
    assert_eq!(reused, fresh);
    assert_eq!(reused.totals(), fresh.totals());
    // the transpose of an n × k matrix: the same packed shape (k rows of n)
    let bt: Vec<f32> = random(n * k, 0.5, 12).iter().map(|x| x * 3.0).collect();
    reused.pack_transposed(&bt, n, k);
    fresh = Packed::default();
    fresh.pack_transposed(&bt, n, k);
    assert_eq!(reused, fresh);
    // a stacked, scaled packing of another shape, then back
    reused.pack_stacked(&[(&b1[..2 * n], 0.5), (&b2[..n], -1.0)], n);
    reused.pack(&b2, k, n);
    fresh = Packed::default();
    fresh.pack(&b2, k, n);
    assert_eq!(reused, fresh);
}

#[test]
fn denser_inputs_go_sparse_only_when_a_strip_fits_in_l1() {
    assert_eq!(max_density(500), SPARSE_MAX_DENSITY_L1);
    assert_eq!(max_density(784), SPARSE_MAX_DENSITY);
}

/// Several products by strips, with an elementwise epilogue, against one
/// [`sum_selected`] per product followed by the epilogue on whole rows: the same bits,
/// on 1, 2 and 3 threads, for plain and complemented lists, both strip widths (and a
/// product without rows).
#[test]
fn products_by_strips_equal_one_product_at_a_time() {
    let epilogue = |bias: &[f32], cols: std::ops::Range<usize>, seg: &mut [f32]| {
        for (x, &b) in seg.iter_mut().zip(&bias[cols]) {
            *x = (*x + b).tanh();
        }
    };
    for (k, n) in [(101, 83), (600, 37), (9, 3)] {
        let b: Vec<f32> = random(k * n, 0.5, 9).iter().map(|x| x - 0.4).collect();
        let bias: Vec<f32> = random(n, 0.5, 4);
        let mut packed = Packed::default();
        packed.pack(&b, k, n);
        let mats = [(7, 0.2, 1), (0, 0.2, 2), (12, 0.8, 3), (5, 0.4, 4)];
        let lists: Vec<IndexLists> = mats
            .iter()
            .map(|&(rows, density, seed)| {
                let mut l = IndexLists::default();
                let x = random(rows * k, density, seed);
                // (an empty matrix has no density: its lists are emptied all the same)
                let listed = l.rows_or_complements_of(&x, k, 0.5);
                assert!(rows == 0 || listed.is_some());
                l
            })
            .collect();
        assert!(lists
            .iter()
            .any(|l| (0..l.len()).any(|r| l.is_complement(r))));
        let want: Vec<Vec<f32>> = lists
            .iter()
            .map(|l| {
                let mut out = vec![0f32; l.len() * n];
                sum_selected(l, &packed, &mut out);
                out.chunks_exact_mut(n)
                    .for_each(|row| epilogue(&bias, 0..n, row));
                out
            })
            .collect();
        for t in [1, 2, 3] {
            let got = crate::testutil::on_threads(t, || {
                let mut outs: Vec<Vec<f32>> =
                    lists.iter().map(|l| vec![f32::NAN; l.len() * n]).collect();
                let mut products: Vec<(&IndexLists, &mut [f32])> = lists
                    .iter()
                    .zip(outs.iter_mut().map(|o| &mut o[..]))
                    .collect();
                sum_selected_by_strips(&mut products, &packed, |cols, seg| {
                    epilogue(&bias, cols, seg)
                });
                outs
            });
            for (g, w) in got.iter().zip(&want) {
                assert!(
                    g.iter().zip(w).all(|(a, b)| a.to_bits() == b.to_bits()),
                    "{k} × {n} on {t} threads"
                );
            }
        }
    }
}

#[test]
fn same_bits_for_any_thread_count() {
    let (rows, k, n) = (100, 784, 500);
    let a = random(rows * k, 0.13, 5);
    let b: Vec<f32> = random(k * n, 0.5, 6).iter().map(|x| x - 0.5).collect();
    let run = |t: usize| {
        crate::testutil::on_threads(t, || {
            with_scratch(|s| {
                s.lists.rows_of(&a, k, 1.0).unwrap();
                s.packed.pack(&b, k, n);
                let mut c = vec![0f32; rows * n];
                sum_selected(&s.lists, &s.packed, &mut c);
                c
            })
        })
    };
    assert_eq!(run(1), run(3));
}
