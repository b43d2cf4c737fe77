//! The Potts pseudo-likelihood engine on binary data (q = 2, no penalty) finds the FVBM's
//! maximum pseudo-likelihood estimate: its optimum, converted to the FVBM's parameters
//! (`b_i = h_i(1) − h_i(0) + Σ_j [J_ij(1,0) − J_ij(0,0)]`, `M_ij = J_ij(1,1) − J_ij(1,0) −
//! J_ij(0,1) + J_ij(0,0)`), equals Newton's MPLE in the binary convention, to 1e-3 in every
//! parameter (the engine's f32 kernels stop it 3.4e-4 away at most on this set).

use boltzkit::fit::Learner;
use boltzkit::fvbm::{newton::NewtonParams, Convention, Fvbm};
use boltzkit::model::{Model, Sampling};
use boltzkit::potts::plm::PlmParams;
use boltzkit::potts::Potts;
use boltzkit::rng::rng_from_seed;

/// The binary-convention FVBM with the same conditionals as a 2-state Potts model.
fn to_fvbm(m: &Potts) -> Fvbm {
    let d = m.n_sites();
    let mut b: Vec<f64> = (0..d).map(|i| m.field(i)[1] - m.field(i)[0]).collect();
    let mut mm = vec![0.0; d * d];
    for i in 0..d {
        for j in 0..d {
            if i != j {
                let v = |a, c| m.coupling_value(i, j, a, c);
                b[i] += v(1, 0) - v(0, 0);
                if i < j {
                    // Once per pair, so M is symmetric to the bit.
                    let c = v(1, 1) - v(1, 0) - v(0, 1) + v(0, 0);
                    mm[i * d + j] = c;
                    mm[j * d + i] = c;
                }
            }
        }
    }
    Fvbm::new(b, mm, Convention::Binary).unwrap()
}

#[test]
fn plm_optimum_of_binary_data_is_newtons_mple() {
    let truth = Fvbm::random(6, 0.4, Convention::Binary, &mut rng_from_seed(3)).unwrap();
    let data = truth
        .sample(4000, &Sampling::Auto, &mut rng_from_seed(4))
        .unwrap();
    let mut newton = NewtonParams::default();
    newton.mple.convention = Convention::Binary;
    newton.mple.tau = 0.0;
    newton.mple.grad_tol = 1e-10;
    let mple = newton.check().unwrap().fit(&data).unwrap().model;
    let plm = PlmParams {
        lambda_h: 0.0,
        lambda_j: 0.0,
        grad_tol: 1e-7,
        ..PlmParams::default()
    };
    let fit = plm.check().unwrap().fit(&data).unwrap();
    assert!(fit.record.stop.is_converged(), "{:?}", fit.record.stop);
    let ours = to_fvbm(&fit.model);
    for (a, b) in ours.b().iter().zip(mple.b()) {
        assert!((a - b).abs() < 1e-3, "b: {a} vs {b}");
    }
    for (a, b) in ours.m().iter().zip(mple.m()) {
        assert!((a - b).abs() < 1e-3, "M: {a} vs {b}");
    }
}
