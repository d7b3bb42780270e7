"""Augment and reduce (Ruiz, Titsias, Dieng & Blei, ICML 2018).

Softmax, multinomial probit and multinomial logistic classifiers fitted by
stochastic variational EM on a lower bound of the log-likelihood whose cost
per step does not depend on the number of classes.
"""

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ._augment_reduce_fast import MODELS as _MODELS
from ._augment_reduce_fast import ar_epoch32, ar_epoch64
from ._base import BaseSoftmaxClassifier
from ._docstrings import fill_doc
from ._new_classes import grow_per_class
from ._parameters import keyword_init
from ._quadrature import noise_log_proba
from ._sgd_schedule import SCHEDULES, Schedule
from ._shared._codes import Schedule as Code
from ._shared._codes import Status
from ._solver import EpochDiverged, SGDSolver, TrainingState

# The per-coordinate schedules are resolved inside the kernel; the
# per-epoch value handed over is rho_0 itself. 'kucukelbir' is the paper's
# (Kucukelbir et al. 2017; SCHEDULE_ADAPTIVE of _codes.pxd).
_SCHEDULES = {
    **SCHEDULES,
    "kucukelbir": Schedule(
        int(Code.SCHEDULE_ADAPTIVE), lambda eta0, decay, epoch: eta0
    ),
    "adagrad": Schedule(
        int(Code.SCHEDULE_ADAGRAD), lambda eta0, decay, epoch: eta0
    ),
}
# the paper's Bibtex settings (Table 1): |B| = N / 10 up to 488, |S| = 20
_AUTO_BATCH, _AUTO_BATCH_FRACTION, _AUTO_SAMPLED = 488, 0.1, 20
# eta0='auto' under 'kucukelbir' for probit and logistic: rho_0 = move /
# mean(||x||_1 + 1), the move two noise standard deviations (1 and
# pi / sqrt(3)); chosen with the natural local step (see eta0)
_ADAPTIVE_SCORE_MOVE = {"normal": 2.0, "logistic": 2.0 * np.pi / np.sqrt(3)}
# softplus^-1(1): q starts with unit scale
_GAMMA0 = float(np.log(np.expm1(1.0)))

