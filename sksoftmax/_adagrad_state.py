"""Per-feature steps, ``learning_rate='adagrad'`` (U-max and Implicit SGD).

The arithmetic lives in the ``_adagrad`` Cython module (one accumulator per
feature column shared by all classes, and one for the intercepts; the lazy
per-column L2 decay); :class:`AdaGradState`, the ``adagrad`` field of the
estimator's training state (``_solver.TrainingState``), keeps the
accumulators between calls:

- ``sq_grad`` (n_features,) float64: G_j, the squared gradients of
  column j summed over the classes and the rows seen;
- ``sq_grad_intercept`` (1,) float64: G_b, the same for the intercepts (a
  feature of value 1).

They are reset by a fresh ``fit`` and the first ``partial_fit`` call, and
kept by warm starts and later ``partial_fit`` calls, so that a fit of two
epochs equals a fit of one epoch followed by a warm fit of one epoch.
Memory: O(n_features), not O(n_classes * n_features).
"""

from dataclasses import dataclass

import numpy as np
from sklearn.utils._param_validation import StrOptions

from ._sgd_schedule import PER_FEATURE_SCHEDULES

# the schedules of the estimators that take per-feature steps; the others
# keep BaseSoftmaxClassifier's constraint, which does not list 'adagrad'
ADAGRAD_CONSTRAINTS = {
    "learning_rate": [StrOptions(set(PER_FEATURE_SCHEDULES))],
}


@dataclass(eq=False)
class AdaGradState:
    """The accumulators of ``learning_rate='adagrad'``: G_j per feature
    column and G_b for the intercepts (see the module docstring)."""

    sq_grad: np.ndarray
    sq_grad_intercept: np.ndarray

    @classmethod
    def zeros(cls, n_features):
        """Accumulators of no gradient seen."""
        return cls(np.zeros(n_features), np.zeros(1))


def check_adagrad_average(learning_rate, alpha, average):
    """ValueError for 'adagrad' with ``alpha > 0`` and ``average``: the
    per-column lazy scales cannot be followed by the running mean."""
    if learning_rate == "adagrad" and alpha > 0 and average:
        raise ValueError(
            f"learning_rate='adagrad' with alpha={alpha} > 0 does "
            f"not support average={average!r}: the L2 decay of "
            "per-feature steps differs per column and is kept in "
            "per-column lazy scales, which the lazy running mean of the "
            "iterates (one global scale) cannot follow. Set "
            "average=False, alpha=0, or another learning_rate."
        )
