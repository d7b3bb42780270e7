"""SCENT for extreme multi-class classification, with SOX, SGD and BSGD."""

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ._base import BaseSoftmaxClassifier
from ._scent_fast import MODES, scent_epoch32, scent_epoch64
from ._sgd_schedule import SCHEDULES, schedule_options
from ._shared._codes import Status

# variant -> the kernel's `mode` (NU_SCENT, NU_SOX, NU_SGD, LOSS_BSGD)
_MODES = MODES


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
        Which of the text's algorithms runs (the package's name for the
        switch between published variants of a method, see
        :ref:`shared_parameters`). 'scent', 'sox' and 'sgd' optimise the
        min-min objective above and differ in how ``nu_i`` moves; 'bsgd'
        is the text's BSGD comparator, without ``nu``. With g_i the row's
        sampled estimate of the inner mean (``negatives``):
        'scent' is Lemma 5.26's closed form
        ``nu_i <- nu_i + log(1 + a g_i) - log(1 + a exp(nu_i))``, the exact
        minimiser of ``g_i exp(-nu) + nu + D(nu, nu_i) / a`` with the
        Bregman divergence of ``phi(nu) = exp(-nu)``, a = ``alpha_nu``;
        'sox' is the same with the step ``a = alpha_nu * exp(-nu_i)``
        (SOX's moving average of exp(nu_i), with weight
        alpha_nu / (1 + alpha_nu) on g_i); 'sgd' is the stochastic
        coordinate step ``nu_i <- nu_i - alpha_nu (1 - g_i exp(-nu_i))``,
        which can overflow and is reported as divergence when it does.
        All are computed in log space (log-sum-exp shifted by the largest
        R_ij), never forming an exponential that can overflow.
        'bsgd' minimises the in-batch softmax cross-entropy,
        ``log(1 + c_i mean_{j in N_i} exp(R_ij))``, with ``c_i = |N_i|``
        (in-batch: each negative counted once) or K - 1 (uniform);
        with 'in_batch_weighted' c_i mean_{j in N_i} exp(R_ij) becomes the
        weighted estimate of sum_{j != y_i} exp(R_ij) (``negatives``). The
        text writes BSGD's denominator without the true class, which is
        unbounded below; here the true class is in it, as in
        cross-entropy.
        'sox' is the default because its step is relative: 'scent' moves
        ``nu_i`` by about ``a (g_i - exp(nu_i))`` once ``a g_i`` and
        ``a exp(nu_i)`` are small, and exp(nu_i), a mean of exp(R_ij),
        becomes small as the classes separate (many classes, a trained
        model), so nu_i stays near its first value while W moves and the
        gradient weights ``exp(R_ij - nu_i)`` grow without bound; 'sox'
        moves log exp(nu_i) a fixed fraction of the way to log g_i at any
        scale. Measured with bench_large_k.py (eta0='auto', ten epochs,
        test log-loss): 'scent' diverged in the second epoch at 18,793 and
        94,004 classes (at 94,004 with alpha_nu 1, 10 or 100 alike, and
        with a 2.6x smaller eta0) and reached 3.12 on Bibtex; 'sox'
        reached 5.90, 8.41 and 2.90.
    alpha_nu : float, default=1.0
        SCENT's alpha, SOX's gamma or SGD's step for ``nu`` (constant;
        not used by 'bsgd').
    momentum : float in (0, 1], default=0.1
        beta of Algorithm 26: ``V <- (1 - beta) V + beta Z`` on the
        minibatch's classes, then ``W <- W - eta V`` on them. 1.0 turns
        momentum off (V = Z) and no V is stored; otherwise V is a private
        (n_classes, n_features) array beside ``coef_`` (memory: twice W).
        Each epoch also uses a dense gradient workspace of
        ``batch_size`` (in-batch) or ``2 * batch_size`` (uniform) rows of
        ``n_features``. Momentum is applied lazily: a step writes only the
        minibatch's columns of V and W (the decay of the other columns and
        their move along V are kept as two numbers per class and written
        out every few dozen steps of the class and at the end of each
        epoch), so sparse rows cost O(nnz) per class, not O(n_features).
    negatives : {'in_batch', 'in_batch_weighted', 'uniform'}, \
            default='in_batch_weighted'
        The negatives N_i of row i. 'in_batch' (the text's choice): the
        labels of the minibatch's other rows whose label is not y_i, as a
        multiset, and g_i = mean_{j in N_i} exp(R_ij); only
        W[C_t], the rows of the minibatch's labels, is read and written.
        This optimises a **biased proxy** of the objective: the negatives
        follow the label frequencies, not 1/K each, and exclude y_i, so the
        fixed point of ``nu_i`` and the gradient in W are those of a
        frequency-weighted objective (its minimum over nu,
        log mean_{j in N_i} exp(R_ij), lacks the true class's term and is
        unbounded below when the classes separate). 'uniform':
        ``batch_size`` classes drawn uniformly from all K, shared by the
        minibatch; given that they differ from y_i they are uniform over
        the other K - 1, and
        g_i = (1 + (K-1) mean_{j in N_i} exp(R_ij)) / K is unbiased for the
        text's 1/K sum_j exp(R_ij), so the min-min objective optimised is the
        true one (the min over nu of its expectation is the log-loss minus
        log K); W is touched on the labels and the draws.
        'in_batch_weighted': the in-batch negatives, each weighted by its
        importance weight: they are draws from the label frequencies q
        (those of the rows of positive weight) restricted to the classes
        other than y_i, so a draw j stands for (1 - q_{y_i}) / q_j classes
        and ``g_i = (1 + (1 - q_{y_i}) / |N_i| sum_{j in N_i}
        exp(R_ij) / q_j) / K`` is unbiased for 1/K sum_j exp(R_ij) (up to
        drawing a minibatch's rows without replacement), as with 'uniform',
        at the in-batch cost (no draws; only W[C_t] touched). On five
        classes of frequencies 0.5 to 0.05 the exact objective of 60
        epochs was 1.002 times the optimum, against 7.7 times with
        'in_batch' (SOX).
    eta0 : float or 'auto', default='auto'
        Initial learning rate of W (eta_t). 'auto' (the value used is
        ``eta0_``) takes ``2 B / c * sqrt(50 / r)``, B the batch size (at
        most the rows), c the mean of ``||x_i||^2 + 1`` (the 1 only with
        intercepts), r = n / K the rows per class (at least 1; n the rows
        of ``fit``, or all rows seen by ``partial_fit``). The horizon
        factor ``sqrt(50 / r)``: a class's row of W moves only in the
        steps whose minibatch holds the class, about r times per epoch,
        and the best constant step of T steps of SGD scales as
        1 / sqrt(T); 50 is measured (the rows per class at which 2 B / c
        was right). Measured with the default negatives
        (bench_large_k.py, ten epochs, test log-loss; in brackets the grid
        1e-4..1e2's best): Bibtex (r = 31) 156.6, 2.629 (2.677 at 100);
        18,793 classes (r = 4.3) 53.5, 3.451 (3.524 at 100); 94,004
        classes (r = 4.3) 81.4, 7.105 (7.492 at 100); the tokens task
        (10,000 classes, r = 397) 18.2, 2.355 (2.298 at 10; 2 B / c = 51:
        2.651). The base 2 B / c: the step follows the minibatch
        mean of the rows' gradients, whose coefficients on a row's
        classes are at most one, so with sparse
        rows a row's own scores move by about eta c / B per step: B / c
        makes that one. The factor 2 is measured, not derived
        (bench_large_k.py, ten epochs, test log-loss, with the warmup of
        ``learning_rate``): on Bibtex, 18,793 and 94,004 Zipfian classes
        the best step was 1.5x to 6x B / c (Bibtex: 2.90 at B / c, 2.80 at
        2.3x, 2.94 at 3.9x; 18,793 classes: 5.90, 4.80 at 2.6x, 4.24 at
        6.4x, 5.33 at 13x; 94,004 classes: 8.41, 8.04 at 1.7x, 7.90 at
        2.5x, 9.77 at 8.4x), and without the warmup steps from 1.7x on
        ended the first epoch at 94,004 classes above the class-prior
        log-loss. 2 B / c with the warmup reached 2.78, 5.13 and 7.71,
        against 2.83, 4.37 and 8.54 for the best step of the 7-point grid
        1e-4..1e2 run with the warmup (100, 100 and 10): at 18,793 classes
        the warmup lets the grid's 100 do better still, while at 94,004
        classes 100 still ends the first epoch far above the prior
        (14.1); no factor tried suits both.
        Those figures are of the text's unweighted in-batch negatives and
        2 B / c alone. With the default 'in_batch_weighted', 2 B / c gave
        Bibtex 2.645, 94,004 classes 7.56, but 18,793 classes 4.93 (that
        set wants about 8 B / c) and the tokens task 2.651 (it wants
        about 0.4 B / c; 6 B / c ended its first epoch at 4.12, above
        the class prior 4.39): the horizon factor reconciles the two.
        Earlier tries that did not fit all three: B over the 99th
        percentile of ``||x_i||^2 + 1``; a correction for momentum's lag
        on classes rarely in a minibatch; the pilot of
        :class:`UMaxSoftmaxClassifier` (on a 30-class set, started 81x
        above B / c, it kept a step that looked best after two passes and
        diverged in the third epoch).
    learning_rate : {'exponential', 'constant', 'invscaling'}, \
            default='exponential'
        'exponential': ``eta0 * decay**epoch`` (in ``partial_fit`` one call
        counts as one epoch); 'constant': ``eta0``; 'invscaling':
        ``eta0 / t**power_t`` with t the rows seen, per minibatch. All
        three warm up: over the model's first epoch (the rows of ``fit``,
        or of the first ``partial_fit`` call) the step is multiplied by
        t / n, t the rows seen and n that epoch's rows (linear warmup,
        Goyal et al. 2017). With in-batch negatives the first steps push
        the frequent classes down hard while nu is still at its first
        values; a full step there ended the first epoch above the
        class-prior log-loss at 94,004 classes.
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
    max_iter : int, default=100
        Most epochs (passes over the training rows) of ``fit``.
    tol : float or None, default=1e-4
        ``fit`` stops when the monitored loss (the validation log-loss with
        ``early_stopping``, else the training objective recorded in
        ``loss_curve_``) has not improved by ``tol`` for
        ``n_iter_no_change`` epochs in a row. None: run ``max_iter`` epochs.
    shuffle : bool, default=True
        Visit rows in a new random order each epoch (new minibatches).
    random_state : int, RandomState instance or None, default=None
        Seeds the row order and the uniform negatives.
    warm_start : bool, default=False
        Start ``fit`` from the previous ``coef_``, ``intercept_`` and
        momentum (and the previous ``nu`` when the data have as many rows
        as before).
    class_weight : dict, 'balanced' or None, default=None
        Class weights, multiplying the sample weights of each class's rows
        (scikit-learn's meaning): a dict ``{label: weight}`` (missing labels
        weigh 1); 'balanced': ``n / (n_classes * n_k)``, n_k a class's
        summed sample weight, in ``partial_fit`` over every call so far
        (see :ref:`class weights <class_weight>`).
    verbose : int, default=0
        Print one line per epoch.
    early_stopping : bool, default=False
        Hold out a stratified ``validation_fraction`` of the rows, score
        their exact log-loss after every epoch and stop on it (``tol``,
        ``n_iter_no_change``); the model is the last epoch's, fitted on
        the other rows: ``SGDClassifier``'s meaning, and its default. Off
        by default: the exact score costs O(n_classes) per held-out row and
        epoch, more than a sampled epoch at many classes, and the split
        needs two rows of every class and as many held-out rows as classes
        (see :ref:`shared_parameters`).
    validation_fraction : float, default=0.1
        Share of the rows held out by ``early_stopping``.
    n_iter_no_change : int, default=8
        Epochs in a row without an improvement by ``tol`` before ``fit``
        stops.

    n_jobs : int, default=None
        Threads of the training epochs and of the exact evaluation
        (``predict``, ``predict_proba``, ``predict_topk``, ``log_loss``,
        ``score``, ...): None means 1, -1 every core, as in scikit-learn;
        OpenMP limits (``OMP_NUM_THREADS``, threadpoolctl) are respected.
        In training, a minibatch's two passes over its rows and classes
        (the scores and the gradient) run class by class on the threads,
        each class in row order, so the model does not depend on
        ``n_jobs`` (bit for bit); the per-row loss and the per-class step
        run on one thread.

    allow_new_classes : bool, default=False
        Let ``partial_fit`` add classes it has not seen (in ``y`` or
        ``classes``) instead of raising: the model grows by them, each
        starting at its class-prior intercept, and they are appended to
        ``classes_`` in order of arrival (see the user guide's streaming
        page).

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

    def __init__(
        self,
        *,
        batch_size=128,
        variant="sox",
        alpha_nu=1.0,
        momentum=0.1,
        negatives="in_batch_weighted",
        eta0="auto",
        learning_rate="exponential",
        decay=0.95,
        power_t=0.5,
        alpha=0.0,
        fit_intercept=True,
        max_iter=100,
        tol=1e-4,
        shuffle=True,
        random_state=None,
        warm_start=False,
        verbose=0,
        early_stopping=False,
        validation_fraction=0.1,
        n_iter_no_change=8,
        n_jobs=None,
        class_weight=None,
        allow_new_classes=False,
    ):
        self.batch_size = batch_size
        self.variant = variant
        self.alpha_nu = alpha_nu
        self.momentum = momentum
        self.negatives = negatives
        self.eta0 = eta0
        self.learning_rate = learning_rate
        self.decay = decay
        self.power_t = power_t
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.shuffle = shuffle
        self.random_state = random_state
        self.warm_start = warm_start
        self.verbose = verbose
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.n_jobs = n_jobs
        self.class_weight = class_weight
        self.allow_new_classes = allow_new_classes

    def _new_row_state(self, n_rows):
        # NaN marks a row not seen yet: its nu starts from log g_i. The
        # array is kept so that the nu of a partial_fit batch can be read.
        self._new_nu = np.full(n_rows, np.nan, dtype=np.float64)
        return self._new_nu

    def _auto_eta0(self, curvature):
        """eta0='auto': 2 B / c times sqrt(50 / (rows per class)), rows
        per class at least 1 (see eta0)."""
        n_rows = max(self._row_norm_stats[2], 1.0)
        batch = min(self.batch_size, n_rows)
        return 2.0 * batch / curvature * self._horizon_factor()

    def _init_state(self, n_features, dtype):
        super()._init_state(n_features, dtype)
        self.__dict__.pop("_velocity", None)
        self.__dict__.pop("_velocity_b", None)

    def _adopt_dtype(self, dtype):
        super()._adopt_dtype(dtype)
        if hasattr(self, "_velocity"):
            self._velocity = self._velocity.astype(dtype, copy=False)
            self._velocity_b = self._velocity_b.astype(dtype, copy=False)

    def _per_class_arrays(self):
        # the momentum of a new class starts at zero
        return super()._per_class_arrays() + [
            ("_velocity", 0, 1),
            ("_velocity_b", 0, 1),
        ]

    def _momentum_buffers(self):
        """V and Vb for the kernel, allocated on first use."""
        dtype = self.coef_.dtype
        if self.momentum >= 1.0:
            return (
                np.empty((0, 1), dtype=dtype),
                np.empty(0, dtype=dtype),
            )
        V = getattr(self, "_velocity", None)
        if V is None or V.shape != self.coef_.shape or V.dtype != dtype:
            # written, not calloc'ed, for the same reason as coef_
            V = np.empty(self.coef_.shape, dtype=dtype)
            V.fill(0)
            self._velocity = V
            self._velocity_b = np.zeros(self.coef_.shape[0], dtype=dtype)
        return self._velocity, self._velocity_b

    def _kernel_options(self, dataset, eta_epoch, t):
        """The kernel's ScentOptions (``_scent_fast.pyx.tp``) for an
        epoch."""
        return {
            "batch_size": self.batch_size,
            "mode": _MODES[self.variant],
            "uniform": self.negatives == "uniform",
            "alpha_nu": float(self.alpha_nu),
            "beta": float(self.momentum),
            "schedule": schedule_options(
                SCHEDULES[self.learning_rate].code,
                eta_epoch,
                self.eta0_,
                self.power_t,
            ),
            "warmup": self._warmup_rows(dataset, t),
            "alpha": self.alpha,
            "fit_intercept": self.fit_intercept,
            "shuffle": self.shuffle,
            "lazy_momentum": self._lazy_momentum(dataset),
            "n_threads": self._training_threads(),
        }

    def _run_epoch(
        self, dataset, weights, y_enc, nu, order, eta_epoch, t, first_visit
    ):
        kernel = (
            scent_epoch64 if self.coef_.dtype == np.float64 else scent_epoch32
        )
        V, Vb = self._momentum_buffers()
        status, obj_sum, weight_sum, t, row, value = kernel(
            dataset,
            weights,
            y_enc,
            nu,
            V,
            Vb,
            self._rng,
            order,
            t,
            self._log_inv_label_frequency(dataset, y_enc),
            self._kernel_options(dataset, eta_epoch, t),
        )
        if status == Status.STATUS_OVERFLOW:
            self._raise_divergence(
                "an exponent R_ij - nu_i would overflow", row, value
            )
        if status == Status.STATUS_NONFINITE:
            self._raise_divergence(
                "nu, a shifted logit or ||W|| is not finite", row, value
            )
        return obj_sum, weight_sum, t

    def _log_inv_label_frequency(self, dataset, y_enc):
        """-log q_k for 'in_batch_weighted' (else empty): q the label
        frequencies among the rows of positive weight, the distribution
        the in-batch negatives are drawn from."""
        if self.negatives != "in_batch_weighted":
            return np.empty(0, dtype=np.float64)
        live = dataset.weights > 0
        counts = np.bincount(y_enc[live], minlength=self.coef_.shape[0])
        with np.errstate(divide="ignore"):
            return np.log(max(counts.sum(), 1)) - np.log(counts)

    def _lazy_momentum(self, dataset):
        """Whether the kernel applies momentum lazily (see momentum).

        The lazy step costs O(n_batch_columns) per class against
        O(n_features), but adds a read of V to every score (batch_size *
        n_batch_classes * nnz random reads per step, against the dense
        step's n_batch_classes * n_features sequential ones) and a pass
        over the class every few dozen of its steps. Measured: at
        n_features / (batch_size * nnz) = 85 (65,536 features, 6 nonzeros)
        lazy was 2.4x faster; at 7.8 (18,793 classes, 10,000 features, 10
        nonzeros) 1.3x slower. It is used from a ratio of 32 on.
        """
        if dataset.is_dense or dataset.n_samples == 0:
            return False
        nnz_per_row = dataset.nnz / dataset.n_samples
        return 32 * self.batch_size * nnz_per_row < dataset.n_features

    def _warmup_rows(self, dataset, t):
        """Rows over which the step ramps up: the model's first epoch.

        Recorded when the model starts (t = 0): the rows of ``fit``'s data,
        or of the first ``partial_fit`` call; later epochs and calls keep
        it (their t is past it).
        """
        if t == 0:
            self._warmup = dataset.n_samples
        return getattr(self, "_warmup", 0)

    def _divergence_hint(self):
        if self.variant == "sgd":
            return (
                ", or lower alpha_nu, or use the default variant='sox', "
                "whose closed-form nu step cannot overflow"
            )
        return ""