_COMMON_PARAMS_DOC = """
    n_sampled_classes : int or 'auto', default='auto'
        ``|S|``, the classes drawn per row and step, without replacement, from
        the K - 1 classes other than the row's label. 'auto' is the paper's
        Bibtex setting, 20, or K - 1 if smaller; an int larger than K - 1 is
        lowered to K - 1 with a UserWarning (the package's rule for
        samplers without replacement; then every class is used: the exact
        bound). The value used is ``n_sampled_classes_``.
    batch_size : int or 'auto', default='auto'
        Rows per update step (``|B|``, the rows of one global step). 'auto'
        is the paper's Bibtex setting scaled to the data: a tenth of the
        rows, at most 488.
    local_schedule : {'row', 'global'}, default='row'
        The t of the local step size ``a_t = a_0 (1 + t)^-0.9`` (a_0 = 1,
        or 0.01 for probit and logistic with ``variant='paper'``, Sec.
        4): 'row' counts the row's own
        local steps, so that every row's variational parameters keep
        tracking W as epochs go by (each row is visited once per epoch);
        'global' is the global step count of Alg. 1 and 2 read literally,
        which all but freezes rows visited late (after 5,000 steps a_t is
        5e-4).
    variant : {'natural', 'paper'}, default='natural'
        The local step (see :ref:`shared_parameters`). Probit and
        logistic: 'paper', the gradient step of Sec. 4 on (mu, gamma),
        unstable at many classes; 'natural' (a departure from the paper),
        a stochastic natural-gradient step on q's precision and mean, the
        default because it stays stable at many classes
        (:ref:`ar_variant`).
        The softmax's local step (Alg. 1) is already a natural-gradient
        step: both values give it.
    eta0 : float or 'auto', default='auto'
        rho_0 of the 'adagrad' and 'kucukelbir' schedules, or the initial
        learning rate of the other schedules. 'auto' (the value used is
        ``eta0_``): ``min(1, sqrt(50 / r))`` under 'adagrad', r the rows
        per class; under 'kucukelbir' 1 for the softmax and
        ``2 s / (mean ||x_i||_1 + 1)`` for probit and logistic, s the
        noise's standard deviation; ``1 / c`` for the other schedules, c
        the mean of ``||x_i||^2 + 1``. Derivations: :ref:`ar_eta0`.
    learning_rate : {'auto', 'adagrad', 'kucukelbir', 'exponential', \
            'constant', 'invscaling'}, default='auto'
        'auto': 'adagrad' for the softmax, 'kucukelbir' (the paper's) for
        probit and logistic, both per coordinate with one float64 array of
        the size of ``[coef_ | intercept_]``. 'adagrad' (Duchi, Hazan &
        Singer 2011) keeps the relative sizes of importance-weighted
        gradients, which 'kucukelbir' (Kucukelbir et al. 2017; not
        scikit-learn's 'adaptive') loses at many classes. 'exponential',
        'constant', 'invscaling': the package's schedules on the
        minibatch's mean gradient. Formulas: :ref:`ar_learning_rate`.
    decay : float, default=0.9
        Factor applied to rho_0 every 2,000 steps ('kucukelbir', the paper's
        0.9) or to the rate every epoch ('exponential').
    power_t : float, default=0.5
        Exponent of the 'invscaling' schedule.
    alpha : float, default=0.0
        L2 penalty ``alpha / 2 ||coef_||_F^2`` on the mean objective (the
        paper fits the maximum likelihood, alpha = 0). Applied as a shrinkage
        of all of W per step, with the rate before its per-coordinate
        adaptation under 'adagrad' and 'kucukelbir'.
    fit_intercept : bool, default=True
        Learn class biases (the paper's w_k^(0)).
    %(max_iter)s
    tol : float or None, default=1e-3
        ``fit`` stops when the monitored loss (the validation log-loss with
        ``early_stopping``, else the training objective recorded in
        ``loss_curve_``) has not fallen below its best by more than
        ``tol`` times that best (a relative tolerance) for
        ``n_iter_no_change`` epochs in a row. None: run ``max_iter`` epochs
        (the paper runs a fixed number of steps).
    shuffle : bool, default=True
        Visit rows in a new random order each epoch (minibatches are
        consecutive rows of that order).
    random_state : int, RandomState instance or None, default=None
        Seeds the row order, the class sampling and the noise draws.
    warm_start : bool, default=False
        Start ``fit`` from the previous solution, schedule state and (for
        data with as many rows) the per-row variational parameters.
    %(class_weight)s
    verbose : int, default=0
        Print one line per epoch.
    %(early_stopping)s
    %(validation_fraction)s
    %(n_iter_no_change)s
    n_jobs : int, default=None
        Threads of the training epochs and of the exact evaluation
        (``predict``, ``predict_proba``, ``log_loss``, ...): None means 1,
        -1 every core, as in scikit-learn. The rows' local steps and, under
        'adagrad' and 'kucukelbir', the global step run on the threads in
        a fixed order, so the model does not depend on ``n_jobs``, bit for
        bit (:ref:`threads_in_training`).
    %(allow_new_classes)s
"""

