"""How many threads an estimator with ``n_jobs=None`` uses: the limit its surroundings set.

joblib's process workers (``GridSearchCV(n_jobs=k)``, ``Parallel``), dask's workers and batch
schedulers set ``OMP_NUM_THREADS`` to each worker's share of the cores; threadpoolctl's
``threadpool_limits`` sets a limit in the process (through the controller registered here,
which calls the native module's ``boltzkit_set_num_threads``). Without either, every core.
So ``k`` fits side by side never run ``k`` × the cores' threads.
"""

from __future__ import annotations

import os

from . import _native

ENV = "OMP_NUM_THREADS"


def inherited_threads():
    """threadpoolctl's limit, else ``OMP_NUM_THREADS`` (its first entry), else ``None``
    (every core)."""
    limit = _native.thread_limit()
    if limit is not None:
        return limit
    first = os.environ.get(ENV, "").split(",")[0].strip()
    if first.isdigit() and int(first) >= 1:
        return int(first)
    return None


def _register_with_threadpoolctl():
    try:
        from threadpoolctl import LibController, register
    except ImportError:  # threadpoolctl comes with scikit-learn; without it, the env alone
        return

    class BoltzkitController(LibController):
        """threadpoolctl's handle on boltzkit's thread limit (``user_api`` ``"boltzkit"``)."""

        user_api = "boltzkit"
        internal_api = "boltzkit"
        filename_prefixes = ("_native",)
        check_symbols = ("boltzkit_get_num_threads", "boltzkit_set_num_threads")

        def get_num_threads(self):
            return inherited_threads() or os.cpu_count()

        def set_num_threads(self, num_threads):
            self.dynlib.boltzkit_set_num_threads(int(num_threads))

        def get_version(self):
            return _native.__version__

    register(BoltzkitController)


_register_with_threadpoolctl()
