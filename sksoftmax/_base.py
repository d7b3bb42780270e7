"""The scikit-learn contract shared by every sksoftmax classifier.

:class:`BaseSoftmaxClassifier` holds validation, label encoding, the epoch
loop (learning-rate schedules, stopping rules, verbose output, divergence
reports), ``partial_fit`` bookkeeping and exact, memory-bounded prediction.
A method supplies only its per-epoch Cython kernel through
``_run_epoch`` (and, if it keeps per-row state, ``_new_row_state``).
"""

import time
import uuid
import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import StratifiedShuffleSplit
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import (
    check_classification_targets,
    unique_labels,
)
from sklearn.utils.validation import (
    _check_sample_weight,
    validate_data,
)

from ._class_weight import (
    CLASS_WEIGHT_CONSTRAINTS,
    weigh_fit_rows,
    weigh_stream_rows,
)
from ._eta0_pilot import pilot_eta0
from ._new_classes import (
    append_classes,
    check_label_kind,
    check_one_type,
    encode_with_lookup,
    per_class_grow,
    stream_labels,
)
from ._prediction import SoftmaxPredictionMixin
from ._sgd_schedule import SCHEDULES
from ._shared._dataset import make_dataset
from ._shared._random import RandomState
from ._shared._weight_matrix import make_weight_matrix
from .exceptions import DivergenceError