_COMMON_ATTRS_DOC = """
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    coef_ : ndarray of shape (n_classes, n_features)
        One weight row per class (two for two classes), dtype of the data.
    intercept_ : ndarray of shape (n_classes,)
        Class biases (zeros if ``fit_intercept=False``).
    n_sampled_classes_ : int
        ``|S|`` as used: 'auto' resolved, an int above K - 1 lowered to it.
    n_iter_ : int
        Epochs run by the last ``fit`` (1 after ``partial_fit``).
    t_ : int
        Rows processed since the model was created.
    loss_curve_ : list of float
        Per epoch, the mean over the epoch's rows of the sampled negative
        bound at the visited iterates, plus the penalty.
    elbo_curve_ : list of float
        Per epoch, the running estimate of the bound itself (eq. 8 for the
        softmax, eq. 7 otherwise) per row: the weighted mean over the
        epoch's rows of the sampled ELBO, a stochastic lower estimate of
        the mean log-likelihood.
    validation_loss_ : list of float
        Exact validation log-loss per epoch (``early_stopping`` only).
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Feature names, when X has string column names."""


def _fill_doc(cls):
    cls.__doc__ = cls.__doc__.replace(
        "    %(common_params)s", _COMMON_PARAMS_DOC.strip("\n")
    ).replace("    %(common_attrs)s", _COMMON_ATTRS_DOC.strip("\n"))
    return fill_doc(cls)


def ar_sizes(n_sampled_classes, batch_size, n_classes, n_samples):
    """|S| and |B| of a problem: the sampled classes and the minibatch
    rows ('auto' or clipped ints)."""
    m = _AUTO_SAMPLED if n_sampled_classes == "auto" else n_sampled_classes
    if batch_size == "auto":
        batch = min(
            _AUTO_BATCH, int(np.ceil(_AUTO_BATCH_FRACTION * n_samples))
        )
    else:
        batch = batch_size
    return min(m, n_classes - 1), max(1, min(batch, n_samples))


def ar_local_start(model, n_rows):
    """The rows' local variational parameters at their start."""
    state = np.zeros((n_rows, 3), dtype=np.float64)
    if model != "softmax":
        state[:, 1] = _GAMMA0
    return state


@dataclass(eq=False)
class ARState(TrainingState):
    """Augment and reduce's training state: the common fields, the global
    steps taken and the per-coordinate step state.

    Attributes
    ----------
    n_steps : int
        Global steps taken (the 'kucukelbir' decay counts them).
    adapt : ndarray of shape (n_classes * (n_features + 1),) or None
        The per-coordinate step state of 'kucukelbir' or 'adagrad' (-1: no
        gradient seen); None before a per-coordinate schedule is used.
    adapt_schedule : int or None
        The schedule code ``adapt`` was made under (their states have
        different units).
    """

    n_steps: int = 0
    adapt: np.ndarray | None = None
    adapt_schedule: int | None = None

    def grow(self, n_old, n_new):
        # per-coordinate step state, (K, D + 1) flat: a new class's
        # coordinates start with no gradient seen (-1), as at a fresh fit
        per_class = self.coef.shape[1] + 1
        if self.adapt is not None:
            if self.adapt.shape[0] == n_old * per_class:
                self.adapt = grow_per_class(
                    self.adapt, n_old, n_new, -1.0, per_class, name="adapt"
                )
            else:
                self.adapt = None  # stale: remade by ARSolver.resume
        super().grow(n_old, n_new)


