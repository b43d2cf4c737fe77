"""Type stubs of the native module ``boltzkit._native`` (Rust, pyo3)."""

from os import PathLike
from typing import Any, Callable, Optional, TypedDict, Union

import numpy as np
import numpy.typing as npt

__version__: str

_U8 = npt.NDArray[np.uint8]
_Path = Union[str, PathLike[str]]
_Estimate = dict[str, Any]  # value, stderr, lower, upper, method
_Callback = Optional[Callable[[dict[str, Any]], Any]]

class EvalSettings(TypedDict, total=False):
    """A likelihood estimate's settings object (the library's ``EvalParams``, JSON) that
    ``log_probs``, ``log_partition`` and ``log_likelihood`` take; left out, the library's
    default (``default_settings("eval")``). The estimators' ``random_state`` is ``seed``."""

    ais_chains: int
    ais_steps: Optional[int]
    raise_chains: int
    raise_vectors: Optional[int]
    max_width: float
    seed: int

class NativeModel:
    """Any boltzkit model (FSLL, FVBM, RBM, Frank-Wolfe) with its file metadata."""

    @property
    def kind(self) -> str: ...
    @property
    def n_variables(self) -> int: ...
    @property
    def metadata(self) -> dict[str, str]: ...
    def unnormalized_log_probs(
        self, x: _U8, threads: Optional[int] = None
    ) -> npt.NDArray[np.float64]: ...
    def log_probs(
        self,
        x: _U8,
        method: str = "auto",
        settings_json: str = "{}",
        threads: Optional[int] = None,
    ) -> tuple[npt.NDArray[np.float64], _Estimate]: ...
    def log_partition(
        self,
        method: str = "auto",
        settings_json: str = "{}",
        threads: Optional[int] = None,
    ) -> _Estimate: ...
    def log_likelihood(
        self,
        x: _U8,
        method: str = "auto",
        settings_json: str = "{}",
        threads: Optional[int] = None,
    ) -> tuple[_Estimate, _Estimate, Optional[_Estimate]]: ...
    def sample(
        self, n: int, seed: int, gibbs_steps: Optional[int] = None, threads: Optional[int] = None
    ) -> _U8: ...
    def hidden_probs(self, x: _U8, threads: Optional[int] = None) -> npt.NDArray[np.float32]: ...
    def gibbs(self, x: _U8, seed: int, threads: Optional[int] = None) -> _U8: ...
    def rbm_params(
        self,
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.float32]]: ...
    def fvbm_params(
        self,
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], str]: ...
    def fsll_params(
        self,
    ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.float64], list[int]]: ...
    def fw_info(self) -> tuple[int, float, bool]: ...
    def save(self, path: _Path, data_file: Optional[_Path] = None) -> None: ...
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def from_bytes(data: bytes) -> NativeModel: ...
    @staticmethod
    def load(path: _Path) -> NativeModel: ...

class RbmSettings(TypedDict, total=False):
    """The RBM learner's settings object (the library's ``RbmParams``, JSON): the names of
    ``RBM``'s keyword arguments (``seed`` is its ``random_state``); left out, the default."""

    n_hidden: int
    weight_sd: float
    n_epochs: int
    batch_size: int
    algo: str
    learning_rate: float
    learning_rate_end: Optional[float]
    momentum: float
    weight_decay: float
    shuffle: bool
    seed: int
    max_abs_param: float
    nu_mu: float
    nu_lambda: float
    divergence_tol: float

class UnitRbmSettings(TypedDict, total=False):
    """The settings object of an RBM with unit types other than 0/1 (the library's
    ``UnitRbmParams``, JSON; ``default_settings("rbm-units")``): ``RbmSettings`` and the unit
    types' own, the names of ``RBM``'s keyword arguments (``seed`` is its ``random_state``)."""

    visible: str
    hidden: str
    n_hidden: int
    weight_sd: float
    n_epochs: int
    batch_size: int
    algo: str
    learning_rate: float
    learning_rate_end: Optional[float]
    momentum: float
    weight_decay: float
    shuffle: bool
    seed: int
    max_abs_param: float
    nu_mu: float
    nu_lambda: float
    divergence_tol: float
    l1_squared: float
    clip_norm: float
    optimizer: str
    adam_beta1: float
    adam_beta2: float
    adam_epsilon: float
    decay_after: Optional[float]
    saturate: Optional[float]
    zero_sum_gauge: bool
    standardize: bool
    sd_floor: float

