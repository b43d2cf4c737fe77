"""scikit-learn conformance: ``check_estimator`` and the library's own RBM example with
``boltzkit.RBM`` in place of ``BernoulliRBM``."""

from __future__ import annotations

import numpy as np
import pytest

import boltzkit

sklearn = pytest.importorskip("sklearn")
from sklearn.utils.estimator_checks import check_estimator  # noqa: E402

# Checks not run, with the reason. Only scikit-learn's own skip.
SKIPPED = {
    "check_array_api_input": "scikit-learn skips it unless SCIPY_ARRAY_API=1 (array API "
    "inputs are not supported: the library reads numpy memory)",
}

# FSLL and Potts model integer-coded states (0..255): the generic checks fit them to
# real-valued data, which they refuse by design (one ValueError naming the cell, never a
# silent rounding), so exactly the checks that fit such data fail; every other check passes.
# test_estimators.py and test_potts.py cover their conventions on integer data.
FITS_REAL_VALUED_DATA = {
    "check_dict_unchanged",
    "check_dont_overwrite_parameters",
    "check_dtype_object",
    "check_estimator_sparse_array",
    "check_estimator_sparse_matrix",
    "check_estimator_sparse_tag",
    "check_estimators_dtypes",
    "check_estimators_fit_returns_self",
    "check_estimators_nan_inf",
    "check_estimators_overwrite_params",
    "check_estimators_pickle",
    "check_f_contiguous_array_estimator",
    "check_fit2d_1feature",
    "check_fit2d_1sample",
    "check_fit2d_predict1d",
    "check_fit_check_is_fitted",
    "check_fit_idempotent",
    "check_fit_score_takes_y",
    "check_methods_sample_order_invariance",
    "check_methods_subset_invariance",
    "check_n_features_in",
    "check_n_features_in_after_fitting",
    "check_pipeline_consistency",
    "check_positive_only_tag_during_fit",
    "check_readonly_memmap_input",
}
# Potts also takes sample_weight, whose checks fit real-valued data too
POTTS_SAMPLE_WEIGHT_CHECKS = {
    "check_all_zero_sample_weights_error",
    "check_sample_weight_equivalence_on_dense_data",
    "check_sample_weight_equivalence_on_sparse_data",
    "check_sample_weights_list",
}

# RBM's fit takes sample_weight for unit types other than 0/1 (RBM(visible=, hidden=), the unit
# trainer); the default binary RBM's trainers have no sample weights and refuse them (one
# ValueError, as the CLI refuses --weights on a binary run), so exactly the sample-weight
# checks fail on the default estimator; test_rbm_units.py covers the weighted fits.
BINARY_SAMPLE_WEIGHT_CHECKS = {
    "check_all_zero_sample_weights_error",
    "check_sample_weight_equivalence_on_dense_data",
    "check_sample_weight_equivalence_on_sparse_data",
    "check_sample_weights_list",
    "check_sample_weights_not_an_array",
    "check_sample_weights_not_overwritten",
    "check_sample_weights_pandas_series",
    "check_sample_weights_shape",
}


def results_of(est):
    """check_estimator's results for ``est`` and the names of the checks that failed."""
    results = check_estimator(est, on_fail=None)
    failed = {r["check_name"] for r in results if r["status"] == "failed"}
    skipped = {r["check_name"] for r in results if r["status"] == "skipped"}
    assert skipped <= set(SKIPPED), skipped - set(SKIPPED)
    assert len(results) > 40
    return results, failed


@pytest.mark.filterwarnings("ignore:Skipping check check_array_api_input")
@pytest.mark.parametrize(
    "est, expected",
    [
        # every parameter at its default (2 s); binarize="auto" thresholds the checks'
        # real-valued data at 0.5
        (boltzkit.RBM(), BINARY_SAMPLE_WEIGHT_CHECKS),
        # the defaults but for the size (they pass too, in 150 s: 100 units from 2,000 chains)
        (boltzkit.FrankWolfeRBM(max_units=2, n_chains=50), set()),
        (boltzkit.FVBM(), set()),
    ],
    ids=["RBM", "FrankWolfeRBM", "FVBM"],
)
def test_check_estimator(est, expected):
    results, failed = results_of(est)
    assert failed == expected, [
        (r["check_name"], str(r["exception"])[:300]) for r in results if r["status"] == "failed"
    ]


@pytest.mark.filterwarnings("ignore:Skipping check check_array_api_input")
@pytest.mark.parametrize(
    "est, expected",
    [
        (boltzkit.FSLL(), FITS_REAL_VALUED_DATA),
        (boltzkit.Potts(), FITS_REAL_VALUED_DATA | POTTS_SAMPLE_WEIGHT_CHECKS),
    ],
    ids=["FSLL", "Potts"],
)
def test_check_estimator_of_integer_state_models(est, expected):
    results, failed = results_of(est)
    assert failed == expected, (failed - expected, expected - failed)
    for r in results:  # each refusal is the one line naming the cell
        if r["status"] == "failed" and r["check_name"] == "check_fit_score_takes_y":
            assert "expected an integer in 0..255" in str(r["exception"])
    assert len({r["check_name"] for r in results} - failed) >= 15  # the rest pass


def test_digits_pipeline_with_grid_search():
    """scikit-learn's "Restricted Boltzmann Machine features for digit classification", on a
    slice of the digits: a Pipeline of the RBM and LogisticRegression tuned by
    GridSearchCV(n_jobs=2), which pickles the estimators into worker processes."""
    from sklearn import linear_model
    from sklearn.base import clone
    from sklearn.datasets import load_digits
    from sklearn.model_selection import GridSearchCV, train_test_split
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import minmax_scale

    X, y = load_digits(return_X_y=True)
    X = minmax_scale(X[:600], feature_range=(0, 1))
    y = y[:600]
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0)

    rbm = boltzkit.RBM(
        n_hidden=40, n_epochs=10, batch_size=10, binarize=0.5, random_state=0, n_jobs=1
    )
    logistic = linear_model.LogisticRegression(max_iter=2000)
    pipe = Pipeline(steps=[("rbm", rbm), ("logistic", logistic)])
    grid = GridSearchCV(
        pipe,
        {"rbm__learning_rate": [0.02, 0.06], "logistic__C": [10.0, 100.0]},
        n_jobs=2,
        cv=2,
    )
    grid.fit(X_train, y_train)
    score = grid.score(X_test, y_test)
    assert score > 0.8, score  # chance is 0.1
    best = grid.best_estimator_.named_steps["rbm"]
    assert best.components_.shape == (40, 64)
    # the raw-pixel baseline of the example, for scale
    raw = clone(logistic).set_params(C=100.0).fit(X_train, y_train).score(X_test, y_test)
    assert score > raw - 0.15
    assert np.isfinite(best.score(X_test))