class ARSolver(SGDSolver):
    """Augment-and-reduce epochs (kernel ``_augment_reduce_fast``), the
    solver of :class:`ARSoftmaxClassifier`, :class:`ARProbitClassifier`
    and :class:`ARLogisticClassifier`.

    Parameters
    ----------
    model : {'softmax', 'probit', 'logistic'}
        The model's link.
    n_sampled_classes, batch_size, decay
        The estimator's parameters of those names.
    local_rate : float
        a_0 of the local step sizes.
    per_row, natural_local : bool
        The local schedule counts steps per row; natural-gradient local
        steps.
    adaptive : bool
        Per-coordinate steps ('kucukelbir' or 'adagrad').
    **common
        The parameters of :class:`~sksoftmax._solver.SGDSolver`.

    Its state is an :class:`ARState` (global steps taken, per-coordinate
    step state).
    """

    kernels = (ar_epoch64, ar_epoch32)
    state_class = ARState

    def __init__(
        self,
        *,
        model,
        n_sampled_classes,
        batch_size,
        decay,
        local_rate,
        per_row,
        natural_local,
        adaptive,
        **common,
    ):
        super().__init__(**common)
        self.adaptive = adaptive
        self.model = model
        self.n_sampled_classes = n_sampled_classes
        self.batch_size = batch_size
        self.decay = decay
        self.local_rate = local_rate
        self.per_row = per_row
        self.natural_local = natural_local

    def resume(self, state):
        """The common strategies (``SGDSolver.resume``) and, under a
        per-coordinate schedule, its step state at 'no gradient seen' (-1)
        when there is none yet, when the model's shape changed, or when the
        schedule changed (a warm start that switches between 'kucukelbir'
        and 'adagrad': their states have different units); kept under
        other schedules, for when one is back."""
        super().resume(state)
        n_classes, n_features = state.coef.shape
        size = n_classes * (n_features + 1)
        if self.adaptive and (
            state.adapt is None
            or state.adapt.shape[0] != size
            or state.adapt_schedule != self.schedule_code
        ):
            state.adapt = np.full(size, -1.0)
            state.adapt_schedule = self.schedule_code

    def new_row_state(self, n_rows):
        return ar_local_start(self.model, n_rows)

    def _options(self, n_samples, eta_epoch, first_visit):
        """The kernel's AROptions (``_augment_reduce_fast.pyx.tp``) for an
        epoch."""
        m, batch = ar_sizes(
            self.n_sampled_classes, self.batch_size, self.n_classes, n_samples
        )
        return {
            "model": _MODELS[self.model],
            "batch_size": batch,
            "n_sampled": m,
            "init_local": first_visit,
            "schedule": self._schedule(eta_epoch),
            "decay": self.decay,
            "local_rate": self.local_rate,
            "per_row": self.per_row,
            "alpha": self.alpha,
            "fit_intercept": self.fit_intercept,
            "shuffle": self.shuffle,
            "n_threads": self.n_threads,
            "natural_local": self.natural_local,
        }

    def epoch(
        self, state, dataset, weights, y, local, order, eta_epoch,
        first_visit,
    ):
        kernel = self._kernel(state)
        status, obj_sum, weight_sum, t, n_steps, row, value = kernel(
            dataset,
            weights,
            y,
            local,
            state.rng,
            order,
            state.t,
            state.n_steps,
            state.adapt if self.adaptive else np.zeros(1),
            self._options(dataset.n_samples, eta_epoch, first_visit),
        )
        state.n_steps = n_steps
        if status == Status.STATUS_OVERFLOW:
            raise EpochDiverged(
                "the exponent psi_k - psi_y - log eta would overflow",
                row,
                value,
            )
        if status == Status.STATUS_NONFINITE:
            raise EpochDiverged(
                "a score, a variational parameter or ||W|| is not finite",
                row,
                value,
            )
        state.t = t
        return obj_sum, weight_sum


