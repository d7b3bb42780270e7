"""Per-feature steps, ``learning_rate='adagrad'`` (U-max and Implicit SGD).

The arithmetic lives in the ``_adagrad`` Cython module (one accumulator per
feature column shared by all classes, and one for the intercepts; the lazy
per-column L2 decay); this mixin keeps the accumulators between calls:

- ``_adagrad_sq_grad`` (n_features,) float64: G_j, the squared gradients of
  column j summed over the classes and the rows seen;
- ``_adagrad_sq_grad_intercept`` (1,) float64: G_b, the same for the
  intercepts (a feature of value 1).

They are reset by a fresh ``fit`` and the first ``partial_fit`` call, and
kept by warm starts and later ``partial_fit`` calls, so that a fit of two
epochs equals a fit of one epoch followed by a warm fit of one epoch.
Memory: O(n_features), not O(n_classes * n_features).
"""

import numpy as np
from sklearn.utils._param_validation import StrOptions

from ._sgd_schedule import ADAGRAD, PER_FEATURE_SCHEDULES

# the schedules of the estimators that take per-feature steps; the others
# keep BaseSoftmaxClassifier's constraint, which does not list 'adagrad'
ADAGRAD_CONSTRAINTS = {
    "learning_rate": [StrOptions(set(PER_FEATURE_SCHEDULES))],
}

_ADAGRAD_ARRAYS = ("_adagrad_sq_grad", "_adagrad_sq_grad_intercept")


class AdaGradMixin:
    """``learning_rate='adagrad'`` for an estimator whose kernel takes an
    ``adagrad`` state (``_adagrad.AdaGrad64/32``).

    The estimator adds ``ADAGRAD_CONSTRAINTS`` to its
    ``_parameter_constraints``; its solver makes the kernel's state over
    the accumulators (``_solver.SGDSolver._adagrad``). The mixin sits
    before ``AveragingMixin`` in the bases.
    """

    def _schedule(self):
        return PER_FEATURE_SCHEDULES[self.learning_rate]

    def _model_attributes(self):
        return (*super()._model_attributes(), *_ADAGRAD_ARRAYS)

    def _uses_adagrad(self):
        return self.learning_rate == ADAGRAD

    def _init_state(self, n_features, dtype):
        self._drop_adagrad()
        super()._init_state(n_features, dtype)

    def _drop_adagrad(self):
        for name in _ADAGRAD_ARRAYS:
            self.__dict__.pop(name, None)

    def _check_dataset(self, dataset):
        if self._uses_adagrad() and self.alpha > 0 and self.average:
            raise ValueError(
                f"learning_rate='adagrad' with alpha={self.alpha} > 0 does "
                f"not support average={self.average!r}: the L2 decay of "
                "per-feature steps differs per column and is kept in "
                "per-column lazy scales, which the lazy running mean of the "
                "iterates (one global scale) cannot follow. Set "
                "average=False, alpha=0, or another learning_rate."
            )
        super()._check_dataset(dataset)

    def _weight_matrix(self, fresh, **average):
        """The weight matrix; the accumulators (re)made if needed.

        Fresh fits start them at zero; warm starts and later partial_fit
        calls keep them. Switched off (another learning_rate on a warm
        start), they are dropped; switched on, they start at zero.
        """
        if not self._uses_adagrad():
            self._drop_adagrad()
        else:
            n_features = self._raw_weights()[0].shape[1]
            G = self.__dict__.get("_adagrad_sq_grad")
            if fresh or G is None or G.shape != (n_features,):
                self._adagrad_sq_grad = np.zeros(n_features)
                self._adagrad_sq_grad_intercept = np.zeros(1)
        return super()._weight_matrix(fresh, **average)
