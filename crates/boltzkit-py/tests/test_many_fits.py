"""Many fits side by side (issue 35): ``n_jobs=None`` follows the thread limit joblib, dask
and threadpoolctl set, and a grid search under joblib's dask backend equals the serial one."""

from __future__ import annotations

import numpy as np
import pytest

import boltzkit
from boltzkit._validation import threads_from


def test_n_jobs_none_follows_omp_num_threads(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert threads_from(None) is None  # every core
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert threads_from(None) == 1
    assert threads_from(3) == 3 and threads_from(-1) is None  # an explicit n_jobs wins
    monkeypatch.setenv("OMP_NUM_THREADS", "2,1")  # OpenMP's nested form: the outer level
    assert threads_from(None) == 2
    monkeypatch.setenv("OMP_NUM_THREADS", "")
    assert threads_from(None) is None
    with pytest.raises(ValueError, match="n_jobs"):
        threads_from(0)


def test_n_jobs_none_follows_threadpoolctl(monkeypatch):
    from threadpoolctl import threadpool_info, threadpool_limits

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    ours = [i for i in threadpool_info() if i["user_api"] == "boltzkit"]
    assert len(ours) == 1 and ours[0]["filepath"].endswith(".so"), ours
    with threadpool_limits(limits=1, user_api="boltzkit"):
        assert threads_from(None) == 1
        assert boltzkit._native.thread_limit() == 1
    assert threads_from(None) in (None, ours[0]["num_threads"])


def test_joblib_workers_get_their_share_of_the_cores():
    from joblib import Parallel, cpu_count, delayed

    got = Parallel(n_jobs=2)(delayed(threads_from)(None) for _ in range(2))
    assert got == [max(cpu_count() // 2, 1)] * 2, got


def small_grid():
    from sklearn.model_selection import GridSearchCV

    est = boltzkit.RBM(n_hidden=4, n_epochs=3, batch_size=20, random_state=1)
    grid = {"learning_rate": [0.05, 0.1], "n_hidden": [3, 4]}
    return GridSearchCV(est, grid, cv=2)


def test_grid_search_under_dask_equals_serial(binary_data):
    from distributed import Client, LocalCluster
    from joblib import parallel_config

    X = binary_data[:120]
    serial = small_grid().fit(X)
    # threads of this process only (processes=False): no port opened, no network
    with (
        LocalCluster(
            n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
        ) as cluster,
        Client(cluster),
        parallel_config(backend="dask"),
    ):
        spread = small_grid().set_params(n_jobs=2).fit(X)
    for key in ["mean_test_score", "split0_test_score", "split1_test_score"]:
        assert np.array_equal(serial.cv_results_[key], spread.cv_results_[key]), key
    assert serial.best_params_ == spread.best_params_
    a, b = serial.best_estimator_, spread.best_estimator_
    assert bytes(a.model_.to_bytes()) == bytes(b.model_.to_bytes())
