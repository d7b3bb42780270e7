"""SCENT for extreme multi-class classification, with SOX, SGD and BSGD."""

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ._base import BaseSoftmaxClassifier
from ._docstrings import fill_doc
from ._new_classes import grow_per_class, grow_rows
from ._parameters import keyword_init
from ._scent_fast import MODES, scent_epoch32, scent_epoch64
from ._shared._codes import Status
from ._solver import EpochDiverged, SGDSolver, TrainingState

# variant -> the kernel's `mode` (NU_SCENT, NU_SOX, NU_SGD, LOSS_BSGD)
_MODES = MODES


def empty_momentum(momentum, n_classes, n_features, dtype):
    """(V, V's row of each class, Vb) before any epoch: V without rows,
    no class with one (-1), Vb zero; all three empty without momentum
    (``momentum`` 1)."""
    if momentum >= 1.0:
        return (
            np.empty((0, 1), dtype=dtype),
            np.empty(0, dtype=np.intp),
            np.empty(0, dtype=dtype),
        )
    return (
        np.empty((0, n_features), dtype=dtype),
        np.full(n_classes, -1, dtype=np.intp),
        np.zeros(n_classes, dtype=dtype),
    )


def lazy_momentum(batch_size, dataset):
    """Whether the kernel applies momentum lazily (see momentum).

    The lazy step costs O(n_batch_columns) per class against
    O(n_features), but adds a read of V to every score (batch_size *
    n_batch_classes * nnz random reads per step, against the dense
    step's n_batch_classes * n_features sequential ones) and a pass
    over the class every few dozen of its steps, so it pays only when
    the minibatch's rows use a small share of the columns: it is used
    from n_features / (batch_size * nnz) = 32 on (the threshold
    between the ratios where it was faster and slower on benchmark
    sets).
    """
    if dataset.is_dense or dataset.n_samples == 0:
        return False
    nnz_per_row = dataset.nnz / dataset.n_samples
    return 32 * batch_size * nnz_per_row < dataset.n_features


@dataclass(eq=False)
class ScentState(TrainingState):
    """SCENT's training state: the common fields and the momentum.

    Attributes
    ----------
    velocity : ndarray of shape (n_rows, n_features) or None
        V, a row for each class that has moved (None without momentum).
    velocity_slot : ndarray of shape (n_classes,) or None
        V's row of each class, -1 for none yet.
    velocity_b : ndarray of shape (n_classes,) or None
        The intercepts' momentum.
    warmup : int
        The rows of the step's ramp, recorded when the model starts
        (at t = 0).
    """

    velocity: np.ndarray | None = None
    velocity_slot: np.ndarray | None = None
    velocity_b: np.ndarray | None = None
    warmup: int = 0

    def adopt_dtype(self, dtype):
        super().adopt_dtype(dtype)
        if self.velocity is not None:
            self.velocity = self.velocity.astype(dtype, copy=False)
            self.velocity_b = self.velocity_b.astype(dtype, copy=False)

    def grow(self, n_old, n_new):
        # the momentum of a new class starts at zero (no row of V yet)
        super().grow(n_old, n_new)
        if self.velocity_slot is not None:
            self.velocity_slot = grow_per_class(
                self.velocity_slot, n_old, n_new, -1, name="velocity_slot"
            )
            self.velocity_b = grow_per_class(
                self.velocity_b, n_old, n_new, 0, name="velocity_b"
            )