class NativeUnitModel:
    """An RBM with unit types other than 0/1 (``boltzkit/rbm/v2`` files) with its metadata.
    ``x`` is ``uint8`` codes (Bernoulli, categorical visible units) or ``float64`` values
    (Gaussian)."""

    @property
    def kind(self) -> str: ...
    @property
    def visible_units(self) -> str: ...
    @property
    def hidden_units(self) -> str: ...
    @property
    def n_variables(self) -> int: ...
    @property
    def n_hidden(self) -> int: ...
    @property
    def states(self) -> Optional[list[int]]: ...
    @property
    def metadata(self) -> dict[str, str]: ...
    def params(self) -> dict[str, npt.NDArray[Any]]: ...
    def log_probs(
        self,
        x: npt.NDArray[Any],
        method: str = "auto",
        settings_json: str = "{}",
        threads: Optional[int] = None,
    ) -> tuple[npt.NDArray[np.float64], _Estimate]: ...
    def log_likelihood(
        self,
        x: npt.NDArray[Any],
        method: str = "auto",
        settings_json: str = "{}",
        threads: Optional[int] = None,
        weights: Optional[npt.NDArray[np.float64]] = None,
    ) -> tuple[_Estimate, _Estimate, Optional[_Estimate]]: ...
    def log_partition(
        self, method: str = "auto", settings_json: str = "{}", threads: Optional[int] = None
    ) -> _Estimate: ...
    def hidden_means(
        self, x: npt.NDArray[Any], threads: Optional[int] = None
    ) -> npt.NDArray[np.float32]: ...
    def sample(
        self, n: int, seed: int, gibbs_steps: int = 1000, threads: Optional[int] = None
    ) -> tuple[npt.NDArray[Any], npt.NDArray[np.float32]]: ...
    def gibbs(
        self, x: npt.NDArray[Any], seed: int, threads: Optional[int] = None
    ) -> tuple[npt.NDArray[Any], npt.NDArray[np.float32]]: ...
    def save(self, path: _Path, data_file: Optional[_Path] = None) -> None: ...
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def from_bytes(bytes: bytes) -> NativeUnitModel: ...
    @staticmethod
    def load(path: _Path) -> NativeUnitModel: ...

def fit_unit_rbm(
    x: npt.NDArray[Any],
    settings: str,
    states: Optional[list[int]] = None,
    weights: Optional[npt.NDArray[np.float64]] = None,
    callback: _Callback = None,
    threads: Optional[int] = None,
    init: Optional[NativeUnitModel] = None,
) -> tuple[NativeUnitModel, str, Optional[BaseException]]: ...
def is_unit_model_file(path: _Path) -> bool: ...
def default_settings(kind: str) -> str: ...
def fit_rbm(
    x: _U8,
    settings: str,
    init: Optional[tuple[NativeModel, Optional[_Path]]] = None,
    monitor: tuple[str, int] = ("none", 1),
    callback: _Callback = None,
    threads: Optional[int] = None,
    binarize: Optional[float] = None,
) -> tuple[NativeModel, str, Optional[BaseException]]: ...

# A Frank-Wolfe fit's settings object (the library's ``FwParams``, JSON); left out, the
# library's default (``default_settings("frank-wolfe")``). ``FrankWolfeRBM``'s ``lambda_`` is
# ``lambda`` (a keyword, hence the functional form); ``seed`` is the estimator's (the learner's
# is derived from it); ``fall_tol`` ``"inf"`` or null turns the guard off.
FwSettings = TypedDict(
    "FwSettings",
    {
        "max_units": int,
        "lambda": float,
        "bias_learning_rate": float,
        "n_chains": int,
        "gibbs_steps": int,
        "lbfgs_iterations": int,
        "lbfgs_tol": float,
        "subproblem_starts": int,
        "bias_steps": int,
        "bias_tol": float,
        "init_sd": float,
        "away_steps": bool,
        "free_alpha": Optional[float],
        "eval_every": int,
        "early_stop": bool,
        "gap_tol": float,
        "fall_tol": Union[float, str, None],
        "fall_patience": int,
        "seed": int,
    },
    total=False,
)

def fit_frank_wolfe(
    x: _U8,
    settings: str,
    valid: Optional[_U8] = None,
    init: Optional[tuple[NativeModel, Optional[_Path]]] = None,
    callback: _Callback = None,
    threads: Optional[int] = None,
    binarize: Optional[float] = None,
) -> tuple[NativeModel, Optional[NativeModel], str, Optional[BaseException]]: ...

