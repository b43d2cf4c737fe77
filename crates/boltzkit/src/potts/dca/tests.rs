use super::*;
use crate::potts::plm::PlmParams;
use crate::potts::{read_alignment, AlignmentParams};
use crate::rng::rng_from_seed;
use crate::testutil::shared_data;
use rand::Rng;

#[test]
fn potts3_chain_top_59_scores_are_the_neighbours() {
    let Some(dir) = shared_data() else { return };
    let params = AlignmentParams {
        alphabet: Alphabet::parse("_*^").unwrap(),
        ..Default::default()
    };
    let ali = read_alignment(&dir.join("dca/potts3.a2m"), &params).unwrap();
    assert_eq!((ali.n_sequences(), ali.n_sites()), (500, 60));
    let w = Weighting::Uniform.weights(&ali).unwrap();
    // plmc's example: -a _*^ -t -1 -le 1.0 -lh 1.0
    let learner = PlmParams {
        lambda_j: 1.0,
        lambda_h: 1.0,
        ..PlmParams::default()
    }
    .check()
    .unwrap();
    let (fit, info) = fit_alignment(&ali, &w, &Weighting::Uniform, &learner, Run::new()).unwrap();
    assert_eq!(fit.model.alphabet().as_deref(), Some("_*^"));
    assert_eq!(info.positions, (1..=60).collect::<Vec<i64>>());
    assert_eq!(info.n_eff, 500.0);
    let scored = scored_pairs(&fit.model, Some(&info), &ScoreParams::default()).unwrap();
    assert!(scored.letters.is_none());
    let mut pairs = scored.pairs;
    pairs.sort_by(|a, b| b.score.total_cmp(&a.score));
    assert!(
        pairs[..59].iter().all(|p| p.j == p.i + 1),
        "{:?}",
        &pairs[..59]
    );
    assert!(
        pairs[58].score > 2.0 * pairs[59].score,
        "{} vs {}",
        pairs[58].score,
        pairs[59].score
    );
}

#[test]
fn energies_ignoring_a_state_equal_the_model_on_gapless_rows() {
    let mut model = Potts::zeros(vec![3; 4]).unwrap();
    let mut rng = rng_from_seed(5);
    let (h, j) = model.parameters_mut();
    for v in h.iter_mut().chain(j.iter_mut()) {
        *v = rng.random::<f64>() - 0.5;
    }
    // Codes of a 4-letter alphabet with the gap 0 ignored: 1..=3 are the model's 0..=2.
    let rows = vec![1u8, 2, 3, 1, 3, 3, 2, 1];
    let with_gap = Dataset::from_flat(rows.clone(), 4, vec![4; 4]).unwrap();
    let shifted = Dataset::from_flat(rows.iter().map(|c| c - 1).collect(), 4, vec![3; 4]).unwrap();
    let ours = energies(&model, &with_gap, Some(0)).unwrap();
    assert_eq!(ours, model.energies(&shifted).unwrap());
    // A gap drops its site's terms.
    let gapped = Dataset::from_flat(vec![0, 2, 3, 1], 4, vec![4; 4]).unwrap();
    let e = energies(&model, &gapped, Some(0)).unwrap()[0];
    let want = -(model.field(1)[1]
        + model.field(2)[2]
        + model.field(3)[0]
        + model.coupling(1, 2)[3 + 2]
        + model.coupling(1, 3)[3]
        + model.coupling(2, 3)[2 * 3]);
    assert!((e - want).abs() < 1e-12);
}

#[test]
fn info_round_trips_through_a_model_file() {
    let model = Potts::zeros(vec![2, 2])
        .unwrap()
        .with_alphabet("AB")
        .unwrap();
    let info = DcaInfo {
        positions: vec![3, 7],
        focus_letters: Some("AB".into()),
        alignment_alphabet: "-AB".into(),
        ignored_state: Some(0),
        weighting: Weighting::Identity(0.8),
        n_sequences: 10,
        n_eff: 4.5,
    };
    let mut meta = Metadata::new();
    info.to_metadata(&mut meta).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.safetensors");
    model.save(&path, &meta).unwrap();
    assert_eq!(DcaInfo::read(&path).unwrap(), Some(info.clone()));
    let scored = scored_pairs(&model, Some(&info), &ScoreParams::default()).unwrap();
    assert_eq!(
        (scored.positions, scored.letters),
        (vec![3, 7], Some(vec!['A', 'B']))
    );
    assert_eq!((scored.pairs[0].i, scored.pairs[0].j), (3, 7));
    assert_eq!(
        reading_alphabet(&model, Some(&info)).unwrap().letters(),
        "-AB"
    );
    model.save(&path, &Metadata::new()).unwrap();
    assert_eq!(DcaInfo::read(&path).unwrap(), None);
}

#[test]
fn pseudo_log_likelihood_equals_conditionals_by_enumeration() {
    let mut model = Potts::zeros(vec![3, 2, 3]).unwrap();
    let mut rng = rng_from_seed(8);
    let (h, j) = model.parameters_mut();
    for v in h.iter_mut().chain(j.iter_mut()) {
        *v = rng.random::<f64>() - 0.5;
    }
    let rows = vec![0u8, 1, 2, 2, 0, 1];
    let data = Dataset::from_flat(rows.clone(), 3, vec![3, 2, 3]).unwrap();
    let pll = pseudo_log_likelihoods(&model, &data).unwrap();
    for (r, s) in rows.chunks(3).enumerate() {
        // ln p(s_i | rest) = ln p̃(s) − ln Σ_a p̃(s with s_i = a)
        let want: f64 = (0..3)
            .map(|i| {
                let lp = |a: u8| {
                    let mut t = s.to_vec();
                    t[i] = a;
                    model.log_potential(&t).unwrap()
                };
                let z: f64 = (0..model.states()[i] as u8).map(|a| lp(a).exp()).sum();
                lp(s[i]) - z.ln()
            })
            .sum();
        assert!((pll[r] - want).abs() < 1e-12, "{} vs {want}", pll[r]);
    }
}
