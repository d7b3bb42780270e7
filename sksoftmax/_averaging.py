"""Iterate averaging (Polyak-Ruppert), the ``average`` parameter.

U-max, Implicit SGD and the sampled baselines take ``average``, as
scikit-learn's ``SGDClassifier`` does: ``coef_`` and ``intercept_`` are then
the running mean of the iterates, from the ``average``-th row seen on. The
arithmetic lives in the weight matrix (``_weight_matrix``: the mean kept
lazily in O(nnz) per step); :class:`Averaging`, the ``averaging`` field of
the estimator's training state (``_solver.TrainingState``), keeps the mean
between calls:

- the state's ``coef`` / ``intercept``: the iterate itself, which every
  step, warm start and ``partial_fit`` call continues from;
- ``Averaging.coef`` / ``Averaging.intercept``: the mean of the
  ``Averaging.count`` iterates averaged so far (all zero while none is);
- ``coef_`` / ``intercept_``: the same arrays as the mean once one iterate
  has been averaged, else as the iterate, so no third copy of W exists.

With ``average=False`` the state has no averaging and ``coef_`` is the
iterate.
"""

from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import Interval

from ._new_classes import grow_per_class

# scikit-learn's constraint for SGDClassifier's ``average``: a bool, or an
# int of at least one (0 and negative numbers are refused, as there)
AVERAGE_CONSTRAINTS = {
    "average": [Interval(Integral, 0, None, closed="neither"), "boolean"],
}


class Averaging:
    """The running mean of the iterates and when it starts.

    The estimator's kernel calls the weight matrix's ``add_intercept`` for
    intercept steps and ``average_rows`` once per row (or per minibatch)
    after the row's step; this object holds the mean between calls.

    Parameters
    ----------
    start : int
        The first row (from 1) whose iterate is averaged (``int(average)``).
    coef, intercept : ndarray
        The mean of the iterates averaged so far.
    count : int, default=0
        How many iterates the mean holds.
    """

    def __init__(self, start, coef, intercept, count=0):
        self.start = start
        self.coef = coef
        self.intercept = intercept
        self.count = count

    @classmethod
    def for_call(cls, averaging, start, coef, intercept, fresh):
        """The averaging of a call's epochs over the iterate (``coef``,
        ``intercept``): None when off (``start`` <= 0, also when switched
        off before a warm start); a new, empty mean on a fresh model or
        when switched on (written, not calloc'ed: the mean is written
        whole by the first averaged step); else ``averaging`` itself,
        which goes on."""
        if start <= 0:
            return None
        if (
            fresh
            or averaging is None
            or averaging.coef.shape != coef.shape
            or averaging.coef.dtype != coef.dtype
        ):
            mean = np.empty_like(coef)
            mean.fill(0)
            averaging = cls(start, mean, np.zeros_like(intercept))
        averaging.start = start
        return averaging

    def weight_matrix_options(self):
        """The averaging arguments of ``make_weight_matrix``."""
        return {
            "average_coef": self.coef,
            "average_intercept": self.intercept,
            "average_start": self.start,
            "average_count": self.count,
        }

    def fold(self, weights):
        """Take the count of a weight matrix whose mean was just written
        (its ``fold_scale``: one O(K D) pass)."""
        self.count = int(weights.average_count)

    def exposed(self, coef, intercept):
        """(coef_, intercept_): the mean once an iterate is averaged, else
        the iterate (``coef``, ``intercept``)."""
        if self.count > 0:
            return self.coef, self.intercept
        return coef, intercept

    def adopt_dtype(self, dtype):
        self.coef = np.ascontiguousarray(self.coef, dtype=dtype)
        self.intercept = np.ascontiguousarray(self.intercept, dtype=dtype)

    def grow(self, n_old, n_new):
        """A new class's mean starts at zero here, at its iterate's start
        once ``start_classes`` is called."""
        self.coef = grow_per_class(self.coef, n_old, n_new, 0, name="mean")
        self.intercept = grow_per_class(
            self.intercept, n_old, n_new, 0, name="mean intercept"
        )

    def start_classes(self, classes, intercept):
        """A new class's mean starts where its iterate does (W row zero,
        the prior intercept ``intercept[classes]``): the mean of the
        iterates it would have had at its start."""
        self.intercept[classes] = intercept[classes]
