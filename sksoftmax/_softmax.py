"""SoftmaxClassifier: the softmax model behind one estimator.

The front door of the package, as ``LogisticRegression`` is scikit-learn's:
one model (the multinomial logit), ``solver=`` to choose how it is fitted,
and defaults that adapt to the data seen while fitting rather than
constants tuned on benchmark sets:

- the solver: full-batch L-BFGS along a held-out path of L2 penalties
  where the whole problem is small (``_full_batch.py``), the exact
  gradient where a row's K x nnz multiply-adds are few enough, otherwise
  a sampled-class solver (``_solver_choice.py``);
- the step of the exact solver: per-feature AdaGrad-norm steps (the update
  of a feature's K weights is invariant to the feature's scale), their one
  scale ``eta`` picked by a short pilot on progressive (not yet trained
  on) rows (``_step_pilot.py``), then halved whenever an epoch is undone;
  with held-out rows, raced against one constant step for every weight,
  whose phase starts at its pilot's step scaled to the phase's horizon
  (``_step_rule_race.py``);
- stopping: exact log-loss on held-out rows after every epoch; an epoch
  worse than the best beyond the held-out rows' noise is undone (the
  state restored from the best epoch) and retried with half the step;
  a constant-step (sampled) solver whose phase improved on every earlier
  one then starts again from the start at half the step;
  after ``n_iter_no_change`` epochs without improvement the kept epochs
  are replayed, with their steps, on every row (the held-out rows
  included) (``_descent.py``).

This module holds the estimator: its parameters and docstring, ``fit``
and ``partial_fit`` as sequences of those steps, and the small hooks the
steps call back (``_held_out_losses``, ``_order``, ``_divergence``). The
steps take the estimator as their first argument: the held-out rows
(``_held_out.py``), dense rows centred (``_centring.py``), the 'lbfgs'
path (``_full_batch_fit.py``), partial_fit's passes (``_partial_fit.py``).
The rule is explained in the user guide
(``doc/user_guide/softmax_classifier.rst``); the figures behind its
defaults are in ``benchmarks/results/`` (``defaults_summary.md``).
"""

import time
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import _check_sample_weight, validate_data

from ._base import _canonical_csr, _check_targets, _encode_labels
from ._centring import centred, column_shift, shift_intercepts
from ._class_weight import (
    CLASS_WEIGHT_CONSTRAINTS,
    weigh_fit_rows,
    weigh_stream_rows,
)
from ._descent import descend, refit_and_blend
from ._docstrings import fill_doc
from ._full_batch_fit import fit_full_batch
from ._held_out import fit_rows, refits
from ._labels import encode_batch
from ._new_classes import append_classes
from ._partial_fit import count_batch, start_stream, stream_pass
from ._prediction import SoftmaxPredictionMixin
from ._solver_choice import SOLVERS, choose_solver_verbosely, new_solver
from ._step_rule_race import race_step_rules, races_step_rules
from .exceptions import DivergenceError


