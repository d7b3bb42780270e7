"""The scikit-learn contract shared by the expert classifiers.

:class:`BaseSoftmaxClassifier` holds the API, validation, classes and the
bookkeeping of ``fit`` and ``partial_fit`` with their stopping rules and
early stopping. What it does besides is in focused modules, as plain
functions and small objects it calls: the 'auto' steps and the eta0 pilot
(``_step_rules``, ``_eta0_pilot``), the epochs' record and thread rule
(``_epochs``), the runaway check (``_runaway``), the class-prior start
(``_class_prior``), growth by new classes (``_new_classes``), the
``n_sampled_classes`` rule (``_class_sampler``) and exact prediction
(``_prediction``, its one base class besides scikit-learn's).

A method's epochs run in its solver (``_solver.SGDSolver``, made by the
estimator's ``_make_solver``) on the estimator's training state
(``_state``, a ``_solver.TrainingState`` with named fields), which the
solver's ``setup`` makes when the model starts and which holds the
optional behaviours as strategy objects: the class sampler
(``_class_sampler.ClassSampler``), the AdaGrad accumulators
(``_adagrad_state.AdaGradState``) and the iterate averaging
(``_averaging.Averaging``).
"""

import time
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

from ._adagrad_state import (
    ADAGRAD_CONSTRAINTS,
    check_adagrad_average,
)
from ._averaging import AVERAGE_CONSTRAINTS, Averaging
from ._class_prior import (
    _prior_pseudo_weight,
    next_count_version,
    prior_frequencies,
    start_at_prior,
)
from ._class_sampler import (
    SAMPLER_CONSTRAINTS,
    check_n_sampled_classes,
    n_sampled_used,
)
from ._class_weight import (
    CLASS_WEIGHT_CONSTRAINTS,
    weigh_fit_rows,
    weigh_stream_rows,
)
from ._epochs import (
    _MODEL_ATTRIBUTES,
    divergence_message,
    improves,
    record_epoch,
    training_threads,
)
from ._labels import (
    _canonical_csr,
    _check_partial_fit_first_call,
    _check_targets,
    _encode_labels,
    encode_batch,
)
from ._new_classes import (
    append_classes,
    check_allow_new_classes,
    grow_per_class,
)
from ._prediction import SoftmaxPredictionMixin
from ._runaway import _crossed_power_of_two, runaway_due, warn_if_runaway
from ._sgd_schedule import ADAGRAD, PER_FEATURE_SCHEDULES, SCHEDULES
from ._shared._dataset import make_dataset
from ._shared._weight_matrix import make_weight_matrix
from ._solver import EpochDiverged, PilotSetup
from ._step_rules import (
    ROWS_PER_CLASS_REF,
    RowNormStats,
    _row_l1_norms,
    set_eta0,
)
from .exceptions import DivergenceError

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
    SoftmaxPredictionMixin, ClassifierMixin, BaseEstimator
):
    """Base class of the sksoftmax expert classifiers (not for direct use).

    A subclass defines its ``__init__`` (every parameter in its
    signature, set by this class's ``__init__``),
    ``_make_solver(eta0=None, n_threads=None)`` (its solver of the current
    parameters, from ``_solver_options``) and ``_auto_eta0(curvature)``
    (its 'auto' step rule). The other hooks have
    defaults: ``_plan``, ``_check_dataset``, ``_new_row_state``,
    ``_schedule``, ``_uses_adagrad``, ``_distinct_draw_limit``,
    ``_n_sampled_used``, ``_after_epoch``, ``_verbose_extra``,
    ``_divergence_hint``, and the class attributes below.
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

    # Methods whose 'auto' step is chosen by the pilot of _eta0_pilot.py
    # (their right step depends on how the model's probability mass
    # spreads over the sampled classes, which no closed form knows).
    _eta0_pilot = False
    # Methods whose epochs run on n_jobs threads (_epochs.training_threads)
    _threaded_epochs = False
    # Cost of the probabilities per (row, class) term, in log-sum-exp
    # units, for the runaway check's budget (_runaway)
    _proba_cost = 1
    # Why the method's state cannot grow by classes (None: it can; see
    # _new_classes.check_allow_new_classes)
    _new_classes_refusal = None

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
            nat: a runaway step size (see ``_runaway.warn_if_runaway``);
            also when ``max_iter`` ends the fit before ``tol`` would.
        """
        self._adagrad_thread_warned = False
        check_allow_new_classes(self)  # a method that cannot grow refuses it
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
            and "_state" in self.__dict__
            and np.array_equal(getattr(self, "classes_", None), classes)
            and self.coef_.shape == (classes.shape[0], X.shape[1])
        )
        self.classes_ = classes
        self.__dict__.pop("_class_lookup", None)
        if not warm:
            self._plan(X.shape[0], X.shape[1])
        self._start_state(warm, X.shape[1], X.dtype)

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
        self._class_count_version = next_count_version()
        self._max_row_weight = float(sample_weight.max(initial=0.0))
        if not warm and self.fit_intercept:
            self._start_at_prior(np.arange(classes.shape[0]))

        row_state = getattr(self, "_row_state", None)
        first_visit = not (
            warm and row_state is not None and len(row_state) == X.shape[0]
        )
        if first_visit:
            row_state = self._new_row_state(X.shape[0])
        self.t_ = self._state.t
        self._n_epochs = 0 if not warm else self._n_epochs
        epochs_before = self._n_epochs
        self.loss_curve_ = []
        if self.early_stopping:
            self.validation_loss_ = []

        dataset = make_dataset(X, sample_weight)
        self._check_dataset(dataset)
        check_n_sampled_classes(self)
        if isinstance(self.eta0, str):
            # only the 'auto' rules read them (O(nnz), with a copy of X's
            # values for the l1 norms: 10% of a fixed-step U-max epoch)
            self._row_norm_stats = RowNormStats.of(dataset, X)
        else:
            self.__dict__.pop("_row_norm_stats", None)
        set_eta0(self, X, y_enc, sample_weight, keep_pilot=warm)
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
        if runaway_due(self, warm, epochs_before, X, sample_weight):
            self._warn_if_runaway(X, y_enc, sample_weight)
        self._feature_major()
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
        allow_new = check_allow_new_classes(self)
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
        if not first:
            self._class_major()
        grown = np.arange(0)
        if added is not None and added.shape[0]:
            n_old = append_classes(self, added)
            if not first:
                self._grow_classes(n_old, self.classes_.shape[0])
                grown = np.arange(n_old, self.classes_.shape[0])
        if first:
            self._plan(X.shape[0], X.shape[1])
            self._start_state(False, X.shape[1], X.dtype)
            self.t_ = 0
            self._n_epochs = 0
            self.loss_curve_ = []
            self.n_iter_ = 0
            self.class_count_ = np.zeros(self.classes_.shape[0])
            self._max_row_weight = 0.0
        else:
            if X.dtype != self.coef_.dtype:
                X = X.astype(self.coef_.dtype)
            self._start_state(True, X.shape[1], X.dtype)
        sample_weight = weigh_stream_rows(self, y_enc, sample_weight, first)
        if not np.any(sample_weight > 0):
            if grown.shape[0]:
                self._start_new_classes(grown)
            return self
        # classes first seen in this batch start at their prior (all of
        # them on the first call); classes trained before keep their state.
        # The counts grow in place, O(n) (see ClassSampler.refresh for
        # when the sampler's table follows them)
        unseen = self.class_count_[y_enc] == 0
        np.add.at(self.class_count_, y_enc, sample_weight)
        if first:
            self._class_count_version = next_count_version()
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
        check_n_sampled_classes(self)
        # 'auto' follows the rows seen so far, not the first batch alone
        stats = RowNormStats.of(dataset, X)
        if not first and "_row_norm_stats" in self.__dict__:
            stats = stats + self._row_norm_stats
        self._row_norm_stats = stats
        set_eta0(self, X, y_enc, sample_weight, keep_pilot=not first)
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

    # ------------------------------------------------------ the state
    def _plan(self, n_samples, n_features):
        """Choose the form of the state before the solver's ``setup``
        makes it (a hook: the bound method sizes its curvature here)."""

    def _start_state(self, warm, n_features, dtype):
        """The one place a call gets its training state (``_state``): a
        fresh one from the solver's ``setup`` for a new model (zero
        weights, a new generator, the strategies the parameters ask for,
        the method's own state), else the kept one in the data's dtype,
        brought in line with the parameters (``resume``: a strategy
        switched on by ``set_params`` starts, one switched off is
        dropped). ``coef_`` and ``intercept_`` then expose it."""
        # the state needs no step: eta0_ is chosen later in the call
        solver = self._make_solver(eta0=np.nan, n_threads=1)
        if warm:
            self._class_major()
            self._state.adopt_dtype(dtype)
            solver.resume(self._state)
        else:
            self.__dict__.pop("_row_state", None)
            self._state = solver.setup(n_features, dtype, self.random_state)
        self._expose()

    def _class_major(self):
        """The state's W back in the training kernels' layout (class-major,
        in place) after ``_feature_major``; coef_ follows."""
        if self._state.class_major(self._n_threads()):
            self._expose()

    def _feature_major(self):
        """At the end of ``fit``: W stored feature-major in place, the
        layout prediction reads fastest (:meth:`TrainingState.feature_major`;
        the next training call turns it back). coef_ follows."""
        if self._state.feature_major(self._n_threads()):
            self._expose()

    def _expose(self):
        """coef_ / intercept_ <- the state's (the running mean once an
        iterate is averaged, else the iterate; the same arrays, no copy)."""
        self.coef_, self.intercept_ = self._state.weights()

    def _new_row_state(self, n_rows):
        return None

    def _check_dataset(self, dataset):
        """Method-specific checks of the training rows (default: none)."""

    def _takes(self, name):
        """Whether the estimator has the parameter ``name`` (``average``,
        ``sampler``: the optional behaviours it offers)."""
        return name in self._parameter_constraints

    def _weight_matrix(self, fresh):
        """Wrap the state's iterate (no copy) for the kernels, with the
        running mean of ``average`` (``Averaging.for_call``: it begins on
        a fresh model or when switched on, and is dropped when off).

        ||W||^2 is needed only for the penalty (alpha > 0); computing it is
        O(K D), so it is skipped when W is known to be zero or unused.
        coef_ and intercept_ are the iterate until the call's weights are
        folded (``_fold_weights``): the kernel's own state.
        """
        state = self._state
        self.coef_, self.intercept_ = state.coef, state.intercept
        start = int(self.average) if self._takes("average") else 0
        state.averaging = Averaging.for_call(
            state.averaging, start, state.coef, state.intercept, fresh
        )
        sq_norm = None if (not fresh and self.alpha > 0) else 0.0
        average = (
            {}
            if state.averaging is None
            else state.averaging.weight_matrix_options()
        )
        return make_weight_matrix(
            state.coef, state.intercept, sq_norm, **average
        )

    def _fold_weights(self, weights):
        """Write the true W into the state (and the mean, one O(K D)
        pass, when averaging), then expose it."""
        weights.fold_scale()
        if not weights.averaging or "_state" not in self.__dict__:
            # off, or diverged: the estimator was left unfitted
            return
        self._state.averaging.fold(weights)
        self._expose()

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

    # ------------------------------------------------ classes and prior
    def _start_at_prior(self, classes):
        """Set the intercepts of ``classes`` to their log prior frequency
        (``_class_prior.start_at_prior`` of ``class_count_``)."""
        start_at_prior(
            self._state.intercept,
            self.class_count_,
            self._max_row_weight,
            classes,
        )

    def _prior_frequencies(self, classes=None):
        """``prior_frequencies`` of the estimator's counts."""
        return prior_frequencies(
            self.class_count_, self._max_row_weight, classes
        )

    def _grow_classes(self, n_old, n_new):
        """Grow the model from ``n_old`` to ``n_new`` classes (new rows of
        W zero); the sampler's table is rebuilt from the new counts."""
        self.class_count_ = grow_per_class(
            self.class_count_, n_old, n_new, 0.0, name="class_count_"
        )
        self._state.grow(n_old, n_new)
        self._class_count_version = next_count_version()
        self._expose()

    def _start_new_classes(self, classes):
        """Intercepts of the classes just added: the class-prior start's,
        from the counts so far, in the running mean as well."""
        if self.fit_intercept:
            self._start_at_prior(classes)
        if self._state.averaging is not None:
            self._state.averaging.start_classes(
                classes, self._state.intercept
            )

    def _sampler_table(self):
        """The 'frequency' sampler's alias table of the current counts
        (``ClassSampler.refresh``); None for uniform draws."""
        if not self._takes("sampler") or self.sampler == "uniform":
            return None
        return self._state.sampler.refresh(
            self.class_count_, self._class_count_version, self.sampler_power
        )

    def _distinct_draw_limit(self):
        """The most classes one step can draw when ``n_sampled_classes``
        counts distinct classes (drawn without replacement); None when it
        counts draws with replacement, which any number can be."""
        return None

    def _n_sampled_used(self):
        """``n_sampled_classes`` as the kernel uses it: at most the
        distinct-draw limit."""
        return n_sampled_used(
            self.n_sampled_classes, self._distinct_draw_limit()
        )

    # ------------------------------------------------------- the epochs
    def _schedule(self):
        """The learning-rate schedule of ``self.learning_rate`` (a hook for
        methods with schedules of their own)."""
        return SCHEDULES[self.learning_rate]

    def _uses_adagrad(self):
        """Per-feature steps (``learning_rate='adagrad'`` of the
        double-sum methods)."""
        return False

    def _solver_options(self, eta0=None, n_threads=None):
        """The parameters every ``SGDSolver`` takes, from the estimator's
        (``eta0`` default ``eta0_``, ``n_threads`` the training threads)."""
        options = {
            "n_classes": self.classes_.shape[0],
            "eta0": self.eta0_ if eta0 is None else eta0,
            "schedule_code": self._schedule().code,
            "power_t": self.power_t,
            "alpha": self.alpha,
            "fit_intercept": self.fit_intercept,
            "shuffle": self.shuffle,
            "n_threads": (
                training_threads(self) if n_threads is None else n_threads
            ),
            "adagrad": self._uses_adagrad(),
        }
        if self._takes("sampler"):
            options["sampler"] = self.sampler
            options["sampler_power"] = self.sampler_power
        return options

    def _epoch(self, dataset, weights, y_enc, row_state, order, first_visit):
        """Run one epoch of the solver on the state, then record and report
        it (``_epochs.record_epoch``); a divergence drops the model."""
        eta_epoch = self._schedule().eta_for_epoch(
            self.eta0_, self.decay, self._n_epochs
        )
        start = time.perf_counter()
        try:
            solver = self._make_solver()
            self._sampler_table()  # the kernel's table follows the counts
            state = self._state
            try:
                obj_sum, weight_sum = solver.epoch(
                    state, dataset, weights, y_enc, row_state, order,
                    eta_epoch, first_visit,
                )
            except EpochDiverged as exc:
                raise DivergenceError(
                    divergence_message(self, exc.what, exc.row, exc.value)
                )
        except DivergenceError:
            for attr in _MODEL_ATTRIBUTES:
                self.__dict__.pop(attr, None)
            raise
        self.t_ = state.t
        self._after_epoch(solver)
        seconds = time.perf_counter() - start
        return record_epoch(
            self, obj_sum, weight_sum, weights.sq_norm, seconds,
            dataset.n_samples,
        )

    def _after_epoch(self, solver):
        """Copy what the solver reports of its last epoch (a hook)."""

    def _verbose_extra(self):
        return ""

    def _divergence_hint(self):
        return ""

    def _pilot_setup(self):
        """The pilot's copy of what it needs (``PilotSetup``)."""
        return PilotSetup(
            type(self).__name__,
            self._make_solver(eta0=self.eta0_, n_threads=1),
            self._schedule(),
            self.decay,
            self.random_state,
            self.class_count_.copy(),
            self._max_row_weight,
        )

    def _warn_if_runaway(self, X, y_enc, sample_weight):
        """``_runaway.warn_if_runaway`` of this model."""
        warn_if_runaway(self, X, y_enc, sample_weight)