class _BaseAugmentReduce(BaseSoftmaxClassifier):
    """Shared bookkeeping of the three augment-and-reduce estimators."""

    _model = "softmax"
    # a_t = a_0 (1 + t)^-0.9 with a_0 = 1 in Alg. 1 and for the natural
    # local step of Alg. 2, 0.01 for the paper's gradient step (Sec. 4)
    _paper_local_rate = 0.01

    # the rows' local steps and the classes' global steps of a minibatch
    # run on n_jobs threads, with the results of one thread
    _threaded_epochs = True

    _parameter_constraints: dict = {
        **BaseSoftmaxClassifier._parameter_constraints,
        "learning_rate": [StrOptions({"auto", *_SCHEDULES})],
        "n_sampled_classes": [
            Interval(Integral, 1, None, closed="left"),
            StrOptions({"auto"}),
        ],
        "batch_size": [
            Interval(Integral, 1, None, closed="left"),
            StrOptions({"auto"}),
        ],
        "decay": [Interval(Real, 0, 1, closed="right")],
        "local_schedule": [StrOptions({"row", "global"})],
        "variant": [StrOptions({"natural", "paper"})],
    }

    __init__ = keyword_init(
        {
            "n_sampled_classes": "auto",
            "batch_size": "auto",
            "local_schedule": "row",
            "variant": "natural",
        },
        learning_rate="auto",
    )

    # -------------------------------------------------------------- hooks
    def _learning_rate(self):
        """'auto': 'adagrad' for the softmax, the paper's 'kucukelbir'
        for the noise models (see learning_rate)."""
        if self.learning_rate != "auto":
            return self.learning_rate
        return "adagrad" if self._model == "softmax" else "kucukelbir"

    def _local_step_rate(self):
        """a_0 of the local step size a_t = a_0 (1 + t)^-0.9."""
        if self._model == "softmax" or self.variant == "natural":
            return 1.0
        return self._paper_local_rate

    def _schedule(self):
        return _SCHEDULES[self._learning_rate()]

    def _auto_eta0(self, curvature):
        """eta0='auto': see eta0."""
        if self._learning_rate() == "adagrad":
            # a coordinate's first touches move it by up to rho_0 whatever
            # AdaGrad's sum: the package's horizon rule shrinks rho_0 where
            # each class has many rows (see eta0)
            n_classes = self.classes_.shape[0]
            return self._row_norm_stats.pilot_step_factor(n_classes)
        if self._learning_rate() == "kucukelbir":
            if self._model == "softmax":
                return 1.0
            # a first step moves every touched coordinate by about rho_0,
            # so a row's score by rho_0 (||x||_1 + 1): rho_0 is set for a
            # score move of _ADAPTIVE_SCORE_MOVE noise standard deviations
            mean_l1 = self._row_norm_stats.mean_l1(self.fit_intercept)
            return _ADAPTIVE_SCORE_MOVE[self._noise] / mean_l1
        return 1.0 / curvature

    def _new_row_state(self, n_rows):
        return ar_local_start(self._model, n_rows)

    def _sizes(self, n_samples):
        """|S| and |B| for this problem ('auto' or clipped ints)."""
        return ar_sizes(
            self.n_sampled_classes,
            self.batch_size,
            self.classes_.shape[0],
            n_samples,
        )

    def _distinct_draw_limit(self):
        # distinct classes other than the row's label
        return self.classes_.shape[0] - 1

    def _n_sampled_used(self):
        return self._sizes(1)[0]

    def _make_solver(self, eta0=None, n_threads=None):
        """The augment-and-reduce solver of the current parameters."""
        return ARSolver(
            model=self._model,
            n_sampled_classes=self.n_sampled_classes,
            batch_size=self.batch_size,
            decay=self.decay,
            local_rate=self._local_step_rate(),
            per_row=self.local_schedule == "row",
            natural_local=(
                self._model != "softmax" and self.variant == "natural"
            ),
            adaptive=self._learning_rate() in ("kucukelbir", "adagrad"),
            **self._solver_options(eta0, n_threads),
        )

    def _epoch(self, dataset, weights, y_enc, row_state, order, first_visit):
        try:
            objective = super()._epoch(
                dataset, weights, y_enc, row_state, order, first_visit
            )
        except ValueError:
            self.__dict__.pop("elbo_curve_", None)
            if "_state" in self.__dict__:
                self._state.adapt = None
            raise
        if len(self.loss_curve_) == 1:
            # loss_curve_ was just started over (fit or a first partial_fit)
            self.elbo_curve_ = []
        self.elbo_curve_.append(
            -(objective - 0.5 * self.alpha * weights.sq_norm)
        )
        return objective

    def _divergence_hint(self):
        return (
            " (or rho_0 with learning_rate='kucukelbir'), or standardise the "
            "features"
        )


