"""The package's warnings: one category per kind of trouble, all under ``BoltzkitWarning``,
so a user can filter them (``warnings.simplefilter("ignore", boltzkit.BracketWarning)``) or
turn them into errors (``warnings.simplefilter("error", boltzkit.BoltzkitWarning)``).

Each message is the library's one line, the line the command line prints as ``warning:``.
"""

import warnings


class BoltzkitWarning(UserWarning):
    """The base of every warning boltzkit raises."""


class MpleExistenceWarning(BoltzkitWarning):
    """The maximum pseudo-likelihood estimate does not exist for these data (a direction
    raises the pseudo-likelihood for ever): the fitted parameters, their standard errors and
    Wald tests mean nothing; fit with ``l2 > 0``."""


class ConvergenceWarning(BoltzkitWarning):
    """A solver stopped because its budget (iterations) ran out, not at its optimum."""


class DivergenceWarning(BoltzkitWarning):
    """Training diverged and stopped; the model kept is the best one before it
    (``stop_reason_`` starts with ``"diverged"``)."""


class BracketWarning(BoltzkitWarning):
    """The likelihood bracket [RAISE, forward AIS] is inverted (the annealing chain has not
    reached the model) or wider than its threshold: the figure is not placed."""


class AisFallbackWarning(BoltzkitWarning):
    """``score`` fell back from exact enumeration to an AIS estimate (the model is too large
    to enumerate): slow, and an estimate with an error."""


def warn(category, message):
    """Raises ``message`` as a warning of ``category``, pointing at the user's call."""
    warnings.warn(message, category, stacklevel=3)


def warn_fit(record, stop_reason):
    """The warnings of a fit record: the MPLE's non-existence, a budget stop, divergence."""
    if record.get("mple_exists") is False:
        texts = [w for w in record.get("warnings", []) if w] or [
            "the maximum pseudo-likelihood estimate does not exist for these data; fit with l2 > 0"
        ]
        warn(MpleExistenceWarning, texts[0])
    elif stop_reason.startswith("reached the maximum number of iterations"):
        warn(
            ConvergenceWarning,
            "the solver stopped at its iteration budget, not at its optimum: "
            "raise max_iter or loosen tol",
        )
    if stop_reason.startswith("diverged"):
        warn(DivergenceWarning, "training " + stop_reason)
