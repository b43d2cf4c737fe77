//! The Frank-Wolfe protocol's pieces on small inputs.

use super::*;
use boltzkit::estimate::Estimate;

fn bracket(raise: (f64, f64), ais: (f64, f64)) -> Bracket {
    let e = |(value, stderr): (f64, f64), method| Estimate {
        value,
        stderr,
        lower: value - 3.0 * stderr,
        upper: value + 3.0 * stderr,
        method,
    };
    let (raise, ais) = (e(raise, Method::Raise), e(ais, Method::Ais));
    Bracket {
        diagnosis: Diagnosis::of(&raise, &ais, 1.0, 18),
        raise,
        ais,
        log_z: e((0.0, 0.1), Method::Ais),
        steps: 100,
        raise_vectors: 10,
    }
}

#[test]
fn brackets_decide_only_when_disjoint_and_not_inverted() {
    let low = bracket((-12.0, 0.1), (-11.5, 0.1));
    let high = bracket((-10.0, 0.1), (-9.8, 0.1));
    assert_eq!(compare_brackets(5, &high, &low).verdict, "fw-init above");
    assert_eq!(compare_brackets(5, &low, &high).verdict, "random above");
    // 3 standard errors on each side: -10.0 - 0.9 < -10.5 + 0.3 overlaps
    let near = bracket((-10.5, 0.1), (-10.4, 0.1));
    let wide_se = bracket((-10.0, 0.3), (-9.8, 0.1));
    assert_eq!(compare_brackets(5, &wide_se, &near).verdict, "undecided");
    // an inverted bracket on top decides nothing: its RAISE end is no lower end
    let inverted = bracket((-9.0, 0.01), (-10.0, 0.01));
    let c = compare_brackets(7, &inverted, &low);
    assert_eq!((c.units, c.verdict), (7, "undecided"));
    assert!(c.reason.contains("inverted"), "{}", c.reason);
    // below, its forward-AIS end still bounds it from above
    let inverted_low = bracket((-20.0, 0.01), (-21.0, 0.01));
    let c = compare_brackets(7, &inverted_low, &high);
    assert_eq!(c.verdict, "random above", "{}", c.reason);
    assert!(c.reason.contains("(inverted)"), "{}", c.reason);
}

#[test]
fn plan_refuses_unusable_test_settings_before_any_work() {
    assert!(FwPlan::default().check().is_ok());
    for bad in [
        FwPlan {
            raise_chains: 0,
            ..FwPlan::default()
        },
        FwPlan {
            raise_vectors: Some(0),
            ..FwPlan::default()
        },
        FwPlan {
            ais_chains: 0,
            ..FwPlan::default()
        },
        FwPlan {
            test_method: Method::Raise,
            ..FwPlan::default()
        },
    ] {
        let e = bad.check().unwrap_err();
        assert!(matches!(e, boltzkit::Error::InvalidParam { .. }), "{e}");
    }
}

#[test]
fn bracket_fields_line_up_with_the_header() {
    let b = bracket((-12.0, 0.1), (-11.5, 0.2));
    let fields = bracket_csv(&b);
    let header: Vec<&str> = BRACKET_CSV_HEADER.split(',').collect();
    let values: Vec<&str> = fields.split(',').collect();
    assert_eq!(header.len(), values.len());
    assert_eq!(
        values,
        ["-12", "0.1", "-11.5", "0.2", "100", "10", "consistent"]
    );
    assert_eq!(
        verdict(&bracket((-9.0, 0.01), (-10.0, 0.01)).diagnosis),
        "inverted"
    );
    assert_eq!(
        verdict(&bracket((-13.0, 0.01), (-10.0, 0.01)).diagnosis),
        "wide"
    );
    assert_eq!(
        bracket_markdown_cells(&b),
        "-12.000 ± 0.100 | -11.500 ± 0.200 | 100 | 10"
    );
}