@fill_doc
class SoftmaxClassifier(SoftmaxPredictionMixin, ClassifierMixin, BaseEstimator):
    """Multinomial logistic (softmax) regression for many classes.

    One estimator for the softmax model, fitted by the exact gradient or
    by one of the package's sampled-class solvers, with the step size,
    the number of epochs and (for the exact solver) the solver itself
    chosen from the data while fitting: nothing needs tuning. Returns
    exact probabilities over all classes and exact top-k.

    Read more in the :ref:`User Guide <softmax_classifier>`.

    Parameters
    ----------
    solver : {'auto', 'exact', 'lbfgs', 'umax', 'implicit', 'scent', \
'ar', 'bound'}, default='auto'
        How the model is fitted: 'exact', the full softmax gradient of
        every row (K x nnz multiply-adds) with per-feature adaptive steps
        or one constant step (``eta0``);
        'lbfgs', full-batch L-BFGS along a path of L2 penalties that the
        held-out rows choose (``fit`` only); or a sampled-class method,
        whose cost per row does not grow with K
        (:class:`UMaxSoftmaxClassifier`, :class:`ImplicitSGDClassifier`,
        :class:`SCENTClassifier`, :class:`ARSoftmaxClassifier`,
        :class:`StochasticBoundClassifier`). 'auto' takes 'lbfgs' for
        dense data (a quarter of the entries nonzero or more) while its
        penalty path costs at most 2e10 multiply-adds, else
        'exact' while a row costs at most 7.2e5 multiply-adds (5e5 for
        ``partial_fit``) and W fits in half the memory, else 'scent',
        with momentum off when W and its momentum, twice, do not (in
        ``solver_``; :ref:`softmax_decides`).
    eta0 : 'auto' or float, default='auto'
        Initial step. For 'exact', the scale of the per-feature steps
        (a feature's first update moves its K weights by eta0 in norm);
        'auto' picks it with a pilot on the first rows and, with held-out
        rows, races these steps against one constant step for every
        weight (``step_rule_``). For the other solvers, the expert
        estimator's own ``eta0``.
    alpha : float, default=0.0
        L2 penalty ``alpha / 2 ||coef_||^2`` added to the mean log-loss;
        the intercepts are not penalised. With ``early_stopping`` the
        held-out log-loss already regularises.
    %(max_iter)s
    tol : float or None, default=1e-3
        An epoch improves when the monitored loss (held-out log-loss
        with ``early_stopping``, else the training loss) falls below the
        best by more than ``tol`` times the best: a relative tolerance,
        the same on a loss of 0.02 as on one of 7 (the default chosen
        leave-one-dataset-out: benchmarks/results/loo_tol.md). 'lbfgs'
        stops at the
        gradient tolerance ``tol / 10``. None: run ``max_iter`` epochs.
    early_stopping : 'auto' or bool, default='auto'
        True: hold out ``validation_fraction`` of the rows, score the exact
        log-loss on them after every epoch, undo an epoch worse than the
        best beyond the noise of those rows and halve the step, stop
        after ``n_iter_no_change`` epochs without improvement (a sampled
        solver first starts again from the start at half the step while
        each such phase finds a new best beyond that noise:
        :ref:`restarts from the start <restarts-from-the-start>`);
        then fit
        again on every row along the kept epochs' steps (when more than
        1% of the rows were held out) and, for 'exact', average that
        model with the held-out phase's. 'auto': the same where the data
        has rows to hold out; on data that has none at the default
        ``validation_fraction`` (too few rows, or one row per class) fit
        without, with a warning, where True raises a ValueError.
    validation_fraction : float, default=0.1
        Share of the rows held out by ``early_stopping``, at most 10,000
        rows, and fewer at many classes with a sampled solver (their
        scoring costs at most half an epoch). The held-out rows are each
        class's share of its *last* rows in the order given, as the last
        fold of ``StratifiedKFold`` without shuffling: a random stratified
        draw on shuffled rows, the latest sources on rows grouped by
        source or time (shuffle X and y first for a random draw). Every
        class keeps a training row, as every test row's class has one
        (:ref:`the held-out rows <held-out-rows>`).
    n_iter_no_change : int, default=8
        Epochs without improvement before the fit stops (the default
        chosen leave-one-dataset-out:
        benchmarks/results/loo_n_iter_no_change.md).
    fit_intercept : bool, default=True
        Fit one intercept per class (started at the log class prior).
    shuffle : bool, default=True
        Visit the rows in a new random order every epoch.
    random_state : int, RandomState instance or None, default=None
        Seeds the split, the row orders and the sampled solvers.
    warm_start : bool, default=False
        Continue from the previous fit's model when the classes and
        features agree.
    n_jobs : int or None, default=None
        Threads for training (lock-free epochs) and prediction; -1: all.
    %(class_weight)s
    verbose : int, default=0
        Print the solver choice, the pilot, and one line per epoch with
        the held-out log-loss, the CPU time so far and what was decided.

    allow_new_classes : bool, default=False
        Let ``partial_fit`` add classes it has not seen (in ``y`` or
        ``classes``) instead of raising: the model grows by them, each
        starting at its class-prior intercept, and they are appended to
        ``classes_`` in order of arrival (see the user guide's streaming
        page). Not with ``solver='bound'`` (a ValueError).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (n_classes, n_features)
        A view of the solver's weights (no copy).
    intercept_ : ndarray of shape (n_classes,)
    solver_ : str
        The solver used.
    eta0_ : float
        The step in use at the end of the fit.
    step_rule_ : {'adagrad', 'constant'} or None
        'exact' only: the step rule of the model, per-feature AdaGrad or
        one constant step for every weight (``eta0='auto'`` races the two
        on the held-out rows; see the user guide's "The step rule: a race
        on the held-out rows");
        None for the other solvers.
    n_iter_ : int
        Epochs run by the last ``fit``, the step-rule race's and the
        refit's included (1 after ``partial_fit``); for 'lbfgs', the
        final fit's L-BFGS iterations (``max_iter`` caps each fit of the
        path).
    best_iter_ : int
        The held-out phase's epoch whose path was kept (counted as in
        ``n_iter_``).
    alpha_ : ndarray of shape (n_features,)
        'lbfgs' only: the per-feature L2 penalty of the final fit
        (``alpha`` plus the penalty the held-out rows chose).
    eta0_trials_ : ndarray of shape (n_trials, 2)
        The pilot's (step, progressive log-loss) pairs ('exact' with
        ``eta0='auto'``, when there were enough rows).
    loss_curve_ : list of float
        Per epoch, the solver's training-loss estimate (for 'exact', the
        progressive log-loss: each row scored before its update).
    validation_loss_ : list of float
        Per epoch, the held-out log-loss (``early_stopping``), the
        step-rule race's epochs after AdaGrad's.
    n_features_in_ : int

    See Also
    --------
    UMaxSoftmaxClassifier, SCENTClassifier, ImplicitSGDClassifier :
        The sampled-class solvers as estimators of their own.

    Examples
    --------
    >>> from sksoftmax import SoftmaxClassifier
    >>> from sksoftmax.datasets import make_softmax_classification
    >>> X, y = make_softmax_classification(
    ...     n_samples=2000, n_features=200, n_classes=50, random_state=0)
    >>> clf = SoftmaxClassifier(random_state=0).fit(X[:1500], y[:1500])
    >>> clf.solver_
    'exact'
    >>> bool(clf.log_loss(X[1500:], y[1500:]) < 3.0)
    True
    """

    _parameter_constraints: dict = {
        "solver": [StrOptions({"auto", *SOLVERS})],
        "eta0": [
            Interval(Real, 0, None, closed="neither"),
            StrOptions({"auto"}),
        ],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left"), None],
        "early_stopping": [StrOptions({"auto"}), "boolean"],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "fit_intercept": ["boolean"],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
        "warm_start": ["boolean"],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
        **CLASS_WEIGHT_CONSTRAINTS,
        "allow_new_classes": ["boolean"],
    }

    def __init__(
        self,
        *,
        solver="auto",
        eta0="auto",
        alpha=0.0,
        max_iter=100,
        tol=1e-3,
        early_stopping="auto",
        validation_fraction=0.1,
        n_iter_no_change=8,
        fit_intercept=True,
        shuffle=True,
        random_state=None,
        warm_start=False,
        n_jobs=None,
        verbose=0,
        class_weight=None,
        allow_new_classes=False,
    ):
        self.solver = solver
        self.eta0 = eta0
        self.alpha = alpha
        self.max_iter = max_iter
        self.tol = tol
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.fit_intercept = fit_intercept
        self.shuffle = shuffle
        self.random_state = random_state
        self.warm_start = warm_start
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.class_weight = class_weight
        self.allow_new_classes = allow_new_classes

    # ------------------------------------------------------- the model
    @property
    def coef_(self):
        solver = self.__dict__.get("_solver")
        if solver is None:
            raise AttributeError("coef_: the model is not fitted yet")
        return solver.coef_view()

    @property
    def intercept_(self):
        solver = self.__dict__.get("_solver")
        if solver is None:
            raise AttributeError("intercept_: the model is not fitted yet")
        return solver.b

    # ---------------------------------------------- fit and partial_fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the model on (X, y), starting over unless ``warm_start``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training rows; CSR and float32 are used without conversion
            (the exact solver fits dense rows centred, on a copy).
        y : array-like of shape (n_samples,)
            Class labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative row weights, multiplied by the weights of
            ``class_weight``.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        # (verbose: each epoch's line gives the CPU seconds since here)
        self._fit_cpu0 = time.process_time()
        X, y_enc, sample_weight, warm = self._fit_data(X, y, sample_weight)
        if not warm:
            choose_solver_verbosely(self, self.classes_.shape[0], X)
            # AdaGrad, unless the race after the held-out phase
            # (race_step_rules) picks the constant step
            self.step_rule_ = self._initial_step_rule()
        if self.solver_ == "lbfgs":
            return fit_full_batch(self, X, y_enc, sample_weight, warm)
        return self._fit_epochs(X, y_enc, sample_weight, warm)

    def _fit_data(self, X, y, sample_weight):
        """``fit``'s rows validated, its labels encoded (``classes_``),
        its row weights (``class_weight`` included), the class totals and
        a new generator; returns (X, y_enc, sample_weight, warm), warm
        when ``warm_start`` continues the previous model."""
        self._check_allow_new_classes()
        X, y = validate_data(
            self,
            X,
            y,
            accept_sparse="csr",
            dtype=[np.float64, np.float32],
            order="C",
        )
        # one canonical copy of a non-canonical matrix, not one per epoch
        # (the exact solver's make_dataset) or per pass (an expert's
        # partial_fit on X[order])
        X = _canonical_csr(X)
        _check_targets(y)
        sample_weight = _check_sample_weight(
            sample_weight, X, dtype=np.float64, ensure_non_negative=True
        )
        classes, y_enc = _encode_labels(y)
        if classes.shape[0] < 2:
            raise ValueError(
                "The training data must contain samples of at least 2 "
                f"classes; got one class only: {classes[0]!r}."
            )
        sample_weight = weigh_fit_rows(self, classes, y_enc, sample_weight)
        warm = (
            self.warm_start
            and self.__dict__.get("_solver") is not None
            and np.array_equal(self.classes_, classes)
            and self.coef_.shape == (classes.shape[0], X.shape[1])
            and self.coef_.dtype == X.dtype
        )
        self.classes_ = classes
        self.__dict__.pop("_class_lookup", None)
        self._partial_fit_counts = np.bincount(
            y_enc, weights=sample_weight, minlength=classes.shape[0]
        )
        self._rng = self._new_rng()
        return X, y_enc, sample_weight, warm

    def _fit_epochs(self, X, y_enc, sample_weight, warm):
        """``fit`` by epochs (every solver but 'lbfgs'): the held-out
        descent (``_descent.py``), the step-rule race
        (``_step_rule_race.py``), the refit on every row and its blend,
        on dense rows centred for the exact solver."""
        # the exact solver fits dense rows centred (column_shift): the same
        # objective, the column means moved into the intercepts at the end
        shift = None
        if self.solver_ == "exact":
            shift = column_shift(self, X, sample_weight)
        if shift is not None:
            X = centred(X, shift)
        self._fit_shift = shift
        if shift is not None and warm:
            shift_intercepts(self._solver, shift, +1.0)
        # the training rows are indices into X (the kernels take any index
        # array as an epoch's order): no copy of X
        train, held_out = fit_rows(self, X, y_enc, sample_weight, warm)
        if not warm:
            new_solver(self, X, y_enc[train], sample_weight[train])
        self.n_iter_ = 0
        self.loss_curve_ = []
        self.validation_loss_ = [] if held_out is not None else None
        # (the step-rule race runs its second rule on the same row orders)
        orders = self._rng.get_state()
        path = descend(self, X, y_enc, sample_weight, train, held_out, warm)
        if races_step_rules(self, X, held_out, warm):
            path = race_step_rules(
                self, X, y_enc, sample_weight, train, held_out, path, orders
            )
        if held_out is not None and refits(
            held_out[0].shape[0], X.shape[0], warm
        ):
            # the held-out rows chose the steps and the epochs: the model
            # is fitted again on every row along the same path
            refit_and_blend(self, X, y_enc, sample_weight, path)
        if shift is not None:
            shift_intercepts(self._solver, shift, -1.0)
        for name in ("_fit_shift", "_fit_cpu0", "_reported"):
            self.__dict__.pop(name, None)
        # partial_fit centres its dense rows by the same means
        self._row_shift = shift
        self.eta0_ = float(self._solver.eta)
        self._solver.end_fit()
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """One pass over (X, y), continuing from the current model.

        ``classes`` is required on the first call (scikit-learn's rule).
        The solver is chosen on the first call, from its batch; with
        ``eta0='auto'`` the exact solver's step is piloted on the first
        batch when it has enough rows. No rows are held out.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        classes : array-like of shape (n_classes,), default=None
            Every class of the problem; required on the first call.
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : object
        """
        first = self.__dict__.get("_solver") is None
        allow_new = self._check_allow_new_classes()
        if first and classes is None and not allow_new:
            raise ValueError(
                "classes must be passed on the first call to partial_fit."
            )
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
        if first:
            self.classes_ = None
        # the expert estimators' batch labels (_labels.encode_batch)
        y_enc, added = encode_batch(self, y, classes, first, allow_new)
        sample_weight = _check_sample_weight(
            sample_weight,
            X,
            dtype=np.float64,
            ensure_non_negative=True,
            allow_all_zero_weights=True,
        )
        n_old = self.classes_.shape[0]
        if added is not None and added.shape[0]:
            append_classes(self, added)
        sample_weight = weigh_stream_rows(self, y_enc, sample_weight, first)
        count_batch(self, y_enc, sample_weight, n_old, first)
        if first:
            start_stream(self, X, y_enc, sample_weight)
        elif X.dtype != self.coef_.dtype:
            X = X.astype(self.coef_.dtype)
        stream_pass(self, X, y_enc, sample_weight, first)
        return self

    # ------------------------------------------- what the steps call back
    def _initial_step_rule(self):
        """The exact solver's step rule before any race: per-feature
        AdaGrad, unless the private ``_exact_step_rule`` forces one
        (benchmarks' constant-step grids, tests); None for the other
        solvers."""
        if self.solver_ != "exact":
            return None
        return self.__dict__.get("_exact_step_rule") or "adagrad"

    def _check_allow_new_classes(self):
        """``allow_new_classes``; a ValueError with solver='bound'."""
        if self.allow_new_classes and self.solver == "bound":
            raise ValueError(
                "SoftmaxClassifier(solver='bound') does not support "
                "allow_new_classes=True: the bound method's curvature "
                "matrix cannot grow by a class (see "
                "StochasticBoundClassifier); use another solver."
            )
        return bool(self.allow_new_classes)

    def _seed(self):
        """A seed for a sampled solver, drawn from the fit's generator."""
        return int(self._rng.randint(np.iinfo(np.int32).max))

    def _held_out_losses(self, held_out):
        """Per-row log-loss of the held-out rows, times their normalised
        weights' count (so that ``rows @ p`` is the weighted mean)."""
        X_val, y_val, _ = held_out
        return self._evaluate(X_val, "nll", y_enc=y_val)

    def _divergence(self, exc):
        """The solver's DivergenceError, told in the estimator's terms."""
        return DivergenceError(
            f"SoftmaxClassifier(solver={self.solver_!r}) diverged: {exc} "
            f"The step is eta0={self._solver.eta:.3g}"
            + (" (chosen by eta0='auto')" if self.eta0 == "auto" else "")
            + ": lower eta0, or leave early_stopping=True so that a "
            "diverging epoch is undone and retried with half the step."
        )

    def _new_rng(self):
        """The fit's generator: the split, the row orders, the seeds of
        sampled solvers (a RandomState given is drawn from, not used)."""
        seed = self.random_state
        if isinstance(seed, np.random.RandomState):
            seed = seed.randint(np.iinfo(np.int32).max)
        return np.random.RandomState(seed)

    def _order(self, rows):
        """An epoch's order of ``rows`` (indices): shuffled, or as given."""
        if self.shuffle:
            return self._rng.permutation(rows).astype(np.intp)
        return np.asarray(rows, dtype=np.intp)