class SCENTSolver(SGDSolver):
    """SCENT epochs (kernel ``_scent_fast``), the solver of
    :class:`SCENTClassifier`.

    Parameters
    ----------
    batch_size, variant, negatives, alpha_nu, momentum
        The estimator's parameters of those names.
    **common
        The parameters of :class:`~sksoftmax._solver.SGDSolver`.

    Its state is a :class:`ScentState`: the momentum buffers (V has a
    row only for the classes that moved, ``velocity_slot`` says which, see
    ``_reserve_momentum_rows``; None without momentum) and the rows of
    the step's ramp. Whether an epoch applies momentum lazily follows its
    rows (:func:`lazy_momentum`).
    """

    kernels = (scent_epoch64, scent_epoch32)
    state_class = ScentState

    def __init__(
        self, *, batch_size, variant, negatives, alpha_nu, momentum, **common
    ):
        super().__init__(**common)
        self.batch_size = batch_size
        self.variant = variant
        self.negatives = negatives
        self.alpha_nu = alpha_nu
        self.momentum = momentum

    def resume(self, state):
        """The common strategies (``SGDSolver.resume``) and, with momentum,
        its buffers: empty on first use (a class gets its row of V when an
        epoch first moves it), and again when the model's shape or dtype
        changed; kept while momentum is off, for when it is back on."""
        super().resume(state)
        n_classes, n_features = state.coef.shape
        dtype = state.coef.dtype
        slot = state.velocity_slot
        if self.momentum < 1.0 and (
            slot is None
            or slot.shape[0] != n_classes
            or state.velocity.shape[1] != n_features
            or state.velocity.dtype != dtype
        ):
            (
                state.velocity,
                state.velocity_slot,
                state.velocity_b,
            ) = empty_momentum(self.momentum, n_classes, n_features, dtype)

    def _momentum(self, state):
        """(V, V's row of each class, Vb) for the kernel (empty without
        momentum)."""
        if self.momentum >= 1.0:
            n_classes, n_features = state.coef.shape
            return empty_momentum(1.0, n_classes, n_features, state.coef.dtype)
        return state.velocity, state.velocity_slot, state.velocity_b

    def _reserve_momentum_rows(self, state, dataset, y):
        """A row of V (zero) for each class the epoch can move that has
        none yet, in class order: the labels of the rows of positive
        weight, or every class with uniform negatives (the kernel's
        "Momentum rows only for the classes that move"). V grows through
        ``grow_rows``, with room for a row per class from the first
        growth."""
        if self.momentum >= 1.0:
            return
        slot = state.velocity_slot
        if self.negatives == "uniform":
            new = np.flatnonzero(slot < 0)
        else:
            moving = np.zeros(slot.shape[0], dtype=bool)
            moving[y[dataset.weights > 0]] = True
            new = np.flatnonzero(moving & (slot < 0))
        if new.size:
            n = state.velocity.shape[0]
            # room for a row per class at once: the zeroed spare rows
            # cost no memory until written, and V is never copied again
            # (a doubling copy cost up to 4x a 20,000-row call at 100,000
            # classes)
            state.velocity = grow_rows(
                state.velocity, n + new.size, 0, capacity=slot.shape[0]
            )
            slot[new] = np.arange(n, n + new.size)

    def new_row_state(self, n_rows):
        """nu, NaN for a row not seen yet (it starts from log g_i)."""
        return np.full(n_rows, np.nan, dtype=np.float64)

    def _log_inv_label_frequency(self, dataset, y):
        """-log q_k for 'in_batch_weighted' (else empty): q the label
        frequencies among the rows of positive weight, the distribution
        the in-batch negatives are drawn from."""
        if self.negatives != "in_batch_weighted":
            return np.empty(0, dtype=np.float64)
        live = dataset.weights > 0
        counts = np.bincount(y[live], minlength=self.n_classes)
        with np.errstate(divide="ignore"):
            return np.log(max(counts.sum(), 1)) - np.log(counts)

    def _options(self, dataset, eta_epoch, warmup):
        """The kernel's ScentOptions (``_scent_fast.pyx.tp``) for an
        epoch."""
        return {
            "batch_size": self.batch_size,
            "mode": _MODES[self.variant],
            "uniform": self.negatives == "uniform",
            "alpha_nu": float(self.alpha_nu),
            "beta": float(self.momentum),
            "schedule": self._schedule(eta_epoch),
            "warmup": warmup,
            "alpha": self.alpha,
            "fit_intercept": self.fit_intercept,
            "shuffle": self.shuffle,
            "lazy_momentum": lazy_momentum(self.batch_size, dataset),
            "n_threads": self.n_threads,
        }

    def epoch(
        self, state, dataset, weights, y, nu, order, eta_epoch, first_visit
    ):
        if state.t == 0:
            # the ramp: the model's first epoch (fit's rows, or the first
            # partial_fit call's); later epochs and calls keep it
            state.warmup = dataset.n_samples
        self._reserve_momentum_rows(state, dataset, y)
        velocity, velocity_slot, velocity_b = self._momentum(state)
        status, obj_sum, weight_sum, t, row, value = self._kernel(state)(
            dataset,
            weights,
            y,
            nu,
            velocity,
            velocity_b,
            velocity_slot,
            state.rng,
            order,
            state.t,
            self._log_inv_label_frequency(dataset, y),
            self._options(dataset, eta_epoch, state.warmup),
        )
        if status == Status.STATUS_OVERFLOW:
            raise EpochDiverged(
                "an exponent R_ij - nu_i would overflow", row, value
            )
        if status == Status.STATUS_NONFINITE:
            raise EpochDiverged(
                "nu, a shifted logit or ||W|| is not finite", row, value
            )
        if status == Status.STATUS_NO_ROW:
            raise RuntimeError(
                f"class {int(-1 - value)} has no row of the momentum V "
                "(_reserve_momentum_rows)"
            )
        state.t = t
        return obj_sum, weight_sum