def _check_targets(y):
    """scikit-learn's target check, without its many-classes warning.

    scikit-learn warns when there are more distinct labels than half the
    rows ("y could represent a regression problem"): problems with that
    many classes are what this package is for.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore",
            message="The number of unique classes is greater than",
            category=UserWarning,
        )
        check_classification_targets(y)


def _encode_labels(y):
    """``(classes, y_enc)``: the sorted distinct labels and each row's
    index into them (intp), as ``np.unique`` then ``np.searchsorted``.

    Non-negative integer labels no larger than a few times the number of
    rows (class codes, token ids) are counted instead of sorted: O(n + max
    label) against O(n log n), 0.6 s less on 3.4 million rows.
    """
    y = np.asarray(y)
    n = y.shape[0]
    if y.dtype.kind in "iu" and n and y.min() >= 0 and y.max() < 4 * n + 1024:
        present = np.bincount(y) > 0
        classes = np.flatnonzero(present).astype(y.dtype)
        code = np.cumsum(present, dtype=np.intp) - 1
        return classes, code[y]
    classes = np.unique(y)
    return classes, np.searchsorted(classes, y).astype(np.intp)


def _check_partial_fit_first_call(clf, classes):
    """scikit-learn's check of ``classes`` in partial_fit, in O(K log K).

    Same rules and messages as
    ``sklearn.utils.multiclass._check_partial_fit_first_call``, whose
    ``unique_labels`` runs a Python generator over the labels (0.13 s per
    call at 100,000 classes); numeric and string labels go through
    ``np.unique`` instead, other labels (object arrays) through
    scikit-learn's function, which also rejects mixed types.
    Returns True on the call that sets ``classes_``.
    """
    seen = getattr(clf, "classes_", None)
    if seen is None and classes is None:
        raise ValueError("classes must be passed on the first call to partial_fit.")
    if classes is None:
        return False
    if (
        isinstance(classes, np.ndarray)
        and classes.ndim == 1
        and classes.dtype.kind in "iufbUS"
    ):
        # one dtype: no mix of label types to reject
        labels = np.unique(classes)
    else:
        labels = unique_labels(classes)
    if seen is not None:
        if not np.array_equal(seen, labels):
            raise ValueError(
                f"`classes={classes!r}` is not the same as on last call to "
                f"partial_fit, was: {seen!r}"
            )
        return False
    clf.classes_ = labels
    return True


def _canonical_csr(X):
    """X itself when it is dense or canonical CSR; else a canonical copy.

    A caller's matrix is never modified. scipy sorts the indices and sums
    the duplicates of a non-canonical CSR matrix in place, not only in
    ``sum_duplicates`` but in operations that look read-only (``abs(X)``,
    ``X.max()``, comparisons, ``count_nonzero``): fit once left a
    caller's unsorted or duplicated matrix sorted and summed through
    ``abs(X)`` in ``_row_l1_norms``. So the training paths canonicalise
    here, once, on a copy, and then see only canonical rows: duplicates
    mean their sum (scipy's semantics) and the model is the one fitted on
    the canonical form, bit for bit. A canonical matrix, the usual case,
    is used as it is, with no copy (``has_canonical_format`` reads the
    arrays once, O(nnz), and caches the flag on the matrix).
    """
    if sp.issparse(X) and not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return X


def _prior_pseudo_weight(counts, largest):
    """The weight of the class prior's pseudo-row: the largest row weight
    ``largest``, or the smallest positive class total when that is less.

    Spread over the K classes, the pseudo-row gives a class without rows
    a small, finite intercept. The largest row weight (not the mean) keeps
    rows of zero weight, or of a tiny one, without effect; the cap keeps
    it from swamping light classes: under class weights of 1000 and 1e-4
    a pseudo-row of weight 1000 gave the light classes a prior of 1%, where
    the weighted objective's optimum with W = 0 gives them 1e-7. Without
    weights both are at least 1: the pseudo-row weighs 1. O(K).
    """
    positive = counts[counts > 0]
    if positive.size == 0:
        return largest
    return min(largest, float(positive.min()))


# The rows per class at which a step measured on short runs is right for an
# epoch (measured; see BaseSoftmaxClassifier._horizon_factor).
ROWS_PER_CLASS_REF = 50.0

# Dropped after a divergence, so that no prediction uses the broken state.
_MODEL_ATTRIBUTES = (
    "coef_",
    "intercept_",
    "classes_",
    "n_iter_",
    "t_",
    "loss_curve_",
    "_row_state",
    # iterate averaging (_averaging.AveragingMixin)
    "_standard_coef",
    "_standard_intercept",
    "_average_coef",
    "_average_intercept",
    "_average_count",
    # per-feature steps (_adagrad_state.AdaGradMixin)
    "_adagrad_sq_grad",
    "_adagrad_sq_grad_intercept",
)


def _row_l1_norms(X):
    """||x_i||_1 of every row of X (CSR or dense), without an |X| copy of
    a dense X (blocks of rows)."""
    if sp.issparse(X):
        return np.asarray(abs(X).sum(axis=1), dtype=np.float64).ravel()
    out = np.empty(X.shape[0])
    for lo in range(0, X.shape[0], 4096):
        out[lo : lo + 4096] = np.abs(X[lo : lo + 4096]).sum(axis=1)
    return out


def _row_norm_stats(dataset, X):
    """(sum_i s_i ||x_i||^2, sum_i s_i, rows, sum_i s_i ||x_i||_1) of a
    dataset and its X, for the 'auto' rules."""
    w = dataset.weights
    return np.array(
        [
            float(w @ dataset.row_sq_norms),
            float(w.sum()),
            dataset.n_samples,
            float(w @ _row_l1_norms(X)),
        ]
    )


class BaseSoftmaxClassifier(
    SoftmaxPredictionMixin, ClassifierMixin, BaseEstimator
):
    """Base class of the sksoftmax linear classifiers (not for direct use).

    Subclasses implement ``_run_epoch(dataset, weights, y, row_state,
    eta_epoch, t, first_visit)`` returning ``(objective_sum, weight_sum, t)``
    and raising :class:`~sksoftmax.exceptions.DivergenceError` through
    ``_raise_divergence``.
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
                    n_bad = n_bad + 1 if monitored > best - self.tol else 0
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
        if allow_new:
            check_one_type(y)
        if first or y.dtype.kind not in "iub":
            # integer labels are class labels whatever their values (and
            # scikit-learn's check, np.unique over y, costs more the more
            # distinct labels a batch has)
            _check_targets(y)
        extra_classes = None
        if first and classes is None:
            # allow_new_classes: the first batch's labels are the classes
            classes = y
        if allow_new and not first:
            # later calls' classes only add labels (see allow_new_classes)
            extra_classes = classes
        else:
            _check_partial_fit_first_call(self, classes)
        if self.classes_.shape[0] < 2:
            if first:
                self.__dict__.pop("_class_lookup", None)
            raise ValueError(
                f"classes must hold at least 2 classes; got {self.classes_!r}."
            )
        if first:
            self._class_lookup = None
        check_label_kind(self.classes_, y, elementwise=allow_new)
        n_classes = self.classes_.shape[0]
        lookup = self.__dict__.get("_class_lookup")
        if lookup is not None:
            # classes_ grew out of order (allow_new_classes)
            y_enc, known = encode_with_lookup(lookup, y)
        elif (
            y.dtype.kind in "iu"
            and self.classes_.dtype.kind in "iu"
            and self.classes_[0] == 0
            and self.classes_[-1] == n_classes - 1
        ):
            # classes_ is 0..K-1 (sorted and distinct): a label is its own
            # code, O(n) (the binary search below took 0.28 ms of a 4.5 ms
            # call of 1,000 rows at K = 100,000, measured)
            y_enc = y.astype(np.intp, copy=False)
            known = (y_enc >= 0) & (y_enc < n_classes)
        else:
            # O(n log K) against the sorted classes_, no pass over all
            # classes (np.setdiff1d sorted all K of them on every call:
            # 0.02 s of a 0.023 s call of 100 rows at K = 100,000)
            y_enc = np.searchsorted(self.classes_, y)
            known = y_enc < n_classes
            known[known] = self.classes_[y_enc[known]] == y[known]
        added = None
        if allow_new:
            y_enc, added = stream_labels(
                self, y, y_enc, known, extra_classes
            )
        elif not known.all():
            unknown = np.unique(y[~known])
            raise ValueError(
                f"y contains labels not in classes {self.classes_!r}: "
                f"{unknown[:10]!r}."
            )
        y_enc = y_enc.astype(np.intp, copy=False)
        sample_weight = _check_sample_weight(
            sample_weight,
            X,
            dtype=np.float64,
            ensure_non_negative=True,
            copy=True,
            allow_all_zero_weights=True,
        )
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
        calls = self._n_epochs
        if calls & (calls - 1) == 0:
            self._warn_if_runaway(X, y_enc, sample_weight)
        return self

    # ---------------------------------------------------- new classes
    def _allow_new_classes(self):
        """``allow_new_classes``, refused by methods whose state cannot
        grow (``_new_classes_refusal``)."""
        allow = bool(getattr(self, "allow_new_classes", False))
        reason = self._new_classes_refusal() if allow else None
        if reason:
            raise ValueError(
                f"{type(self).__name__} does not support "
                f"allow_new_classes=True: {reason}"
            )
        return allow

    def _new_classes_refusal(self):
        """Why this method's state cannot grow by classes (None: it can)."""
        return None

    def _per_class_arrays(self):
        """(attribute, fill, entries per class) of every array whose
        leading axis runs over the classes (see ``_new_classes``)."""
        return [
            ("coef_", 0, 1),
            ("intercept_", 0, 1),
            ("class_count_", 0.0, 1),
        ]

    def _grow_classes(self, n_old, n_new):
        """Grow the state from ``n_old`` to ``n_new`` classes (new rows of
        W zero); the sampler's table is rebuilt from the new counts."""
        per_class_grow(self, n_old, n_new)
        self._class_count_version = self._next_count_version()

    def _start_new_classes(self, classes):
        """Intercepts of the classes just added: the class-prior start's
        (``_start_at_prior``), from the counts so far."""
        if self.fit_intercept:
            self._start_at_prior(classes)

    # ---------------------------------------------------------- the epoch
    def _weight_matrix(self, fresh, **average):
        """Wrap coef_ / intercept_ (no copy) for the kernels.

        ||W||^2 is needed only for the penalty (alpha > 0); computing it is
        O(K D), so it is skipped when W is known to be zero or unused.
        ``average``: the averaging arguments of ``make_weight_matrix``
        (``_averaging.AveragingMixin``).
        """
        sq_norm = None if (not fresh and self.alpha > 0) else 0.0
        return make_weight_matrix(
            self.coef_, self.intercept_, sq_norm, **average
        )

    def _fold_weights(self, weights):
        """Write the true W into coef_ (a hook for iterate averaging)."""
        weights.fold_scale()

    def _raw_weights(self):
        """(W, b) that the steps continue from: coef_, intercept_ here;
        the iterate kept apart when coef_ is an average."""
        return self.coef_, self.intercept_

    def _epoch(self, dataset, weights, y_enc, row_state, order, first_visit):
        """Run one kernel epoch, then record and report it."""
        eta_epoch = self._schedule().eta_for_epoch(
            self.eta0_, self.decay, self._n_epochs
        )
        start = time.perf_counter()
        try:
            obj_sum, weight_sum, self.t_ = self._run_epoch(
                dataset,
                weights,
                y_enc,
                row_state,
                order,
                eta_epoch,
                self.t_,
                first_visit,
            )
        except DivergenceError:
            for attr in _MODEL_ATTRIBUTES:
                self.__dict__.pop(attr, None)
            raise
        seconds = time.perf_counter() - start
        self._n_epochs += 1
        penalty = 0.5 * self.alpha * weights.sq_norm
        objective = (
            obj_sum / weight_sum + penalty if weight_sum > 0 else np.nan
        )
        self.loss_curve_.append(objective)
        if self.verbose:
            rate = dataset.n_samples / seconds if seconds > 0 else np.inf
            print(
                f"Epoch {self._n_epochs}: {seconds:.4f} s, objective "
                f"estimate {objective:.6f}, {rate:,.0f} rows/s"
                + self._verbose_extra()
            )
        return objective

    # Methods whose 'auto' step is chosen by the pilot of _eta0_pilot.py
    # (their right step depends on how the model's probability mass
    # spreads over the sampled classes, which no closed form knows).
    _eta0_pilot = False

    def _set_eta0(self, X, y_enc, sample_weight, keep_pilot):
        """Set ``eta0_`` (and, for piloted methods, ``eta0_trials_``).

        A piloted 'auto' step is chosen once, on the first fit or
        partial_fit call with enough rows, and kept by warm starts and
        later partial_fit calls (trials on a model that has trained
        already would start from the wrong point); until then, and for the
        other methods, the closed-form rule follows the rows seen.
        """
        piloted = self.eta0 == "auto" and self._eta0_pilot
        if piloted and keep_pilot and getattr(self, "_eta0_piloted", False):
            return
        self.eta0_ = self._resolve_eta0()
        self._eta0_piloted = False
        if not piloted:
            return
        self.eta0_trials_ = None
        rule = self.eta0_
        eta0, trials = pilot_eta0(self, X, y_enc, sample_weight, rule)
        if trials is None:
            return
        self.eta0_ = float(eta0) * self._pilot_step_factor()
        self.eta0_trials_ = trials
        self._eta0_piloted = True
        if self.verbose:
            tried = "; ".join(
                f"{int(n)} rows: "
                + ", ".join(
                    f"{e:.3g}: {v:.4g}" for e, v, m in trials if m == n
                )
                for n in dict.fromkeys(trials[:, 2])
            )
            print(
                f"eta0='auto': closed-form rule {rule:.3g}; pilot held-out "
                f"log-loss {{{tried}}}; using eta0_={self.eta0_:.3g}"
                f" (best trial {float(eta0):.3g})"
            )

    def _resolve_eta0(self):
        """The initial step: ``eta0`` as given, or the 'auto' rule."""
        if isinstance(self.eta0, str):
            curvature = self._mean_row_curvature() * self._mean_row_weight()
            return float(self._auto_eta0(curvature))
        return float(self.eta0)

    def _mean_row_weight(self):
        """Mean row weight over the rows seen (1 without weights, and with
        class_weight='balanced').

        A row's step is eta times its weight, so the expected step of an
        epoch is this mean times the gradient of the weighted-mean
        objective: the 'auto' rules, set for rows of weight 1, are divided
        by it, and scaling every weight by c leaves the steps eta s_i as
        they were (class weights of 1000 and 1e-4, scikit-learn's
        check_class_weight_classifiers, made them 300 times too large).
        """
        weight_sum, n_rows = self._row_norm_stats[1:3]
        return weight_sum / n_rows if weight_sum > 0 else 1.0

    def _mean_row_curvature(self):
        """Weighted mean of ||x_i||^2 + [fit_intercept] over the rows seen.

        A step of size eta on a row's score moves that score by eta times
        this much: the scale every 'auto' rule divides by.
        """
        sq_sum, weight_sum = self._row_norm_stats[:2]
        mean_sq = sq_sum / weight_sum if weight_sum > 0 else 0.0
        return mean_sq + float(self.fit_intercept)

    def _mean_row_l1(self):
        """Weighted mean of ||x_i||_1 + [fit_intercept] over the rows seen:
        how far a row's score moves when every coordinate of its class's
        [w | b] moves by one (sign-like per-coordinate steps)."""
        weight_sum, l1_sum = self._row_norm_stats[[1, 3]]
        mean_l1 = l1_sum / weight_sum if weight_sum > 0 else 0.0
        return mean_l1 + float(self.fit_intercept)

    def _horizon_factor(self):
        """sqrt(ROWS_PER_CLASS_REF / r), r = n / K the rows per class seen
        (n the rows of ``fit`` or all rows seen by ``partial_fit``; r at
        least 1).

        A class's row of W moves in the steps that involve the class, about
        r of them per epoch (fewer for a rare class, more for a frequent
        one), and the best constant step of T steps of SGD on a convex loss
        scales as 1 / sqrt(T) (the optimisation error ~ 1 / (eta T) against
        the noise ~ eta sigma^2). A step that is right at
        ROWS_PER_CLASS_REF rows per class is therefore sqrt(50 / r) times
        the right one at r. 50 is measured with SCENT (the rows per class
        at which its 2 B / c was the best of a grid: Bibtex, 31; the
        Zipfian sets, 4.3, wanted larger steps and the tokens task, 397,
        smaller ones; see SCENTClassifier's eta0).
        """
        n_rows = max(self._row_norm_stats[2], 1.0)
        per_class = max(n_rows / self.classes_.shape[0], 1.0)
        return float(np.sqrt(ROWS_PER_CLASS_REF / per_class))

    def _pilot_step_factor(self):
        """min(1, horizon factor): what the pilot's best trial is multiplied
        by.

        The pilot's stages end at an eighth of the rows, at most 131,072
        (two passes: about 2 * 131,072 / K visits per class), and at many
        rows per class a whole epoch runs far longer than that; the noise
        of a constant step, which grows with it, then costs more than the
        trials show. On the 10,000-class tokens task (397 rows per class)
        U-max's last stage kept 3.3e-4, ahead of 1.1e-4 by 1.5% held-out
        (5%, 3.7% at the stages before: the margin shrinks with the
        rows), while ten epochs on all rows gave 2.592 at 3.3e-4, 2.438 at
        1.9e-4, 2.434 at 1e-4 and 2.471 at 5.5e-5; Implicit SGD's stages
        kept 2.5e-3 (2.561) where 1e-3 gave 2.468. The horizon factor
        sqrt(50 / 397) = 0.35 moves both to those best steps. It is one-
        sided: below 50 rows per class a class's row moves too few times
        for the noise to dominate, the trials' ranking already holds the
        bias that small steps pay (on the Zipfian sets with 4.3 rows per
        class the whole fit wanted the pilot's step or a larger one, and
        a step 3x smaller cost U-max 10% there), and the stages only walk
        down.
        """
        return min(1.0, self._horizon_factor())

    def _auto_eta0(self, curvature):
        """eta0 of the 'auto' rule, given the mean row curvature.

        Each method overrides this with the rule derived in its docstring.
        """
        raise NotImplementedError

    def _schedule(self):
        """The learning-rate schedule of ``self.learning_rate``.

        A hook for methods with schedules of their own; the default is the
        package's table ``SCHEDULES``.
        """
        return SCHEDULES[self.learning_rate]

    def _verbose_extra(self):
        return ""

    def _raise_divergence(self, what, row, value):
        raise DivergenceError(
            f"{type(self).__name__} diverged in epoch {self._n_epochs + 1} "
            f"at row {row}: {what} (value {value:.6g}). The step size is too "
            f"large for this problem: lower eta0 (now {self.eta0_:g}"
            + (", chosen by eta0='auto'" if self.eta0 == "auto" else "")
            + ")"
            + self._divergence_hint()
            + "."
        )

    def _divergence_hint(self):
        return ""

    # -------------------------------------------------------- state helpers
    @staticmethod
    def _next_count_version():
        """A random 122-bit number for each change of ``class_count_``:
        the class sampler rebuilds its table when it changes. Random, not
        a counter, so that it cannot repeat across estimators nor across
        processes (an unpickled cache must not match a later change)."""
        return uuid.uuid4().int

    def _plan(self, n_samples, n_features):
        """Choose the form of the state before ``_init_state`` allocates it
        (a hook: the bound method sizes its curvature here)."""

    def _init_state(self, n_features, dtype):
        n_classes = self.classes_.shape[0]
        # Written, not calloc'ed: lazily mapped zero pages would fault one by
        # one during the epochs whenever a class is first drawn, which makes
        # epochs with many classes slow and their timing erratic.
        self.coef_ = np.empty((n_classes, n_features), dtype=dtype)
        self.coef_.fill(0)
        self.intercept_ = np.zeros(n_classes, dtype=dtype)
        self.__dict__.pop("_row_state", None)

    def _start_at_prior(self, classes):
        """Set the intercepts of ``classes`` to their log prior frequency.

        With coef_ at zero this is the class-prior model, the best model
        without features: an epoch starts there rather than at the uniform
        model, whose log-loss, log K, is far worse when the class
        frequencies are skewed (tags, tokens, products). The frequencies
        are the weighted counts ``class_count_`` (sample weights times
        class weights: the optimum of the weighted objective with W = 0)
        plus one pseudo-row of weight w spread evenly over the classes,
        p_k = (c_k + w / K) / (C + w) with C the total weight, so that a
        class not seen yet gets a small, finite intercept; w is the
        largest row weight, at most the smallest positive class total
        (``_prior_pseudo_weight``).
        """
        if classes.size == 0 or self.class_count_.sum() <= 0:
            return
        intercept = self._raw_weights()[1]
        intercept[classes] = np.log(self._prior_frequencies(classes))

    # Rows of the runaway check, and its budget of (row, class) terms: a
    # method whose probabilities cost more per term (A&R's quadrature)
    # raises _proba_cost and checks fewer rows.
    RUNAWAY_ROWS = 256
    RUNAWAY_TERMS = 2**24
    _proba_cost = 1

    def _warn_if_runaway(self, X, y_enc, sample_weight):
        """ConvergenceWarning if the model just fitted is far worse than the
        class prior on (a sample of) its own training rows.

        A step size far too large does not always overflow: the five
        estimators that took eta0 = 1e6 on a small problem returned
        coef_ near 3e6 and log-losses of 1e5 to 1e6 without a word, and
        Implicit SGD, whose step cannot overshoot, returned 12.2 against
        the prior's 1.39. Each method's own running estimate cannot tell
        (Implicit SGD's was 0.0 there), so this is the exact log-loss of up
        to RUNAWAY_ROWS training rows of positive weight (evenly spaced,
        no random draw; fewer at many classes, at most RUNAWAY_TERMS
        row x class x (nonzeros + 1) terms, at least 16 rows), against the
        class-prior model's log-loss on the same rows. It warns when the
        model's exceeds the prior's by more than the prior's own value plus
        one nat (twice the prior plus one): a wide margin, which a model
        that learned anything is far below, and which the runaway fits
        above were far above.
        Cost: one exact evaluation of at most 256 rows per ``fit`` call,
        on the columns those rows use; ``partial_fit`` checks its calls
        1, 2, 4, 8, ... only (counted by ``_n_epochs``).
        """
        rows = np.flatnonzero(sample_weight > 0)
        if rows.size == 0:
            return
        n_classes = self.classes_.shape[0]
        # the rows' used columns of W are gathered for all classes: the
        # budget counts (row, nonzero, class) terms
        per_row = n_classes * self._proba_cost * (
            1 + (X.nnz / max(X.shape[0], 1) if sp.issparse(X) else X.shape[1])
        )
        budget = int(self.RUNAWAY_TERMS // per_row)
        n_rows = int(min(self.RUNAWAY_ROWS, max(16, budget)))
        if rows.size > n_rows:
            rows = rows[np.linspace(0, rows.size - 1, n_rows).astype(np.intp)]
        w = sample_weight[rows]
        y_rows = y_enc[rows]
        with np.errstate(all="ignore"):
            # the prediction path's exact log-loss (a blocked kernel at the
            # softmax link): no (rows, K) array, no copy of W's columns
            model = self._log_loss(X[rows], y_rows, w)
        if not np.isfinite(model):
            model = np.inf
        prior = float(-np.log(self._prior_frequencies()[y_rows]) @ w / w.sum())
        if model <= 2.0 * prior + 1.0:
            return
        hint = (
            "eta0='auto' chose it from the data, but these data want a "
            "smaller one: set eta0"
            if isinstance(self.eta0, str)
            else "try eta0='auto', or an eta0"
        )
        warnings.warn(
            f"{type(self).__name__}: on {rows.size} of its training rows the "
            f"fitted model's log-loss is {model:.4g}, against {prior:.4g} "
            "for the class-prior model: the step size is probably far too "
            f"large (eta0_={self.eta0_:.3g}); {hint} 10 to 1000 times "
            "smaller.",
            ConvergenceWarning,
        )

    def _prior_frequencies(self, classes=None):
        """p_k = (c_k + w / K) / (C + w) of ``_start_at_prior``, for
        ``classes`` (indices; None: all), O(len(classes)) beyond the sum."""
        counts = self.class_count_
        pseudo = _prior_pseudo_weight(counts, self._max_row_weight)
        chosen = counts if classes is None else counts[classes]
        return (chosen + pseudo / counts.shape[0]) / (counts.sum() + pseudo)

    def _adopt_dtype(self, dtype):
        # a warm start keeps the previous solution but the dtype of the data
        self.coef_ = np.ascontiguousarray(self.coef_, dtype=dtype)
        self.intercept_ = np.ascontiguousarray(self.intercept_, dtype=dtype)

    def _new_row_state(self, n_rows):
        return None

    def _check_dataset(self, dataset):
        """Method-specific checks of the training rows (default: none)."""

    def _distinct_draw_limit(self):
        """The most classes one step can draw when ``n_sampled_classes``
        counts distinct classes (drawn without replacement); None when it
        counts draws with replacement, which any number can be."""
        return None

    def _n_sampled_used(self):
        """``n_sampled_classes`` as the kernel uses it: at most the
        distinct-draw limit."""
        limit = self._distinct_draw_limit()
        m = self.n_sampled_classes
        return m if limit is None else min(m, limit)

    def _check_n_sampled_classes(self):
        """The package's one rule for ``n_sampled_classes``.

        A sampler that draws with replacement takes any number. One that
        draws distinct classes can draw at most the classes available (the
        K - 1 other than a row's own, or all K for draws shared by a
        minibatch): a larger int is lowered to that number, which uses
        every class (the sampled sum becomes the exact one), with a
        UserWarning, rather than a ValueError, so that a grid over
        n_sampled_classes or a default of 5 on a three-class problem still
        fits. The value used is ``n_sampled_classes_``.
        """
        if "n_sampled_classes" not in self.get_params(deep=False):
            return
        limit = self._distinct_draw_limit()
        m = self.n_sampled_classes
        if limit is not None and not isinstance(m, str) and m > limit:
            warnings.warn(
                f"{type(self).__name__}: n_sampled_classes={m} is more than "
                f"the {limit} classes a step can draw without replacement "
                f"here; using {limit} (every class: the sampled sum is "
                "then exact).",
                UserWarning,
            )
        self.n_sampled_classes_ = int(self._n_sampled_used())

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

    # ----------------------------------------------------------- threads
    # Methods whose epochs run on n_jobs threads (U-max, Implicit SGD and
    # the sampled baselines lock-free, _hogwild.pxd; augment and reduce
    # inside each minibatch)
    _threaded_epochs = False

    def _training_threads(self):
        """Threads of the training epochs: ``_n_threads()`` for a method
        with threaded epochs, one otherwise.

        learning_rate='adagrad' keeps its per-row step state in one
        object, so its epochs run on one thread; asking for more then
        warns (once per fit or partial_fit call) rather than running
        slower than asked without a word.
        """
        n_threads = self._n_threads()
        if not self._threaded_epochs or n_threads == 1:
            return 1
        uses_adagrad = getattr(self, "_uses_adagrad", None)
        if uses_adagrad is not None and uses_adagrad():
            if not getattr(self, "_adagrad_thread_warned", False):
                warnings.warn(
                    "learning_rate='adagrad' trains on one thread: its "
                    "per-row step state is not shared between threads; "
                    f"n_jobs={self.n_jobs} applies to prediction only.",
                    UserWarning,
                )
                self._adagrad_thread_warned = True
            return 1
        return n_threads


class DoubleSumSoftmaxClassifier(BaseSoftmaxClassifier):
    """Base of the methods on the double-sum softmax (Fagan & Iyengar 2018).

    They keep one float64 variable u_i per training row (the row's
    log-normaliser in eq. 5), aligned with the rows of the current fit.
    """

    def _new_row_state(self, n_rows):
        return np.zeros(n_rows, dtype=np.float64)
