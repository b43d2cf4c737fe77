//! The S-DCP protocol's pieces on small inputs.

use super::*;

#[test]
fn algos_in_the_library_notation_and_the_paper_families() {
    let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    // the small experiment's budget: K = 12, d = 3, K′ = 4
    let c = contenders(
        &names(&["csdcp", "cd-12", "sdcp-3-4", "cd-1", "CD", "pt-4"]),
        12,
        3,
        4,
    )
    .unwrap();
    let labels: Vec<&str> = c.iter().map(|c| c.name.as_str()).collect();
    // cd-12 is the paper's CD and `CD` repeats it: counted once, labelled `cd`
    assert_eq!(labels, ["csdcp", "cd", "sdcp", "cd-1", "pt-4"]);
    assert_eq!(c[0].algorithm, Algorithm::CsDcp { inner: 3, k: 4 });
    assert_eq!(c[3].algorithm, Algorithm::Cd { k: 1 });
    // on MNIST's budget the family name means CD-24 and cd-12 is another algorithm
    let m = contenders(&names(&["cd", "cd-12"]), 24, 6, 4).unwrap();
    assert_eq!(m[0].algorithm, Algorithm::Cd { k: 24 });
    assert_eq!(m[1].name, "cd-12");
    for bad in ["cdx", "cd-0", "sdcp-3", ""] {
        let e = contenders(&names(&[bad]), 12, 3, 4)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--algos") && e.contains("csdcp-D-K"),
            "{bad}: {e}"
        );
    }
    let plan = SdcpPlan {
        small: true,
        algos: names(&["cd", "bogus-1"]),
        ..SdcpPlan::default()
    };
    assert!(plan.check().is_err());
}

#[test]
fn mean_sd_handles_short_curves() {
    let (m, s) = mean_sd(&[vec![1.0, 2.0, 3.0], vec![3.0, 4.0]], 3);
    assert_eq!(m, vec![2.0, 3.0, 3.0]);
    assert!((s[0] - 2f64.sqrt()).abs() < 1e-12 && s[2] == 0.0);
}

#[test]
fn ninety_percent_of_the_rise() {
    let e = [0, 10, 20, 30, 40];
    // rise from −5 to −3: the target is −3.2, first met at epoch 30
    assert_eq!(epoch_at_90(&e, &[-5.0, -4.0, -3.5, -3.1, -3.0]), Some(30));
    assert_eq!(epoch_at_90(&e, &[-3.0, -3.5, -4.0, -4.0, -4.0]), None);
    assert_eq!(epoch_at_90(&[], &[]), None);
}

#[test]
fn table_and_csv_carry_every_cell() {
    let trial = |atll: Vec<f64>| TrialCurve {
        epochs: vec![0, 5],
        atll,
        diverged: false,
    };
    let runs = vec![trial(vec![-3.0, -2.5]), trial(vec![-3.2, -2.7])];
    let c = cell_stats("sb", 0.3, "cd", &runs);
    assert_eq!((c.final_mean(), c.mean_at(4)), (-2.6, Some(-3.1)));
    let t = final_table(std::slice::from_ref(&c), Some(5));
    assert!(
        t.contains("| sb | 0.3 | cd | -2.6000 ± 0.1414 | 5 | -2.6000 | 0/2 |"),
        "{t}"
    );
    let csv = curves_csv(&[c]);
    assert_eq!(csv.lines().count(), 3);
    assert!(csv.contains("sb,0.3,cd,5,-2.600000,0.141421,2"), "{csv}");
}
