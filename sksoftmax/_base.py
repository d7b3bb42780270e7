"""The scikit-learn contract shared by every sksoftmax classifier.

:class:`BaseSoftmaxClassifier` holds validation, classes, ``fit`` and
``partial_fit`` with their stopping rules and early stopping. The rest is
mixed in from focused modules: the 'auto' steps (``_step_rules``), one
recorded epoch (``_epochs``), the runaway check (``_runaway``), the
class-prior start (``_class_prior``), growth by new classes
(``_new_classes``), the ``n_sampled_classes`` rule (``_class_sampler``)
and exact prediction (``_prediction``). A method's epochs run in its
solver (``_solver.SGDSolver``), reached through ``_run_epoch``.
"""

import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import StratifiedShuffleSplit
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import (
    _check_sample_weight,
    validate_data,
)

from ._class_prior import ClassPriorMixin, _prior_pseudo_weight, new_weights
from ._class_sampler import SampledClassesRuleMixin
from ._class_weight import (
    CLASS_WEIGHT_CONSTRAINTS,
    weigh_fit_rows,
    weigh_stream_rows,
)
from ._epochs import _MODEL_ATTRIBUTES, EpochMixin, improves
from ._labels import (
    _canonical_csr,
    _check_partial_fit_first_call,
    _check_targets,
    _encode_labels,
    encode_batch,
)
from ._new_classes import ClassGrowthMixin, append_classes
from ._prediction import SoftmaxPredictionMixin
from ._runaway import RunawayCheckMixin, _crossed_power_of_two
from ._sgd_schedule import SCHEDULES
from ._shared._dataset import make_dataset
from ._shared._random import RandomState
from ._solver import SolverEstimatorMixin
from ._step_rules import (
    ROWS_PER_CLASS_REF,
    AutoStepMixin,
    _row_l1_norms,
    _row_norm_stats,
)

# names other modules and the tests import from here
__all__ = [
    "BaseSoftmaxClassifier",
    "DoubleSumSoftmaxClassifier",
    "ROWS_PER_CLASS_REF",
    "_MODEL_ATTRIBUTES",
    "_canonical_csr",
    "_check_partial_fit_first_call",
    "_check_targets",
    "_encode_labels",
    "_prior_pseudo_weight",
    "_row_l1_norms",
]