@_fill_doc
class ARSoftmaxClassifier(_BaseAugmentReduce):
    """Softmax regression by augment and reduce (Ruiz et al., Algorithm 1).

    Maximises the bound of eq. 8 on every row's log-likelihood,
    ``L_n = 1 - log eta_n - (1 + sum_{k != y_n} exp(psi_k - psi_y)) / eta_n``
    with ``psi_k = x_n.w_k + b_k``, by stochastic variational EM: per
    minibatch of ``batch_size`` rows and ``n_sampled_classes`` classes per
    row, a natural-gradient step on each row's eta_n (local step,
    ``eta_n <- (1 - a_t) eta_n + a_t eta~_n`` with
    ``eta~_n = 1 + (K-1)/|S| sum_{k in S} exp(psi_k - psi_y)`` and
    ``a_t = (1 + t)^-0.9``), then a step on W and b along the gradient of
    eq. 8 (global step). A step costs ``O(|S| nnz(x))`` whatever the number of
    classes; the bound equals the log-likelihood at
    ``eta_n = 1 + sum_k exp(psi_k - psi_y)``, so its maximiser is the
    softmax maximum likelihood. ``predict_proba`` is the exact softmax.

    Parameters
    ----------
    %(common_params)s

    Attributes
    ----------
    %(common_attrs)s

    Notes
    -----
    'adagrad' and not the paper's 'kucukelbir' is the default: at many
    classes a coordinate is touched rarely, and the paper's decayed state
    turns its steps into sign steps that no longer follow the gradient
    (:ref:`ar_learning_rate`).

    eta_n is stored as log eta_n (float64, one per training row), so that it
    cannot overflow. A row seen for the first time (the first epoch of
    ``fit``, every ``partial_fit`` batch) starts from ``eta_n = eta~_n``, a
    local step of length one.

    References
    ----------
    F. J. R. Ruiz, M. K. Titsias, A. B. Dieng, D. M. Blei, "Augment and
    reduce: stochastic inference for large categorical distributions",
    ICML 2018.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sksoftmax import ARSoftmaxClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = ARSoftmaxClassifier(random_state=0).fit(X, y)
    >>> clf.predict_proba(X[:1]).shape
    (1, 3)
    >>> bool(clf.elbo_curve_[-1] <= 0)
    True
    """

    _model = "softmax"


# Alg. 2 estimators (probit, logistic): exact probabilities by quadrature of
# eq. 5. ARProbitClassifier and ARLogisticClassifier take these functions
# as their methods (one base class less than a shared subclass).

# the quadrature's cost per (row, class) term, in log-sum-exp units, for the
# runaway check's budget (_runaway)
_NOISE_PROBA_COST = 64


def _noise_predict_log_proba(self, X):
    """Exact log-probabilities of the noise model (eq. 5, quadrature).

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)

    Returns
    -------
    log_proba : ndarray of shape (n_samples, n_classes)
        Columns follow ``classes_``.
    """
    return _BaseAugmentReduce.predict_log_proba(self, X)


def _noise_log_proba_block(self, scores):
    """Log-probabilities of eq. 5 from a block of scores: the quadrature
    kernel, rows on n_jobs threads."""
    return noise_log_proba(scores, self._noise, n_threads=self._n_threads())


def _noise_predict_proba(self, X):
    """Exact class probabilities of the noise model (eq. 5).

    Eq. 5 is integrated numerically per row with one grid for all
    classes (see :func:`sksoftmax._quadrature.noise_log_proba`); the
    most probable class is the one of largest score, as ``predict``
    returns.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)

    Returns
    -------
    proba : ndarray of shape (n_samples, n_classes)
        Rows sum to one; columns follow ``classes_``.
    """
    return _BaseAugmentReduce.predict_proba(self, X)