class DoubleSumSoftmaxClassifier(BaseSoftmaxClassifier):
    """Base of the methods on the double-sum softmax (Fagan & Iyengar 2018).

    They keep one float64 variable u_i per training row (the row's
    log-normaliser in eq. 5), aligned with the rows of the current fit,
    draw ``n_sampled_classes`` classes per step by ``sampler``, take
    ``average`` and per-feature steps (``learning_rate='adagrad'``), run
    lock-free on ``n_jobs`` threads and choose an 'auto' step by the
    pilot.
    """

    _eta0_pilot = True
    _threaded_epochs = True

    _parameter_constraints: dict = {
        **BaseSoftmaxClassifier._parameter_constraints,
        "n_sampled_classes": [Interval(Integral, 1, None, closed="left")],
        **SAMPLER_CONSTRAINTS,
        **AVERAGE_CONSTRAINTS,
        **ADAGRAD_CONSTRAINTS,
    }

    def _new_row_state(self, n_rows):
        return np.zeros(n_rows, dtype=np.float64)

    def _schedule(self):
        return PER_FEATURE_SCHEDULES[self.learning_rate]

    def _uses_adagrad(self):
        return self.learning_rate == ADAGRAD

    def _check_dataset(self, dataset):
        check_adagrad_average(self.learning_rate, self.alpha, self.average)