class FvbmSettings(TypedDict, total=False):
    """An FVBM fit's settings object (the library's ``FvbmParams``, JSON): ``algo`` and the
    fields of that solver (``default_settings("fvbm-ALGO")``); left out, the solver's default.
    ``FVBM``'s ``max_iter``, ``tol`` and ``mu`` are ``max_iterations``, ``tau`` and ``step``."""

    algo: str
    convention: str
    tau: float
    max_iterations: int
    grad_tol: float
    l2: float
    check_existence: bool
    step: float
    armijo: float
    max_backtracks: int
    memory: int
    objective_tol: float
    objective_window: int
    grad_tol_relative: float
    f_tol: float
    c1: float
    c2: float
    max_line_search: int
    f32_pairs: bool
    learning_rate: float
    n_chains: int
    n_updates: int
    seed: int

def fit_fvbm(
    x: _U8,
    settings: str,
    callback: _Callback = None,
    threads: Optional[int] = None,
) -> tuple[NativeModel, str, Optional[BaseException]]: ...

class FsllSettings(TypedDict, total=False):
    """An FSLL fit's settings object (the library's ``FsllParams``, JSON); left out, the
    library's default (``default_settings("fsll")``). ``FSLL``'s ``max_iter`` is
    ``max_iterations``."""

    epsilon: float
    max_iterations: int
    refresh_every: int
    path: str

def fit_fsll(
    x: _U8,
    settings: str,
    cardinalities: Optional[list[int]] = None,
    callback: _Callback = None,
    threads: Optional[int] = None,
) -> tuple[NativeModel, str, Optional[BaseException]]: ...

class PottsSettings(TypedDict, total=False):
    """A Potts fit's settings object (the library's ``PlmParams``, JSON); left out, the
    library's default (``default_settings("potts")``, the DCA pipeline's). ``Potts``'s
    ``max_iter`` and ``tol`` are ``max_iterations`` and ``grad_tol``; ``ignore_gaps=True`` is
    ``gap_state=0``."""

    mode: str
    lambda_h: float
    lambda_j: float
    lambda_scale: str
    lambda_group: float
    gap_state: Optional[int]
    max_iterations: int
    grad_tol: float
    objective_tol: float
    objective_window: int
    lbfgs_memory: int
    memory_limit: int

def fit_potts(
    x: _U8,
    settings_json: str,
    weights: Optional[npt.NDArray[np.float64]] = None,
    alphabet: Optional[str] = None,
    callback: _Callback = None,
    threads: Optional[int] = None,
) -> tuple[NativeModel, str, Optional[BaseException]]: ...

class ContactSettings(TypedDict, total=False):
    """Contact precision's settings object (the library's ``ContactParams``, JSON)."""

    cutoff: float
    min_separation: int

def contact_precision(
    i: list[int],
    j: list[int],
    score: list[float],
    length: int,
    distances: Union[_Path, npt.NDArray[np.float64]],
    settings_json: str,
) -> dict[str, Any]: ...
def read_alignment(path: _Path, settings_json: str, for_fit: bool) -> dict[str, Any]: ...
def sequence_weights(
    x: _U8, identity: float, threads: Optional[int] = None
) -> npt.NDArray[np.float64]: ...
def potts_params(
    model: NativeModel,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], list[int], Optional[str]]: ...
def potts_scores(
    model: NativeModel, apc: bool = True, exclude_gap: bool = False, threads: Optional[int] = None
) -> npt.NDArray[np.float64]: ...
def potts_pseudo_log_likelihood(
    model: NativeModel, x: _U8, threads: Optional[int] = None
) -> npt.NDArray[np.float64]: ...
def potts_compare_moments(
    data: _U8,
    weights: Optional[npt.NDArray[np.float64]],
    samples: _U8,
    states: list[int],
) -> dict[str, Any]: ...
def read_dataset(
    path: _Path,
    binarize: Optional[str] = None,
    cardinalities: Optional[list[int]] = None,
    seed: int = 0,
) -> _U8: ...
def data_registry() -> str: ...
def data_fetch(
    name: str,
    paths: Optional[list[str]] = None,
    mirror: Optional[_Path] = None,
    offline: bool = False,
) -> list[tuple[str, str, str]]: ...
def data_path(spec: str, mirror: Optional[_Path] = None, offline: bool = False) -> str: ...
def fvbm_inference(
    model: NativeModel,
    x: _U8,
    l2: float = 0.0,
    level: float = 0.95,
    threads: Optional[int] = None,
) -> dict[str, Any]: ...
def kl_divergence(p: npt.NDArray[np.float64], log_q: npt.NDArray[np.float64]) -> float: ...
def thread_limit() -> Optional[int]: ...