@fill_doc
class SCENTClassifier(BaseSoftmaxClassifier):
    """Softmax regression fitted by SCENT on minibatches (Algorithm 26).

    Minimises the mean log-loss of a linear softmax model (plus
    ``alpha / 2 * ||coef_||_F^2``) through the min-min reformulation of the
    SCENT text (Section 6.3): one dual variable ``nu_i`` per training row,

        min_W min_nu 1/n sum_i [1/K sum_j exp(R_ij - nu_i) + nu_i - 1],
        R_ij = x_i.(w_j - w_yi) + b_j - b_yi,

    whose minimum over ``nu_i`` is the row's log-loss minus log K. Each
    minibatch of ``batch_size`` rows first updates the ``nu_i`` of its rows
    in closed form, then takes one momentum step on the rows of W of the
    minibatch's classes only: the cost of a step is
    O(batch_size * n_batch_classes * nnz + n_batch_classes * n_batch_columns)
    (n_batch_columns: the features the minibatch's rows use; the momentum
    of the other columns is applied lazily, see the kernel's docstring),
    whatever the number of classes, plus one O(n_classes * n_features) pass
    per epoch. ``predict_proba`` is the exact softmax over all classes.

    Parameters
    ----------
    batch_size : int, default=128
        Rows per update step (B in Algorithm 26; no automatic choice); the
        last minibatch of an epoch may be smaller. With
        ``negatives='uniform'`` it is also the number of classes drawn
        per minibatch.
    variant : {'sox', 'scent', 'sgd', 'bsgd'}, default='sox'
        Which of the text's algorithms runs (see :ref:`shared_parameters`).
        'scent', 'sox' and 'sgd' optimise the min-min objective and differ
        in how ``nu_i`` moves: 'scent' by Lemma 5.26's closed-form mirror
        step, 'sox' by the same with a relative step (SOX's moving
        average), 'sgd' by a plain coordinate step; 'bsgd' is the text's
        BSGD comparator, without ``nu``. 'sox' is the default: its
        relative step keeps ``nu`` moving as the classes separate, where
        'scent''s step stalls (:ref:`scent_variant`).
    alpha_nu : float, default=1.0
        SCENT's alpha, SOX's gamma or SGD's step for ``nu`` (constant;
        not used by 'bsgd').
    momentum : float in (0, 1], default=0.1
        beta of Algorithm 26: ``V <- (1 - beta) V + beta Z`` on the
        minibatch's classes, then ``W <- W - eta V`` on them. 1.0 turns
        momentum off (V = Z, not stored); otherwise V has a row of
        n_features for each class that has moved (memory: up to twice W;
        the classes of rows of positive weight, all with uniform
        negatives), kept lazily so that sparse rows cost O(nnz) per class
        (:ref:`scent_momentum`).
    negatives : {'in_batch', 'in_batch_weighted', 'uniform'}, \
            default='in_batch_weighted'
        The negatives N_i of row i. 'in_batch' (the text's choice): the
        labels of the minibatch's other rows, which optimises a biased
        proxy of the objective; 'uniform': ``batch_size`` classes drawn
        uniformly from all K, unbiased; 'in_batch_weighted': the in-batch
        negatives weighted by their inverse label frequencies, unbiased
        at the in-batch cost (no draws). The estimators:
        :ref:`scent_negatives`.
    eta0 : float or 'auto', default='auto'
        Initial learning rate of W (eta_t). 'auto' takes
        ``2 B / c * sqrt(50 / r)``, B the batch size (at most the rows), c
        the mean of ``||x_i||^2 + 1`` and r = n / K the rows per class (at
        least 1): a row's own scores move by about one per step, less where
        a class's weights take many steps per epoch. The value used is
        ``eta0_``; derivation: :ref:`scent_eta0`.
    learning_rate : {'exponential', 'constant', 'invscaling'}, \
            default='exponential'
        'exponential': ``eta0 * decay**epoch`` (in ``partial_fit`` one call
        counts as one epoch); 'constant': ``eta0``; 'invscaling':
        ``eta0 / t**power_t`` with t the rows seen, per minibatch. All
        three warm up linearly over the model's first epoch
        (:ref:`scent_learning_rate`).
    decay : float, default=0.95
        Per-epoch factor of the 'exponential' schedule.
    power_t : float, default=0.5
        Exponent of the 'invscaling' schedule.
    alpha : float, default=0.0
        L2 penalty on ``coef_`` (not on ``intercept_``), applied as a
        decoupled weight decay: each minibatch shrinks *all* of W by
        ``1 - eta alpha mean_i s_i`` in O(1) through W's lazy global scale,
        outside the momentum. Feeding ``alpha W[C_t]`` into V instead would
        penalise only the classes present in the minibatch (and V is not
        scaled lazily); the decay is the exact gradient step of the penalty
        for every class at every step. V holds true (unscaled) values and is
        not shrunk.
    fit_intercept : bool, default=True
        Learn unpenalised class intercepts (with their own momentum).
    %(max_iter)s
    %(tol)s
    shuffle : bool, default=True
        Visit rows in a new random order each epoch (new minibatches).
    random_state : int, RandomState instance or None, default=None
        Seeds the row order and the uniform negatives.
    warm_start : bool, default=False
        Start ``fit`` from the previous ``coef_``, ``intercept_`` and
        momentum (and the previous ``nu`` when the data have as many rows
        as before).
    %(class_weight)s
    verbose : int, default=0
        Print one line per epoch.
    %(early_stopping)s
    %(validation_fraction)s
    %(n_iter_no_change)s

    n_jobs : int, default=None
        Threads of the training epochs and of the exact evaluation
        (``predict``, ``predict_proba``, ``log_loss``, ...): None means 1,
        -1 every core, as in scikit-learn. A minibatch's scores and
        gradient run class by class on the threads, so the model does not
        depend on ``n_jobs``, bit for bit (:ref:`threads_in_training`).

    %(allow_new_classes)s

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    coef_ : ndarray of shape (n_classes, n_features)
        One weight row per class, dtype of the training data.
    intercept_ : ndarray of shape (n_classes,)
        Class intercepts (zeros if ``fit_intercept=False``).
    eta0_ : float
        The initial learning rate used: ``eta0`` or the 'auto' rule.
    n_iter_ : int
        Epochs run by the last ``fit`` (1 after ``partial_fit``).
    t_ : int
        Rows processed since the model was created.
    loss_curve_ : list of float
        Per epoch, the weighted mean over the rows that had negatives of
        their sampled loss at the visited state, plus the penalty: for
        'sox', 'scent' and 'sgd' ``g_i exp(-nu_i) + nu_i - 1`` (plus log K
        with uniform negatives, an upper estimate of the log-loss; with
        in-batch negatives the proxy's value, not on the log-loss scale),
        for 'bsgd' the in-batch cross-entropy.
    validation_loss_ : list of float
        Exact validation log-loss per epoch (``early_stopping`` only).
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Feature names, when X has string column names.

    Notes
    -----
    Rows whose minibatch holds no negative for them (with in-batch
    negatives: every row of the minibatch has their label) get no ``nu``
    update and contribute nothing to that step (nor to ``loss_curve_``);
    their labels still serve as negatives for the other rows. A row of
    weight zero moves nothing: it is no negative, and its class takes no
    momentum step unless a row of positive weight (or a uniform draw)
    brings it into the minibatch; it still takes a place in the minibatch
    and gets its ``nu`` update.

    ``nu`` (one float64 per training row) persists across the epochs of
    ``fit`` and across warm-started fits on data of the same length. A row
    seen for the first time (the first epoch of ``fit``, and every row of a
    ``partial_fit`` call, since those rows are new) starts from
    ``nu_i = log g_i``, the log of its first minibatch's mean, which is the
    minimiser of its sampled objective; the update rule applies from its
    second visit on. The momentum V persists across ``partial_fit`` calls
    and warm starts; a cold ``fit`` resets it.

    References
    ----------
    "Section 6.3 Extreme Multi-class Classification", SCENT (Algorithm 26)
    and the SOX, SGD and BSGD comparators.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sksoftmax import SCENTClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = SCENTClassifier(batch_size=16, random_state=0).fit(X, y)
    >>> clf.predict_proba(X[:1]).shape
    (1, 3)
    """

    # the minibatch's scores and gradient run class by class on n_jobs
    # threads, with the results of one thread
    _threaded_epochs = True

    _parameter_constraints: dict = {
        **BaseSoftmaxClassifier._parameter_constraints,
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "variant": [StrOptions(set(_MODES))],
        "alpha_nu": [Interval(Real, 0, None, closed="neither")],
        "momentum": [Interval(Real, 0, 1, closed="right")],
        "negatives": [
            StrOptions({"in_batch", "in_batch_weighted", "uniform"})
        ],
    }

    __init__ = keyword_init(
        {
            "batch_size": 128,
            "variant": "sox",
            "alpha_nu": 1.0,
            "momentum": 0.1,
            "negatives": "in_batch_weighted",
        },
        decay=0.95,
    )

    def _new_row_state(self, n_rows):
        # NaN marks a row not seen yet: its nu starts from log g_i. The
        # array is kept so that the nu of a partial_fit batch can be read.
        self._new_nu = np.full(n_rows, np.nan, dtype=np.float64)
        return self._new_nu

    def _auto_eta0(self, curvature):
        """eta0='auto': 2 B / c times sqrt(50 / (rows per class)), rows
        per class at least 1 (see eta0)."""
        stats = self._row_norm_stats
        batch = min(self.batch_size, max(stats.n_rows, 1.0))
        n_classes = self.classes_.shape[0]
        return 2.0 * batch / curvature * stats.horizon_factor(n_classes)

    def _make_solver(self, eta0=None, n_threads=None):
        """The SCENT solver of the current parameters."""
        return SCENTSolver(
            batch_size=self.batch_size,
            variant=self.variant,
            negatives=self.negatives,
            alpha_nu=self.alpha_nu,
            momentum=self.momentum,
            **self._solver_options(eta0, n_threads),
        )

    def _divergence_hint(self):
        if self.variant == "sgd":
            return (
                ", or lower alpha_nu, or use the default variant='sox', "
                "whose closed-form nu step cannot overflow"
            )
        return ""
