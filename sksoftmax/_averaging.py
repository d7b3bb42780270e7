"""Iterate averaging (Polyak-Ruppert), the ``average`` parameter.

U-max, Implicit SGD and the sampled baselines take ``average``, as
scikit-learn's ``SGDClassifier`` does: ``coef_`` and ``intercept_`` are then
the running mean of the iterates, from the ``average``-th row seen on. The
arithmetic lives in the weight matrix (``_weight_matrix``: the mean kept
lazily in O(nnz) per step); this mixin keeps the arrays between calls:

- ``_standard_coef``, ``_standard_intercept``: the iterate itself, which
  every step, warm start and ``partial_fit`` call continues from;
- ``_average_coef``, ``_average_intercept``: the mean of the
  ``_average_count`` iterates averaged so far (all zero while none is);
- ``coef_`` / ``intercept_``: the same arrays as the mean once one iterate
  has been averaged, else as the iterate, so no third copy of W exists.

With ``average=False`` none of the private arrays exists and ``coef_`` is
the iterate, as before.
"""

from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import Interval

# scikit-learn's constraint for SGDClassifier's ``average``: a bool, or an
# int of at least one (0 and negative numbers are refused, as there)
AVERAGE_CONSTRAINTS = {
    "average": [Interval(Integral, 0, None, closed="neither"), "boolean"],
}

_AVERAGE_ARRAYS = (
    "_standard_coef",
    "_standard_intercept",
    "_average_coef",
    "_average_intercept",
)


class AveragingMixin:
    """The ``average`` parameter of an estimator on ``BaseSoftmaxClassifier``.

    The estimator adds ``AVERAGE_CONSTRAINTS`` to its
    ``_parameter_constraints``; its kernel calls the weight matrix's
    ``add_intercept`` for intercept steps and ``average_rows`` once per row
    (or per minibatch) after the row's step.
    """

    def _model_attributes(self):
        return (*super()._model_attributes(), *_AVERAGE_ARRAYS, "_average_count")

    def _average_start(self):
        """The first row (from 1) whose iterate is averaged; 0 for none."""
        return int(self.average)

    def _init_state(self, n_features, dtype):
        self._drop_average()
        super()._init_state(n_features, dtype)

    def _drop_average(self):
        for name in (*_AVERAGE_ARRAYS, "_average_count"):
            self.__dict__.pop(name, None)

    def _raw_weights(self):
        if "_standard_coef" in self.__dict__:
            return self._standard_coef, self._standard_intercept
        return self.coef_, self.intercept_

    def _expose_average(self):
        """coef_ / intercept_ <- the mean, once an iterate is averaged."""
        if self._average_count > 0:
            self.coef_ = self._average_coef
            self.intercept_ = self._average_intercept
        else:
            self.coef_ = self._standard_coef
            self.intercept_ = self._standard_intercept

    def _adopt_dtype(self, dtype):
        if "_standard_coef" not in self.__dict__:
            super()._adopt_dtype(dtype)
            return
        for name in _AVERAGE_ARRAYS:
            array = np.ascontiguousarray(getattr(self, name), dtype=dtype)
            setattr(self, name, array)
        self._expose_average()

    def _weight_matrix(self, fresh):
        """The weight matrix over the iterate, and the running mean if on.

        coef_ and intercept_ are the iterate until the call's weights are
        folded (``_fold_weights``), as they are for the estimators without
        averaging: the kernel's own state.
        """
        coef, intercept = self._raw_weights()
        self.coef_, self.intercept_ = coef, intercept
        start = self._average_start()
        if start <= 0:
            # averaging off (or switched off before a warm start): the
            # iterate goes on alone
            self._drop_average()
            return super()._weight_matrix(fresh)
        average = self.__dict__.get("_average_coef")
        if (
            fresh
            or average is None
            or average.shape != coef.shape
            or average.dtype != coef.dtype
        ):
            # averaging begins (fresh fit, or switched on for a warm
            # start): no iterate averaged yet; written, not calloc'ed, for
            # the reason given in _init_state
            self._average_coef = np.empty_like(coef)
            self._average_coef.fill(0)
            self._average_intercept = np.zeros_like(intercept)
            self._average_count = 0
        self._standard_coef, self._standard_intercept = coef, intercept
        return super()._weight_matrix(
            fresh,
            average_coef=self._average_coef,
            average_intercept=self._average_intercept,
            average_start=start,
            average_count=self._average_count,
        )

    def _per_class_arrays(self):
        arrays = super()._per_class_arrays()
        if "_standard_coef" not in self.__dict__:
            return arrays
        # coef_ / intercept_ are one of these: they follow it
        return [a for a in arrays if a[0] not in ("coef_", "intercept_")] + [
            (name, 0, 1) for name in _AVERAGE_ARRAYS
        ]

    def _grow_classes(self, n_old, n_new):
        super()._grow_classes(n_old, n_new)
        if "_standard_coef" in self.__dict__:
            # coef_ / intercept_ are the grown iterate or mean (also when a
            # loader did not keep them the same objects)
            self._expose_average()

    def _start_new_classes(self, classes):
        """A new class's mean starts where its iterate does (W row zero,
        the prior intercept): the mean of the iterates it would have had
        at its start."""
        super()._start_new_classes(classes)
        if "_average_intercept" in self.__dict__:
            self._average_intercept[classes] = self._standard_intercept[
                classes
            ]

    def _fold_weights(self, weights):
        """Fold W and write the mean (one O(K D) pass), then expose it."""
        super()._fold_weights(weights)
        if not weights.averaging or "coef_" not in self.__dict__:
            # off, or diverged: the estimator was left unfitted
            return
        self._average_count = int(weights.average_count)
        self._expose_average()
