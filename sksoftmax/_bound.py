"""Stochastic bound majorization (Choromanska & Jebara 2013)."""

import os
import warnings
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions
from threadpoolctl import threadpool_limits

from ._base import BaseSoftmaxClassifier
from ._bound_fast import (
    sbm_full_epoch32,
    sbm_full_epoch64,
    sbm_lowrank_epoch32,
    sbm_lowrank_epoch64,
)
from ._docstrings import fill_doc
from ._parameters import keyword_init
from ._shared._codes import Status
from ._solver import EpochDiverged, SGDSolver, TrainingState


def _available_memory():
    """Bytes of memory the process may still use (MemAvailable on Linux)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return np.inf


def _gib(n_bytes):
    return f"{n_bytes / 2**30:,.1f} GiB"


# rank='auto' keeps the full rank only within this budget, estimated before
# anything is allocated: M and the two d x d temporaries of the per-epoch
# re-weighting, and one epoch over the rows of the call
FULL_RANK_MAX_BYTES = 2**30
FULL_RANK_MAX_SECONDS = 60.0
# Seconds per unit of work of the package's kernels on one BLAS thread
# (benchmarks/bench_bound.py): the full rank's row costs K d^2 (the
# rank-K update of M), the low rank's n_directions (k + 1)^2 d (basis
# update and Woodbury solve).
SECONDS_PER_FULL_UNIT = 1.5e-10
SECONDS_PER_LOW_RANK_UNIT = 1.0e-9
# the rank of rank='auto' beyond the budget, and its step (variant='paper',
# eta = AUTO_LOW_RANK_ETA / n: "a few tens over n" on digits and Bibtex)
AUTO_RANK = 10
AUTO_LOW_RANK_ETA = 30.0


def full_rank_cost(n_samples, n_classes, d):
    """(bytes, seconds per epoch) of the full-rank form, estimated."""
    return 3 * 8 * d * d, n_samples * n_classes * d * d * SECONDS_PER_FULL_UNIT


def low_rank_seconds(n_samples, rank, n_directions, d):
    """Seconds per epoch of the low-rank form, estimated."""
    units = n_samples * n_directions * (rank + 1) ** 2 * d
    return units * SECONDS_PER_LOW_RANK_UNIT


@dataclass(eq=False)
class BoundState(TrainingState):
    """The stochastic bound's training state: the common fields and the
    accumulated bounds, in the mean-loss scale.

    Attributes
    ----------
    mu : ndarray of shape (d,)
        The accumulated gradients.
    M : ndarray of shape (d, d) or None
        The inverse of the accumulated curvature (full rank).
    V, sig, Dg : ndarray or None
        Its low-rank form ``V' diag(sig) V + diag(Dg)`` (low rank).
    n_used : int
        Directions of V in use (low rank).
    epoch_number : int
        The epoch about to run, from 1 (the rows' scale 1 / (epoch total
        weight)).
    """

    mu: np.ndarray | None = None
    M: np.ndarray | None = None
    V: np.ndarray | None = None
    sig: np.ndarray | None = None
    Dg: np.ndarray | None = None
    n_used: int = 0
    epoch_number: int = 1


class BoundSolver(SGDSolver):
    """Stochastic-bound epochs (kernels ``_bound_fast``), the solver of
    :class:`StochasticBoundClassifier`.

    Parameters
    ----------
    surrogate : bool
        The surrogate step (else the paper's printed update).
    batch_size, n_directions
        The estimator's parameters of those names.
    rank : int or None
        The rank of the low-rank form (V, sig, Dg) of the bounds'
        curvature; None: the dense M.
    **common
        The parameters of :class:`~sksoftmax._solver.SGDSolver`.

    Its state is a :class:`BoundState`. Epoch e (from 1) first re-weights
    what the earlier epochs accumulated by (e - 1) / e (``_reweight``).
    """

    state_class = BoundState

    kernels = (
        (sbm_full_epoch64, sbm_full_epoch32),
        (sbm_lowrank_epoch64, sbm_lowrank_epoch32),
    )

    def __init__(self, *, surrogate, batch_size, n_directions, rank,
                 **common):
        super().__init__(**common)
        self.surrogate = surrogate
        self.batch_size = batch_size
        self.n_directions = n_directions
        self.rank = rank
        self.low_rank = rank is not None

    def _prior(self, n_features):
        """Diagonal of M^-1 before any row: alpha (W) and alpha (b)."""
        d_plus = n_features + int(self.fit_intercept)
        return np.full(self.n_classes * d_plus, float(self.alpha))

    def _setup_method(self, state, n_features):
        """The bounds' curvature at the prior alpha I: M = I / alpha, or no
        direction of V used yet; mu zero; the first epoch. A ValueError,
        before allocating it, when it would not fit in the memory
        available."""
        d = self.n_classes * (n_features + int(self.fit_intercept))
        available = _available_memory()
        if self.low_rank:
            need = 8 * d * (2 * self.rank + 6)
            if need > available:
                raise ValueError(
                    f"StochasticBoundClassifier(rank={self.rank}) needs "
                    f"{_gib(need)} for V and its work arrays over d = "
                    f"{d:,} parameters, more than the {_gib(available)} "
                    "of memory available; lower rank."
                )
            state.V = np.zeros((self.rank, d))
            state.sig = np.zeros(self.rank)
            state.Dg = self._prior(n_features)
            state.n_used = 0
        else:
            # M, plus two d x d temporaries of the per-epoch re-weighting
            need = 3 * 8 * d * d
            if need > available:
                raise ValueError(
                    f"StochasticBoundClassifier(rank=None) keeps the dense "
                    f"matrix M = Sigma^-1 over d = n_classes * (n_features + "
                    f"{int(self.fit_intercept)}) = {d:,} parameters: "
                    f"8 d^2 = {_gib(8 * d * d)} for M ({_gib(need)} with the "
                    f"per-epoch temporaries), more than the {_gib(available)} "
                    "of memory available. Use the low-rank form, e.g. "
                    "rank=20, whose memory is O(rank * d)."
                )
            state.M = np.diag(1.0 / self._prior(n_features))
        state.mu = np.zeros(d)
        state.epoch_number = 1

    def _reweight(self, state, keep):
        """Scale the accumulated bounds by ``keep``, the prior unchanged."""
        n_classes, n_features = state.coef.shape
        prior = self._prior(n_features)
        if not self.low_rank:
            sigma = np.linalg.inv(state.M)
            sigma *= keep
            sigma[np.diag_indices_from(sigma)] += (1.0 - keep) * prior
            M = np.linalg.inv(sigma)
            state.M = np.ascontiguousarray(0.5 * (M + M.T))
        else:
            state.sig *= keep
            state.Dg = prior + keep * (state.Dg - prior)
        if self.surrogate and self.fit_intercept:
            # the intercepts' proximal term is not a bound: not re-weighted
            d_plus = n_features + 1
            ib = np.arange(n_classes) * d_plus + d_plus - 1
            prox = -float(self.alpha) * state.intercept.astype(np.float64)
            state.mu = keep * state.mu
            state.mu[ib] += (1.0 - keep) * prox
        else:
            state.mu = keep * state.mu

    def new_row_state(self, n_rows):
        """None: the bound keeps no per-row variable."""
        return None

    def _kernel(self, state):
        return self.kernels[self.low_rank][
            0 if state.coef.dtype == np.float64 else 1
        ]

    def _options(self, dataset, eta_epoch, epoch):
        """The kernels' BoundOptions (``_bound_fast.pyx.tp``) for an
        epoch."""
        total = float(dataset.weights.sum())
        return {
            "surrogate": self.surrogate,
            "row_scale": 1.0 / (epoch * total),
            "alpha": float(self.alpha),
            "alpha_b": float(self.alpha),
            "schedule": self._schedule(eta_epoch),
            "batch_size": self.batch_size,
            "fit_intercept": self.fit_intercept,
            "shuffle": self.shuffle,
            "n_directions": self.n_directions,
        }

    def epoch(
        self, state, dataset, weights, y, row_state, order, eta_epoch,
        first_visit,
    ):
        epoch = state.epoch_number
        if epoch > 1:
            self._reweight(state, (epoch - 1) / epoch)
        opts = self._options(dataset, eta_epoch, epoch)
        kernel = self._kernel(state)
        # one BLAS thread: a rank-K update per row is too small to share,
        # and threads waiting on a busy machine cost many times more
        with threadpool_limits(limits=1, user_api="blas"):
            if not self.low_rank:
                status, obj_sum, weight_sum, t, row, value = kernel(
                    dataset,
                    weights,
                    y,
                    state.rng,
                    order,
                    state.M,
                    state.mu,
                    state.t,
                    opts,
                )
            else:
                result = kernel(
                    dataset,
                    weights,
                    y,
                    state.rng,
                    order,
                    state.V,
                    state.sig,
                    state.Dg,
                    state.mu,
                    state.n_used,
                    state.t,
                    opts,
                )
                status, obj_sum, weight_sum, t, state.n_used, row, value = (
                    result
                )
        if status != Status.STATUS_OK:
            raise EpochDiverged("theta is not finite", row, value)
        state.t = t
        state.epoch_number = epoch + 1
        return obj_sum, weight_sum


@fill_doc
class StochasticBoundClassifier(BaseSoftmaxClassifier):
    """Softmax regression by stochastic bound majorization.

    Minimises the mean log-loss of a linear softmax model plus
    ``alpha / 2 * ||coef_||_F^2`` with the quadratic upper bound of the
    partition function of Choromanska & Jebara (2013, Alg. 1, Theorem 1):
    at the current parameters theta~ = vec(W, b), each row's
    ``log Z(theta)`` is bounded above by ``log z + dt' g + dt' Sigma dt / 2``
    (dt = theta - theta~) for *every* theta, a globally valid curvature
    (not the Hessian). The rows' Sigma are accumulated into
    ``M = (alpha I + sum Sigma)^-1`` by Sherman-Morrison updates (Alg. 2)
    and theta steps along ``M mu``.

    With softmax features f(c) = e_c (x) (x, 1) the bound of a row lives in
    the K class coordinates (Sigma_row = S (x) x~ x~'), so one row costs
    O(K^3 + d K nnz + K d^2) with d = n_classes * (n_features + 1): the
    rank-K update of the dense d x d matrix M dominates, against
    O(K d^2) dense rank-one updates plus O(K^2 d nnz) of products when
    the K Sherman-Morrison steps are done on the d-dimensional vectors.
    M takes 8 d^2 bytes; ``fit`` refuses, before allocating it, a problem
    whose M would not fit in the available memory.

    With ``rank=k`` the accumulated curvature is kept instead as
    ``V' diag(sig) V + diag(D)`` (Sec. 3.2): V (k x d) orthonormal rows,
    sig >= 0, D > 0 diagonal, in O(k d) memory, and every step solves with
    it by the Woodbury identity. The paper leaves the update out; the one
    here keeps ``V' diag(sig) V + diag(D)`` an upper bound (in the PSD
    order) of the exact ``alpha I + sum Sigma_i`` after every row:

    1. of the row's rank-one terms beta_j l_j l_j' (Alg. 1), the largest
       (by beta_j ||l_j||^2) is kept as a direction q; each other one is
       replaced by ``beta_j ||l_j||_1 diag(|l_j|)``, which dominates it
       (``v v' <= ||v||_1 diag(|v|)``: the difference is diagonally
       dominant);
    2. q's residual against V joins the basis; the (m+1) x (m+1) core
       ``diag(sig) + c c'`` (c = (V q, ||residual||)) is eigendecomposed
       exactly, the top k components are kept, and the smallest one, a
       vector w of R^d, is replaced by ``||w||_1 diag(|w|)`` >= w w'.

    Each step replaces a PSD term by a larger one, so the bound holds for
    the accumulated sum and the majorization stays valid, only looser. Per
    row it costs O(K^2 + k K nnz) for the bound and O(k^2 d + k^3) for the
    basis update and the Woodbury solve, linear in d. The diagonal bounds
    are loose (by up to the number of entries of the vector they replace),
    so with the default update the low-rank fit moves little; like the
    paper's low-rank runs, use ``variant='paper'`` with a tuned ``eta0``
    (``variant='auto'`` does at low rank, see eta0).

    Parameters
    ----------
    rank : int, None or 'auto', default='auto'
        None: full rank, the dense M (Alg. 2). k: the low-rank form above.
        'auto': full rank when its cost, estimated before anything is
        allocated, is within 1 GiB (M and its per-epoch temporaries, 24 d^2
        bytes) and about a minute per epoch (from n K d^2, n the rows of
        the ``fit`` or of the first ``partial_fit`` call); otherwise rank
        10. An explicit
        ``rank=None`` beyond that budget raises a ValueError with the
        estimate. The rank used is ``rank_``.
    n_directions : int, default=1
        With ``rank=k``: how many of a row's K rank-one terms (the largest)
        enter the basis as directions (step 2); the others are bounded by
        the diagonal (step 1). More directions give a tighter bound at
        ``n_directions`` times the O(k^2 d) cost per row.
    alpha : float, default=1e-4
        L2 penalty on ``coef_`` (mean-loss scale: ``LogisticRegression``'s
        ``C = 1 / (alpha * n_samples)``). It must be positive, hence the
        one shared default that differs here (0.0 elsewhere): M starts as
        ``I / alpha`` and without a penalty the curvature is singular;
        ``alpha=0`` raises a ValueError (:ref:`bound_alpha`).
    eta0 : float or 'auto', default='auto'
        Step size eta of ``theta -= eta * phi``. 'auto' takes 1 with
        ``variant='surrogate'`` (the minimiser of the accumulated bounds),
        ``1 / n_samples`` with 'paper' (its eta = 1/t) and
        ``30 / n_samples`` for 'paper' at low rank (:ref:`bound_eta0`);
        the value used is ``eta0_``.
    batch_size : int, default=1
        Rows per update step: the rows whose bounds are accumulated between
        two steps of theta (the paper's m; it always uses m = 1; no
        automatic choice).
    variant : {'auto', 'surrogate', 'paper'}, default='auto'
        The update of theta (see :ref:`shared_parameters`). 'paper': Alg. 2
        as printed, whose mu keeps the gradients of every earlier iterate;
        'surrogate': each row's bound stays anchored where it was built,
        so that ``theta - phi`` minimises the sum of the visited rows'
        bounds plus the penalty (stochastic majorization-minimization).
        'auto': 'surrogate' at full rank, 'paper' at low rank, where the
        surrogate's loose diagonal bounds barely move theta
        (:ref:`bound_variant`).
    learning_rate : {'constant', 'exponential', 'invscaling'}, \
            default='constant'
        Schedule of eta: 'constant' (the paper's), 'exponential'
        (``eta0 * decay**epoch``) or 'invscaling' (``eta0 / t**power_t``).
    decay : float, default=0.9
        Per-epoch factor of the 'exponential' schedule.
    power_t : float, default=0.5
        Exponent of the 'invscaling' schedule.
    fit_intercept : bool, default=True
        Learn unpenalised class intercepts. Their curvature in M starts at
        ``alpha`` as well; with ``variant='surrogate'`` that start is a
        proximal term ``alpha/2 ||b - b_current||^2`` that follows b, so it
        does not bias the intercepts.
    %(max_iter)s
    %(tol)s
    shuffle : bool, default=True
        Visit rows in a new random order each epoch.
    random_state : int, RandomState instance or None, default=None
        Seeds the row order.
    warm_start : bool, default=False
        Continue ``fit`` from the previous coefficients, M and mu.
    %(class_weight)s
    verbose : int, default=0
        Print the form chosen with its estimated memory and time per
        epoch, then one line per epoch.
    %(early_stopping)s
    %(validation_fraction)s
    %(n_iter_no_change)s

    n_jobs : int, default=None
        Threads of the exact evaluation (``predict``, ``predict_proba``,
        ``predict_topk``, ``log_loss``, ``score``, ...): None means 1, -1
        every core, as in scikit-learn; OpenMP limits (``OMP_NUM_THREADS``,
        threadpoolctl) are respected. Predictions do not depend on it.
        Training runs on one thread: its cost is the dense curvature
        algebra of small rank-r updates, kept on one BLAS thread.

    allow_new_classes : bool, default=False
        Let ``partial_fit`` add classes it has not seen (in ``y`` or
        ``classes``) instead of raising: the model grows by them, each
        starting at its class-prior intercept, and they are appended to
        ``classes_`` in order of arrival (see the user guide's streaming
        page). Not supported here (a ValueError): the curvature
        matrix over K x (D + 1) parameters cannot grow by a class
        without an O((K D)^2) (full rank) or O(rank K D) copy.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    coef_ : ndarray of shape (n_classes, n_features)
        One weight row per class, dtype of the training data.
    intercept_ : ndarray of shape (n_classes,)
        Class intercepts (zeros if ``fit_intercept=False``).
    rank_ : int or None
        The rank used: ``rank``, or what 'auto' chose (None: full rank).
    n_iter_ : int
        Epochs run by the last ``fit`` (1 after ``partial_fit``).
    t_ : int
        Rows processed since the model was created.
    loss_curve_ : list of float
        Per epoch, the *exact* penalised training objective (weighted mean
        log-loss + ``alpha/2 ||coef_||^2``) at the epoch's end: one pass of
        O(n K nnz), negligible beside the epoch's O(n K d^2).
    validation_loss_ : list of float
        Exact validation log-loss per epoch (``early_stopping`` only).
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Feature names, when X has string column names.

    Notes
    -----
    Accumulators. M and mu (and their weights) live on the estimator and
    carry over across epochs, warm starts and ``partial_fit`` calls. They
    are in the mean-loss scale: a row of weight s_i in a pass over data of
    total weight W adds s_i / W of its Sigma to M^-1 and of its gradient to
    mu. Epoch e (counting ``partial_fit`` calls) enters with weight 1/e and
    first re-weights what is accumulated by (e-1)/e, so that M^-1 - alpha I
    and mu are the average over epochs of the passes' bounds and the
    penalty keeps its weight; the re-weighting costs two d x d inversions
    per epoch.

    The printed Alg. 2 (``variant='paper'``, eta = 1/t) adds up, over one
    pass, to about one batch majorization step (Eq. 2) from where the pass
    began, and its mu keeps every past gradient; the default anchors each
    bound at its own theta~ (the Sigma_i theta~_i term the printed update
    drops when theta moves within the pass), which makes ``theta - phi``
    the minimiser of a sum of upper bounds of the visited rows' losses.

    Feature scaling matters: the bound's curvature grows with the row
    norms, and so does the gap of one pass to the optimum. Prefer
    scalings that keep row norms moderate (MaxAbsScaler, Normalizer;
    see :ref:`bound_feature_scaling`).

    Size: full rank costs 24 d^2 bytes and O(K d^2) per row, so it suits
    d = K (D + 1) up to a few thousand; ``rank='auto'`` keeps it within
    1 GiB and about a minute per epoch and takes rank 10 beyond.

    References
    ----------
    A. Choromanska, T. Jebara, "Stochastic Bound Majorization",
    arXiv:1309.5605, 2013.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sksoftmax import StochasticBoundClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = StochasticBoundClassifier(alpha=1e-3, random_state=0).fit(X, y)
    >>> clf.predict_proba(X[:1]).shape
    (1, 3)
    >>> bool(clf.score(X, y) > 0.9)
    True
    """

    _parameter_constraints: dict = {
        **BaseSoftmaxClassifier._parameter_constraints,
        "rank": [
            Interval(Integral, 1, None, closed="left"),
            None,
            StrOptions({"auto"}),
        ],
        "n_directions": [Interval(Integral, 1, None, closed="left")],
        # 0 is refused by _check_alpha, with the reason and what to set
        "alpha": [Interval(Real, 0, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "variant": [StrOptions({"auto", "surrogate", "paper"})],
    }

    __init__ = keyword_init(
        {
            "rank": "auto",
            "n_directions": 1,
            "batch_size": 1,
            "variant": "auto",
        },
        alpha=1e-4,
        learning_rate="constant",
    )

    # ----------------------------------------------------------- state
    _new_classes_refusal = (
        "its curvature matrix over n_classes x (n_features + 1) "
        "parameters (dense at full rank, rank x that at low rank) "
        "cannot grow by a class without a copy of O(d^2) or O(rank d); "
        "use another estimator (e.g. SCENTClassifier) for streams that "
        "meet new classes."
    )

    def _update(self):
        """The update used: 'auto' is 'surrogate' at full rank, else
        'paper' (see variant)."""
        if self.variant != "auto":
            return self.variant
        return "surrogate" if self.rank_ is None else "paper"

    def _check_alpha(self):
        """alpha > 0 (see alpha): checked here as well as by the parameter
        constraints, which SoftmaxClassifier skips for its solvers."""
        if not self.alpha > 0:
            raise ValueError(
                f"StochasticBoundClassifier needs alpha > 0 (got alpha="
                f"{self.alpha!r}): its curvature matrix starts as I / alpha, "
                "and without a penalty the softmax's curvature is singular. "
                "Set alpha, e.g. alpha=1e-4 (StochasticBoundClassifier's "
                "default) or 1 / n_samples (LogisticRegression's C=1)."
            )

    def _check_dataset(self, dataset):
        self._check_alpha()
        super()._check_dataset(dataset)

    def _plan(self, n_samples, n_features):
        """Set ``rank_`` from ``rank`` and the estimated cost (see rank)."""
        self._check_alpha()
        n_classes = self.classes_.shape[0]
        d = n_classes * (n_features + int(self.fit_intercept))
        need, seconds = full_rank_cost(n_samples, n_classes, d)
        within = need <= FULL_RANK_MAX_BYTES and (
            seconds <= FULL_RANK_MAX_SECONDS
        )
        if self.rank == "auto":
            self.rank_ = None if within else AUTO_RANK
        elif self.rank is None and not within:
            raise ValueError(
                "StochasticBoundClassifier(rank=None) over d = n_classes * "
                f"(n_features + {int(self.fit_intercept)}) = {d:,} "
                f"parameters needs an estimated {_gib(need)} for M and "
                f"about {seconds:,.0f} s per epoch of {n_samples:,} rows "
                f"(O(n_classes d^2) per row), beyond the full rank's budget "
                f"of {_gib(FULL_RANK_MAX_BYTES)} and "
                f"{FULL_RANK_MAX_SECONDS:.0f} s. Use rank='auto' or a low "
                f"rank, e.g. rank={AUTO_RANK} (O(rank * d) memory, about "
                f"{low_rank_seconds(n_samples, AUTO_RANK, 1, d):,.1f} s per "
                "epoch)."
            )
        else:
            self.rank_ = self.rank
        low = None
        if self.rank_ is not None:
            low = low_rank_seconds(n_samples, self.rank_, self.n_directions, d)
            if low > FULL_RANK_MAX_SECONDS:
                warnings.warn(
                    f"StochasticBoundClassifier(rank={self.rank_}) over d = "
                    f"{d:,} parameters: an estimated {low:,.0f} s per epoch "
                    f"of {n_samples:,} rows (O(rank^2 d) per row). The bound "
                    "method suits problems with few classes x features; "
                    "the stochastic estimators (UMaxSoftmaxClassifier, "
                    "SCENTClassifier) cost O(nnz) per row.",
                    UserWarning,
                    stacklevel=4,
                )
        if self.verbose:
            if self.rank_ is None:
                form = f"full rank, M {_gib(8 * d * d)}, estimated"
                seconds_used = seconds
            else:
                seconds_used = low
                form = (
                    f"rank {self.rank_} (full rank: {_gib(need)}, "
                    f"{seconds:,.0f} s per epoch), estimated"
                )
            print(
                f"StochasticBoundClassifier: d = {d:,} parameters, {form} "
                f"{seconds_used:,.3g} s per epoch of {n_samples:,} rows, "
                f"variant='{self._update()}'"
            )

    def _make_solver(self, eta0=None, n_threads=None):
        """The stochastic-bound solver of the current parameters."""
        return BoundSolver(
            surrogate=self._update() == "surrogate",
            batch_size=self.batch_size,
            n_directions=self.n_directions,
            rank=self.rank_,
            **self._solver_options(eta0, n_threads),
        )

    def _divergence_hint(self):
        if self._update() == "paper":
            return ", or use variant='surrogate'"
        return ""

    def _auto_eta0(self, curvature):
        """eta0='auto': 1 for the surrogate step, 1 / n for the paper's.

        The surrogate step with eta = 1 is the majorization-minimization
        step itself (theta moves to the minimiser of the accumulated
        bounds); the paper's printed update takes eta = 1/t, which over
        one pass is 1 / n_samples. Row norms do not enter: M already holds
        the curvature of the bounds.
        """
        if self._update() == "surrogate":
            return 1.0
        scale = 1.0 if self.rank_ is None else AUTO_LOW_RANK_ETA
        return scale / max(self._row_norm_stats.n_rows, 1.0)