def _noise_log_loss(self, X, y, sample_weight=None):
    """Exact mean log-loss of the noise model on (X, y) (eq. 5).

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Labels, all in ``classes_``.
    sample_weight : array-like of shape (n_samples,), default=None

    Returns
    -------
    loss : float
        Weighted mean of -log p(y_i | x_i).
    """
    return _BaseAugmentReduce.log_loss(self, X, y, sample_weight)


@_fill_doc
class ARProbitClassifier(_BaseAugmentReduce):
    """Multinomial probit regression by augment and reduce (Algorithm 2).

    The class is ``argmax_k (psi_k + eps_k)`` with ``psi_k = x.w_k + b_k``
    and independent standard normal ``eps_k``. Each row n keeps a Gaussian
    ``q(eps; mu_n, sigma_n)``, ``sigma_n = log(1 + exp(gamma_n))``, and the
    bound of eq. 7,
    ``E_q[log phi(eps) + sum_{k != y} log Phi(eps + psi_y - psi_k)
    - log q(eps)]``, is maximised by stochastic variational EM: a
    one-sample natural-gradient step on q's precision and mean (the
    paper's gradient step of eq. 9 with ``variant='paper'``; see
    variant), then a step on W and b with a
    fresh draw of eps (Sec. 3.2), each with ``n_sampled_classes`` classes
    per row. log Phi and its derivative are evaluated in log space, accurate
    far in the lower tail. ``predict_proba`` integrates eq. 5 numerically.

    Parameters
    ----------
    %(common_params)s

    Attributes
    ----------
    %(common_attrs)s

    Notes
    -----
    The per-row parameters (mu_n, gamma_n) start at (0, softplus^-1(1)),
    i.e. q equal to the prior of eps. The probabilities are monotone in the
    scores, so ``predict`` (largest score) agrees with ``predict_proba``.

    References
    ----------
    F. J. R. Ruiz, M. K. Titsias, A. B. Dieng, D. M. Blei, "Augment and
    reduce: stochastic inference for large categorical distributions",
    ICML 2018.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sksoftmax import ARProbitClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = ARProbitClassifier(random_state=0).fit(X, y)
    >>> proba = clf.predict_proba(X[:2])
    >>> proba.shape, bool(abs(proba.sum(1) - 1).max() < 1e-12)
    ((2, 3), True)
    """

    _model = "probit"
    _noise = "normal"
    _proba_cost = _NOISE_PROBA_COST
    _log_proba_block = _noise_log_proba_block
    predict_log_proba = _noise_predict_log_proba
    predict_proba = _noise_predict_proba
    log_loss = _noise_log_loss


@_fill_doc
class ARLogisticClassifier(_BaseAugmentReduce):
    """Multinomial logistic regression by augment and reduce (Algorithm 2).

    As :class:`ARProbitClassifier` with standard logistic noise
    ``phi(eps) = sigma(eps) sigma(-eps)``, ``Phi = sigma`` (Sec. 3.2) and a
    logistic ``q(eps; mu_n, beta_n)``, ``beta_n = log(1 + exp(gamma_n))``.
    Not the softmax: the noise is logistic, not Gumbel. ``predict_proba``
    integrates eq. 5 numerically.

    Parameters
    ----------
    %(common_params)s

    Attributes
    ----------
    %(common_attrs)s

    References
    ----------
    F. J. R. Ruiz, M. K. Titsias, A. B. Dieng, D. M. Blei, "Augment and
    reduce: stochastic inference for large categorical distributions",
    ICML 2018.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sksoftmax import ARLogisticClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = ARLogisticClassifier(random_state=0).fit(X, y)
    >>> clf.predict(X[:1]).shape
    (1,)
    """

    _model = "logistic"
    _noise = "logistic"
    _proba_cost = _NOISE_PROBA_COST
    _log_proba_block = _noise_log_proba_block
    predict_log_proba = _noise_predict_log_proba
    predict_proba = _noise_predict_proba
    log_loss = _noise_log_loss
