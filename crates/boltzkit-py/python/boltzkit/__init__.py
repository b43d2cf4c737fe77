"""boltzkit: Boltzmann machines from numpy, with scikit-learn's conventions.

Estimators
----------
RBM            restricted Boltzmann machine, any trainer (cd, pcd, cg, sdcp, csdcp, popcd, pt)
FrankWolfeRBM  an RBM grown one hidden unit at a time by Frank-Wolfe
FVBM           fully visible Boltzmann machine (Ising): MPLE (newton, bslm, ga), MLE, PCD;
               standard errors and Wald tests
FSLL           full-span log-linear model (greedy MDL)
Potts          Potts model of sequence alignments by pseudo-likelihood (DCA, plmc's)

Data
----
datasets       the public data sets by name: ``datasets.load("binarized_mnist")`` (fetched into
               a cache from a mirror folder or the network, checksums verified)

Functions
---------
read_dataset   every reader of the library (npy, csv/tsv, IDX, amat; gzip)
read_alignment FASTA, A2M, Stockholm alignments as integer codes (focus, gap filters)
sequence_weights  plmc's sequence weights (identity threshold)
contact_precision precision of predicted contacts at L/5, L/2, L, 2L
load           any boltzkit model file, as a fitted estimator
log_partition  ``ln Z`` of a model, with its standard error and interval
kl_divergence  KL(p ‖ model) against a probability table

Warnings
--------
BoltzkitWarning and its subclasses (MpleExistenceWarning, ConvergenceWarning,
DivergenceWarning, BracketWarning, AisFallbackWarning): filter them with ``warnings``.

The work happens in the Rust library (``boltzkit._native``) with the GIL released; the
results equal the ``boltzkit`` command line's for the same seed and settings. scikit-learn
is optional: the estimators derive from its ``BaseEstimator`` when it is installed.
"""

from . import _native, datasets
from ._base import HAVE_SKLEARN, NotFittedError
from ._functions import kl_divergence, log_partition, read_dataset
from ._loading import load
from ._results import Estimate, LogLikelihood, WaldTable
from ._warnings import (
    AisFallbackWarning,
    BoltzkitWarning,
    BracketWarning,
    ConvergenceWarning,
    DivergenceWarning,
    MpleExistenceWarning,
)
from .fsll import FSLL
from .fvbm import FVBM
from .potts import (
    Alignment,
    Potts,
    contact_map,
    contact_precision,
    read_alignment,
    sequence_weights,
)
from .rbm import RBM, FrankWolfeRBM

NativeModel = _native.NativeModel
__version__ = _native.__version__

__all__ = [
    "RBM",
    "FrankWolfeRBM",
    "FVBM",
    "FSLL",
    "Potts",
    "Alignment",
    "read_alignment",
    "sequence_weights",
    "contact_map",
    "contact_precision",
    "read_dataset",
    "load",
    "log_partition",
    "kl_divergence",
    "Estimate",
    "LogLikelihood",
    "WaldTable",
    "NotFittedError",
    "NativeModel",
    "HAVE_SKLEARN",
    "datasets",
    "BoltzkitWarning",
    "MpleExistenceWarning",
    "ConvergenceWarning",
    "DivergenceWarning",
    "BracketWarning",
    "AisFallbackWarning",
]
