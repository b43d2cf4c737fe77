use super::*;
use crate::testutil::shared_data;

fn write(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d.dat");
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

#[test]
fn reads_distances_in_either_order_keeping_the_smallest() {
    let (_d, path) = write("# i j score d\n1.0e+00 7 0.3 5.5\n7 1 0 4.0\n2 9 12.5\n3 3 0.0\n");
    let d = read_distances(&path).unwrap();
    assert_eq!(d.len(), 2);
    assert_eq!(d.get(1, 7), Some(4.0));
    assert_eq!(d.get(9, 2), Some(12.5));
    assert_eq!(d.get(3, 3), None);
}

#[test]
fn bad_distance_files_name_the_line() {
    for (text, has) in [
        ("1 2\n", "d.dat:1: expected columns 'i j … distance'"),
        (
            "1.5 2 3\n",
            "d.dat:1: column 1: expected a residue position",
        ),
        ("1 2 x\n", "d.dat:1: column 3: expected a distance"),
        ("# nothing\n", "d.dat: expected at least one line"),
    ] {
        let (_d, path) = write(text);
        let e = read_distances(&path).unwrap_err().to_string();
        assert!(e.contains(has), "{text:?}: {e}");
    }
}

/// The slow twin: sort every far pair with a distance, count contacts in each prefix.
fn brute_precision(scores: &[PairScore], d: &Distances, l: usize, k: usize) -> f64 {
    let mut far: Vec<(f64, i64, i64, bool)> = scores
        .iter()
        .filter(|p| (p.i - p.j).abs() > 4)
        .filter_map(|p| d.get(p.i, p.j).map(|x| (p.score, p.i, p.j, x < 8.0)))
        .collect();
    far.sort_by(|a, b| {
        b.0.partial_cmp(&a.0)
            .unwrap()
            .then((a.1, a.2).cmp(&(b.1, b.2)))
    });
    let _ = l;
    let top = &far[..k.min(far.len())];
    top.iter().filter(|t| t.3).count() as f64 / top.len() as f64
}

#[test]
fn precision_equals_the_slow_twin() {
    let l = 30usize;
    let mut pairs = Vec::new();
    let mut scores = Vec::new();
    for i in 1..=l as i64 {
        for j in i + 1..=l as i64 {
            let h = ((i * 7919 + j * 104_729) % 97) as f64;
            if (i + j) % 11 != 0 {
                pairs.push((i, j, h / 6.0));
            }
            scores.push(PairScore::new(i, j, ((i * 31 + j * 17) % 23) as f64));
        }
    }
    let d = Distances::from_pairs(pairs);
    let r = contact_precision(&scores, l, &d, &ContactParams::default()).unwrap();
    for (depth, k) in [("L/5", 6), ("L/2", 15), ("L", 30), ("2L", 60)] {
        assert_eq!(
            r.at(depth),
            Some(brute_precision(&scores, &d, l, k)),
            "{depth}"
        );
    }
    assert!(r.pairs_without_distance > 0);
    let far = scores.iter().filter(|p| (p.i - p.j).abs() > 4).count();
    assert_eq!(r.pairs_ranked + r.pairs_without_distance, far);
}

#[test]
fn settings_are_checked() {
    let d = Distances::from_pairs([(1, 9, 3.0)]);
    let s = [PairScore::new(1, 9, 1.0)];
    let bad = ContactParams {
        cutoff: -1.0,
        ..Default::default()
    };
    let e = contact_precision(&s, 9, &d, &bad).unwrap_err().to_string();
    assert!(e.starts_with("invalid setting `cutoff`"), "{e}");
    let nan = [PairScore::new(1, 9, f64::NAN)];
    assert!(contact_precision(&nan, 9, &d, &ContactParams::default()).is_err());
    let near = ContactParams {
        min_separation: 9,
        ..Default::default()
    };
    let r = contact_precision(&s, 9, &d, &near).unwrap();
    assert_eq!((r.pairs_ranked, r.at("L")), (0, Some(0.0)));
}

#[test]
fn reads_pf00014_structure() {
    let Some(dir) = shared_data() else { return };
    let d = read_distances(&dir.join("dca/PF00014_struct.dat")).unwrap();
    assert!(d.len() > 1000, "{}", d.len());
    assert_eq!(d.get(11, 35), Some(1.957_165));
}