class BaseSoftmaxClassifier(
    AutoStepMixin,
    EpochMixin,
    RunawayCheckMixin,
    ClassPriorMixin,
    ClassGrowthMixin,
    SampledClassesRuleMixin,
    SoftmaxPredictionMixin,
    ClassifierMixin,
    BaseEstimator,
):
    """Base class of the sksoftmax linear classifiers (not for direct use).

    Subclasses provide ``_run_epoch(dataset, weights, y, row_state, order,
    eta_epoch, t, first_visit)`` returning ``(objective_sum, weight_sum,
    t)`` and raising :class:`~sksoftmax.exceptions.DivergenceError`
    through ``_raise_divergence``: ``_solver.SolverEstimatorMixin`` runs
    the estimator's solver (``_make_solver``) there.
    """

    _parameter_constraints: dict = {
        "eta0": [
            Interval(Real, 0, None, closed="neither"),
            StrOptions({"auto"}),
        ],
        "learning_rate": [StrOptions(set(SCHEDULES))],
        "decay": [Interval(Real, 0, 1, closed="right")],
        "power_t": [Interval(Real, 0, None, closed="left")],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "fit_intercept": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left"), None],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
        "warm_start": ["boolean"],
        "verbose": ["verbose"],
        "early_stopping": ["boolean"],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "n_jobs": [Integral, None],
        **CLASS_WEIGHT_CONSTRAINTS,
        "allow_new_classes": ["boolean"],
    }

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the model, starting over unless ``warm_start=True``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; CSR and float32 are used without conversion.
        y : array-like of shape (n_samples,)
            Class labels, of any type ``np.unique`` can sort.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative row weights; None gives ones. They are
            multiplied by the weights of ``class_weight``.

        Returns
        -------
        self : object
            Fitted estimator.

        Warns
        -----
        ConvergenceWarning
            When the fitted model's exact log-loss on (up to 256 of) its
            training rows exceeds twice the class-prior model's plus one
            nat: a runaway step size (see ``_warn_if_runaway``); also when
            ``max_iter`` ends the fit before ``tol`` would.
        """
        self._adagrad_thread_warned = False
        self._allow_new_classes()  # a method that cannot grow refuses it
        X, y = validate_data(
            self,
            X,
            y,
            accept_sparse="csr",
            dtype=[np.float64, np.float32],
            order="C",
        )
        X = _canonical_csr(X)
        _check_targets(y)
        sample_weight = _check_sample_weight(
            sample_weight,
            X,
            dtype=np.float64,
            ensure_non_negative=True,
            copy=True,
        )
        classes, y_enc = _encode_labels(y)
        if classes.shape[0] < 2:
            raise ValueError(
                "The training data must contain samples of at least 2 classes;"
                f" got one class only: {classes[0]!r}."
            )
        sample_weight = weigh_fit_rows(self, classes, y_enc, sample_weight)
        warm = (
            self.warm_start
            and hasattr(self, "coef_")
            and np.array_equal(getattr(self, "classes_", None), classes)
            and self.coef_.shape == (classes.shape[0], X.shape[1])
        )
        self.classes_ = classes
        self.__dict__.pop("_class_lookup", None)
        if not warm:
            self._plan(X.shape[0], X.shape[1])
            self._init_state(X.shape[1], X.dtype)
            self._rng = RandomState.from_random_state(self.random_state)
        else:
            self._adopt_dtype(X.dtype)

        X_val = None
        if self.early_stopping:
            train, val = self._validation_split(y_enc, sample_weight)
            X_val, y_val, w_val = X[val], y_enc[val], sample_weight[val]
            X, y_enc, sample_weight = (
                X[train],
                y_enc[train],
                sample_weight[train],
            )
            if not sp.issparse(X):
                X = np.ascontiguousarray(X)

        self.class_count_ = np.bincount(
            y_enc, weights=sample_weight, minlength=classes.shape[0]
        )
        self._class_count_version = self._next_count_version()
        self._max_row_weight = float(sample_weight.max(initial=0.0))
        if not warm and self.fit_intercept:
            self._start_at_prior(np.arange(classes.shape[0]))

        row_state = getattr(self, "_row_state", None)
        first_visit = not (
            warm and row_state is not None and len(row_state) == X.shape[0]
        )
        if first_visit:
            row_state = self._new_row_state(X.shape[0])
        self.t_ = 0 if not warm else self.t_
        self._n_epochs = 0 if not warm else self._n_epochs
        epochs_before = self._n_epochs
        self.loss_curve_ = []
        if self.early_stopping:
            self.validation_loss_ = []

        dataset = make_dataset(X, sample_weight)
        self._check_dataset(dataset)
        self._check_n_sampled_classes()
        if isinstance(self.eta0, str):
            # only the 'auto' rules read them (O(nnz), with a copy of X's
            # values for the l1 norms: 10% of a fixed-step U-max epoch)
            self._row_norm_stats = _row_norm_stats(dataset, X)
        else:
            self.__dict__.pop("_row_norm_stats", None)
        self._set_eta0(X, y_enc, sample_weight, keep_pilot=warm)
        order = np.arange(X.shape[0], dtype=np.intp)
        weights = self._weight_matrix(fresh=not warm)
        best, n_bad = np.inf, 0
        self.n_iter_ = 0
        try:
            for epoch in range(self.max_iter):
                objective = self._epoch(
                    dataset, weights, y_enc, row_state, order, first_visit
                )
                first_visit = False
                self.n_iter_ += 1
                if self.early_stopping:
                    self._fold_weights(weights)
                    monitored = self._log_loss(X_val, y_val, w_val)
                    self.validation_loss_.append(monitored)
                else:
                    monitored = objective
                if self.tol is not None:
                    n_bad = 0 if improves(monitored, best, self.tol) else n_bad + 1
                    best = min(best, monitored)
                    if n_bad >= self.n_iter_no_change:
                        if self.verbose:
                            print(f"Converged after {self.n_iter_} epochs")
                        break
            else:
                if self.tol is not None and self.max_iter > 1:
                    warnings.warn(
                        f"Maximum number of epochs ({self.max_iter}) reached "
                        "before the stopping criterion; consider increasing "
                        "max_iter or tol.",
                        ConvergenceWarning,
                    )
        finally:
            # coef_ is the kernel's own array: fold the lazy scale back once
            self._fold_weights(weights)
        self._row_state = row_state
        if self._runaway_due(warm, epochs_before, X, sample_weight):
            self._warn_if_runaway(X, y_enc, sample_weight)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """One pass over (X, y), continuing from the current state.

        Follows scikit-learn's ``SGDClassifier.partial_fit`` rules: ``classes``
        is required on the first call (and may be repeated, unchanged, later);
        the learning-rate schedule carries on across calls (an 'exponential'
        schedule decays once per call); a batch whose weights are all zero
        changes nothing. The rows are new on every call, so per-row
        variables of the method are initialised afresh for each batch.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training batch.
        y : array-like of shape (n_samples,)
            Labels, all of which must be in ``classes``.
        classes : array-like of shape (n_classes,), default=None
            Every class of the problem; required on the first call.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative row weights; None gives ones. They are
            multiplied by the weights of ``class_weight``.

        Returns
        -------
        self : object
            The estimator.
        """
        self._adagrad_thread_warned = False
        first = not hasattr(self, "coef_")
        allow_new = self._allow_new_classes()
        if first and classes is None and not allow_new:
            raise ValueError(
                "classes must be passed on the first call to partial_fit."
            )
        if first:
            # a failed earlier first call must not leave classes_ behind
            self.classes_ = None
        X, y = validate_data(
            self,
            X,
            y,
            accept_sparse="csr",
            dtype=[np.float64, np.float32],
            order="C",
            reset=first,
        )
        X = _canonical_csr(X)
        y_enc, added = encode_batch(self, y, classes, first, allow_new)
        sample_weight = _check_sample_weight(
            sample_weight,
            X,
            dtype=np.float64,
            ensure_non_negative=True,
            copy=True,
            allow_all_zero_weights=True,
        )
        return self._partial_fit_encoded(X, y_enc, sample_weight, added)

    def _partial_fit_encoded(self, X, y_enc, sample_weight, added=None):
        """``partial_fit`` after its validation: one pass over validated
        rows (X canonical, of ``n_features_in_`` columns), their class
        indices ``y_enc`` into ``classes_`` (set by the caller on the first
        call) and their weights (a copy the pass may weigh in place).
        ``added``: labels to append to ``classes_`` first, as
        ``allow_new_classes`` does. ``SoftmaxClassifier`` drives its
        expert solvers through this (``_expert_solver``): its rows are
        validated and encoded once, by the front door."""
        first = not hasattr(self, "coef_")
        grown = np.arange(0)
        if added is not None and added.shape[0]:
            n_old = append_classes(self, added)
            if not first:
                self._grow_classes(n_old, self.classes_.shape[0])
                grown = np.arange(n_old, self.classes_.shape[0])
        if first:
            self._plan(X.shape[0], X.shape[1])
            self._init_state(X.shape[1], X.dtype)
            self._rng = RandomState.from_random_state(self.random_state)
            self.t_ = 0
            self._n_epochs = 0
            self.loss_curve_ = []
            self.n_iter_ = 0
            self.class_count_ = np.zeros(self.classes_.shape[0])
            self._max_row_weight = 0.0
        elif X.dtype != self.coef_.dtype:
            X = X.astype(self.coef_.dtype)
        sample_weight = weigh_stream_rows(self, y_enc, sample_weight, first)
        if not np.any(sample_weight > 0):
            if grown.shape[0]:
                self._start_new_classes(grown)
            return self
        # classes first seen in this batch start at their prior (all of
        # them on the first call); classes trained before keep their state.
        # The counts grow in place, O(n) (see ClassSamplerMixin's
        # _class_sampler for when the sampler's table follows them)
        unseen = self.class_count_[y_enc] == 0
        np.add.at(self.class_count_, y_enc, sample_weight)
        if first:
            self._class_count_version = self._next_count_version()
        self._max_row_weight = max(
            self._max_row_weight, float(sample_weight.max())
        )
        if self.fit_intercept:
            new = (
                np.arange(self.classes_.shape[0])
                if first
                else np.unique(y_enc[unseen & (self.class_count_[y_enc] > 0)])
            )
            self._start_at_prior(new)
        if grown.shape[0]:
            # classes added by this call: at their prior (those without
            # a row of positive weight too), in the running mean as well
            self._start_new_classes(grown)
        dataset = make_dataset(X, sample_weight)
        self._check_dataset(dataset)
        self._check_n_sampled_classes()
        # 'auto' follows the rows seen so far, not the first batch alone
        stats = _row_norm_stats(dataset, X)
        if not first and hasattr(self, "_row_norm_stats"):
            stats = stats + self._row_norm_stats
        self._row_norm_stats = stats
        self._set_eta0(X, y_enc, sample_weight, keep_pilot=not first)
        order = np.arange(X.shape[0], dtype=np.intp)
        weights = self._weight_matrix(fresh=first)
        try:
            self._epoch(
                dataset,
                weights,
                y_enc,
                self._new_row_state(X.shape[0]),
                order,
                True,
            )
        finally:
            self._fold_weights(weights)
        self.n_iter_ = 1
        # on calls 1, 2, 4, 8, ...: a stream of small batches at many
        # classes pays the check's O(K) per scored row only O(log calls)
        # times, and a runaway step shows in the first calls
        if _crossed_power_of_two(self._n_epochs - 1, self._n_epochs):
            self._warn_if_runaway(X, y_enc, sample_weight)
        return self

    # ------------------------------------------------------ state setup
    def _plan(self, n_samples, n_features):
        """Choose the form of the state before ``_init_state`` allocates it
        (a hook: the bound method sizes its curvature here)."""

    def _init_state(self, n_features, dtype):
        """A zero model of the current classes (``new_weights``, the
        allocation the eta0 pilot's solvers use too)."""
        self.coef_, self.intercept_ = new_weights(
            self.classes_.shape[0], n_features, dtype
        )
        self.__dict__.pop("_row_state", None)

    def _adopt_dtype(self, dtype):
        # a warm start keeps the previous solution but the dtype of the data
        self.coef_ = np.ascontiguousarray(self.coef_, dtype=dtype)
        self.intercept_ = np.ascontiguousarray(self.intercept_, dtype=dtype)

    def _new_row_state(self, n_rows):
        return None

    def _check_dataset(self, dataset):
        """Method-specific checks of the training rows (default: none)."""

    def _validation_split(self, y_enc, sample_weight):
        n_val = int(np.ceil(self.validation_fraction * y_enc.shape[0]))
        n_classes = self.classes_.shape[0]
        if n_val < n_classes or y_enc.shape[0] - n_val < n_classes:
            raise ValueError(
                f"validation_fraction={self.validation_fraction} of "
                f"{y_enc.shape[0]} rows gives a validation or training set "
                f"smaller than the {n_classes} classes; raise or lower it, "
                "or set early_stopping=False."
            )
        split = StratifiedShuffleSplit(
            test_size=self.validation_fraction, random_state=self.random_state
        )
        try:
            return next(split.split(np.zeros_like(y_enc), y_enc))
        except ValueError as exc:
            raise ValueError(
                f"early_stopping needs a stratified validation split: {exc}"
            ) from exc


class DoubleSumSoftmaxClassifier(SolverEstimatorMixin, BaseSoftmaxClassifier):
    """Base of the methods on the double-sum softmax (Fagan & Iyengar 2018).

    They keep one float64 variable u_i per training row (the row's
    log-normaliser in eq. 5), aligned with the rows of the current fit,
    and run their epochs through a solver (``_solver.SGDSolver``).
    """

    def _new_row_state(self, n_rows):
        return np.zeros(n_rows, dtype=np.float64)

