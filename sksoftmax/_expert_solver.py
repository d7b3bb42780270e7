"""The package's sampled-class estimators behind the solver interface.

:class:`SoftmaxClassifier` drives every solver through one small interface
(``setup``, ``epoch``, ``finalize``, ``snapshot`` / ``restore``, ``eta``,
``coef_view``, ``b`` and ``end_fit``). The exact-gradient solver
(``_exact.py``) implements it directly; the methods whose cost per update
does not grow with the number of classes (U-max, Implicit SGD, SCENT,
augment and reduce, the stochastic bound) are reached through
:class:`ExpertSolver`, which holds one of the expert estimators and makes
one ``partial_fit`` pass per epoch (its schedule then advances once per
epoch, as it does in the expert's own ``fit``). The front door validates
and encodes the rows once: the pass is the expert's
``_partial_fit_encoded``, the part of ``partial_fit`` after validation, on
class indices 0..K-1 (the expert's ``classes_``).
"""

import copy

import numpy as np


class ExpertSolver:
    """One expert estimator of the package, one ``partial_fit`` per epoch.

    Parameters
    ----------
    estimator : estimator instance
        An unfitted expert estimator (e.g. ``SCENTClassifier()``), already
        configured; it is cloned by the caller, never shared with the user.
    """

    def __init__(self, estimator):
        self.estimator = estimator
        self._classes = None

    def setup(self, n_classes, n_features, dtype, intercept=None):
        """Nothing to allocate before the first pass: the expert's first
        ``partial_fit`` allocates its state and starts at the class prior
        of the rows it sees (``intercept`` is not used)."""
        self._classes = np.arange(n_classes)

    def epoch(self, X, y, sample_weight, order):
        """One pass over the rows ``X[order]``; returns (loss_sum,
        weight_sum) of the expert's own objective estimate."""
        est = self.estimator
        added = None
        if not hasattr(est, "coef_"):
            # the first pass: the expert's classes are the front door's
            # class indices, its rows the front door's validated rows
            est.classes_ = self._classes
            est._class_lookup = None
            est.n_features_in_ = X.shape[1]
        elif est.classes_.shape[0] < self._classes.shape[0]:
            # grown (``grow``): the expert appends the new indices
            added = self._classes[est.classes_.shape[0]:]
        est._partial_fit_encoded(
            X[order], y[order], sample_weight[order], added
        )
        if est.get_params()["eta0"] == "auto" and hasattr(est, "eta0_"):
            # 'auto' as the expert computes it on the first pass, then fixed:
            # some experts' rules follow the rows seen, which would shrink
            # the step with every further pass over the same rows
            est.set_params(eta0=float(est.eta0_))
        weight_sum = float(sample_weight[order].sum())
        return float(est.loss_curve_[-1]) * weight_sum, weight_sum

    def grow(self, n_classes, intercept=None):
        """Add classes, up to ``n_classes``: the expert (made with
        ``allow_new_classes=True``) adds them on its next ``partial_fit``,
        at its own class-prior start (``intercept`` is not used)."""
        self._classes = np.arange(n_classes)

    def finalize(self):
        """Nothing pending: ``partial_fit`` leaves ``coef_`` exact."""

    def end_fit(self):
        """The fit is over: the expert's W stored feature-major, in place,
        as prediction reads it fastest (its next pass turns it back)."""
        self.estimator._feature_major()

    def snapshot(self, into=None):
        """A copy of the expert (``into`` is not used)."""
        return copy.deepcopy(self.estimator)

    def restore(self, snap):
        """Continue from a copy of ``snap``."""
        self.estimator = copy.deepcopy(snap)

    @property
    def eta(self):
        """The step of the next pass: ``eta0`` once set (after the first
        pass, or by the setter, also after a ``restore``), else the
        expert's ``eta0_`` (NaN before its first pass)."""
        eta0 = self.estimator.get_params()["eta0"]
        if not isinstance(eta0, str):
            return float(eta0)
        return float(getattr(self.estimator, "eta0_", np.nan))

    @eta.setter
    def eta(self, value):
        # a float eta0 replaces the expert's 'auto' rule from the next pass
        self.estimator.set_params(eta0=float(value))

    @property
    def b(self):
        return self.estimator.intercept_

    def coef_view(self):
        return self.estimator.coef_
