"""U-max: unbiased SGD on the double-sum softmax (Fagan & Iyengar 2018)."""

from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ._base import DoubleSumSoftmaxClassifier
from ._docstrings import fill_doc
from ._parameters import keyword_init
from ._shared._codes import Status
from ._solver import EpochDiverged, SGDSolver
from ._umax_fast import umax_epoch32, umax_epoch64


class UMaxSolver(SGDSolver):
    """U-max epochs (kernel ``_umax_fast``), the solver of
    :class:`UMaxSoftmaxClassifier`.

    Parameters
    ----------
    n_sampled : int
        Classes drawn per row and step.
    delta : float or None
        The U-max threshold (None: plain SGD on the double sum).
    variant : {'proposed', 'raman'}
        The double sum optimised.
    **common
        The parameters of :class:`~sksoftmax._solver.SGDSolver`.
    """

    kernels = (umax_epoch64, umax_epoch32)

    def __init__(self, *, n_sampled, delta, variant, **common):
        super().__init__(**common)
        self.n_sampled = n_sampled
        self.delta = delta
        self.variant = variant

    def _bounds(self, dataset):
        """B_W, B_u and sum(s) log K of App. B (per-row loss), or inf."""
        if self.alpha <= 0:
            return np.inf, np.inf, np.inf
        n_classes = self.n_classes
        bound_w = np.sqrt(2.0 * np.log(n_classes) / self.alpha)
        bound_u = np.inf
        if not self.fit_intercept:
            b_x = np.sqrt(dataset.row_sq_norms.max(initial=0.0))
            bound_u = np.logaddexp(
                0.0, np.log(n_classes - 1) + 2 * b_x * bound_w
            )
        return bound_w, bound_u, dataset.weights.sum() * np.log(n_classes)

    def _options(self, dataset, eta_epoch, first_visit):
        """The kernel's UMaxOptions (``_umax_fast.pyx.tp``) for an epoch."""
        bound_w, bound_u, weight_log_k = self._bounds(dataset)
        return {
            "n_sampled": self.n_sampled,
            "delta": 1.0 if self.delta is None else float(self.delta),
            "vanilla": self.delta is None,
            "raman": self.variant == "raman",
            "init_u": first_visit,
            "schedule": self._schedule(eta_epoch),
            "alpha": self.alpha,
            "bound_w": bound_w,
            "bound_u": bound_u,
            "weight_log_k": weight_log_k,
            "fit_intercept": self.fit_intercept,
            "shuffle": self.shuffle,
            "n_threads": self.n_threads,
        }

    def epoch(
        self, state, dataset, weights, y, u, order, eta_epoch, first_visit
    ):
        status, obj_sum, weight_sum, t, row, value = self._kernel(state)(
            dataset,
            weights,
            y,
            u,
            state.rng,
            order,
            state.t,
            self._options(dataset, eta_epoch, first_visit),
            self._table(state),
            self._adagrad(state),
        )
        if status == Status.STATUS_OVERFLOW:
            raise EpochDiverged(
                "the exponent x.(w_k - w_y) - u would overflow", row, value
            )
        if status == Status.STATUS_NONFINITE:
            raise EpochDiverged(
                "u, a class score or ||W|| is not finite", row, value
            )
        state.t = t
        return obj_sum, weight_sum


@fill_doc
class UMaxSoftmaxClassifier(DoubleSumSoftmaxClassifier):
    """Softmax regression by U-max (Fagan & Iyengar 2018, Algorithm 2).

    Minimises the mean log-loss ``-log p(y_i | x_i)`` of a linear softmax
    model plus ``alpha / 2 * ||coef_||_F^2`` through its double-sum
    formulation (eq. 5): one auxiliary variable ``u_i`` per training row
    stands for the row's log-normaliser, so that each step samples one row and
    ``n_sampled_classes`` classes and costs O(n_sampled_classes * nnz(x_i)),
    whatever the number of classes. The stochastic gradient is unbiased, and
    U-max keeps it bounded by raising ``u_i`` to
    ``log(1 + sum_j exp(x_i.(w_kj - w_yi)))`` whenever ``u_i`` lies more than
    ``delta`` below that value (Sec. 3.2). ``predict_proba`` is the exact
    softmax over all classes.

    Parameters
    ----------
    n_sampled_classes : int, default=5
        Classes m drawn with replacement per row and step (the paper's
        m = 5), by ``sampler``; with replacement, any m is used as given
        (even above n_classes - 1).
    delta : float or None, default=1.0
        U-max threshold; ``None`` turns the increase of ``u_i`` off, which is
        plain SGD on the double sum (the paper's "vanilla" baseline, known to
        overflow at large ``eta0``).
    variant : {'proposed', 'raman'}, default='proposed'
        The published double sum optimised (the package's name for the
        switch between published variants of a method, see
        :ref:`shared_parameters`): 'proposed', the paper's eq. 5 (variable
        u_i, the row's log-normaliser relative to its true class), or
        'raman', Raman et al.'s eq. 8 (variable u_bar_i = u_i + x_i.w_yi +
        b_yi), whose stochastic gradients are larger; kept for the paper's
        Fig. 3 comparison. The U-max rule, clipping and bounds act on
        u_i = u_bar_i - s_yi at the current W in both.
    sampler : {'uniform', 'frequency'}, default='uniform'
        How the classes are drawn. 'uniform': uniformly from the classes
        other than the row's (the paper's sampler). 'frequency': from all
        classes with probability q_k proportional to
        ``(class_count_[k] + 1) ** sampler_power``, each draw weighted by
        ``1 / (m q_k)`` so that the gradient stays unbiased (see Notes);
        frequent classes, whose terms are usually the large ones, are then
        sampled more often.
    sampler_power : float, default=1.0
        Exponent of the class counts in the 'frequency' sampler; 0 samples
        uniformly from all classes (the row's own included).
    eta0 : float or 'auto', default='auto'
        Initial learning rate, for the per-row loss (the paper's eta0 * N,
        so its Table 2 values carry over). 'auto' starts from the rule
        ``1 / (c kappa)``, c the mean of ``||x_i||^2 + 1`` and kappa the
        largest importance weight of a class, and with at least 500
        training rows refines it by a pilot on held-out rows; the value
        used is ``eta0_``, the pilot's trials ``eta0_trials_``. A float is
        used as it is. Rule and pilot: :ref:`umax_eta0`.
    learning_rate : {'exponential', 'constant', 'invscaling', 'adagrad'}, \
            default='exponential'
        'exponential': ``eta0 * decay**epoch`` (the paper's protocol; in
        ``partial_fit`` one call counts as one epoch); 'constant': ``eta0``;
        'invscaling': ``eta0 / t**power_t`` with t the rows seen;
        'adagrad': per-feature steps (AdaGrad) with one accumulator per
        feature column shared by all classes, for hashed sparse features;
        it stalls at tens of thousands of classes, where the default is
        better (:ref:`umax_adagrad`).
    decay : float, default=0.9
        Per-epoch factor of the 'exponential' schedule.
    power_t : float, default=0.5
        Exponent of the 'invscaling' schedule.
    alpha : float, default=0.0
        L2 penalty on ``coef_`` (not on ``intercept_``), the exact gradient
        of ``alpha/2 ||W||^2`` applied to all of W at every step in O(1)
        through a lazy global scale (per column under 'adagrad'). With
        ``alpha > 0`` the iterates are also projected onto the bounded set
        of the paper's App. B (:ref:`umax_alpha`).
    fit_intercept : bool, default=True
        Learn unpenalised class intercepts.
    %(max_iter)s
    %(tol)s
    shuffle : bool, default=True
        Visit rows in a new random order each epoch.
    random_state : int, RandomState instance or None, default=None
        Seeds the row order and the class sampling.
    warm_start : bool, default=False
        Start ``fit`` from the previous ``coef_`` / ``intercept_`` (and the
        previous ``u`` when the data have as many rows as before).
    %(class_weight)s
    verbose : int, default=0
        Print one line per epoch.
    %(early_stopping)s
    %(validation_fraction)s
    %(n_iter_no_change)s
    average : bool or int, default=False
        Iterate (Polyak-Ruppert) averaging, as in scikit-learn's
        ``SGDClassifier``. True: ``coef_`` and ``intercept_`` are the mean
        of the iterates over every row seen; an int n: the mean from the
        n-th row seen on. The steps go on from the iterate; the mean costs
        O(1) more per row and twice the memory of W
        (:ref:`iterate_averaging`). Not available with
        ``learning_rate='adagrad'`` and ``alpha > 0`` (ValueError).

    %(n_jobs_hogwild)s

    %(allow_new_classes)s

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    coef_ : ndarray of shape (n_classes, n_features)
        One weight row per class (two rows for two classes, unlike
        LogisticRegression's one), dtype of the training data.
    intercept_ : ndarray of shape (n_classes,)
        Class intercepts (zeros if ``fit_intercept=False``).
    n_sampled_classes_ : int
        The ``n_sampled_classes`` used (U-max draws with replacement: the
        parameter itself; samplers without replacement lower it to the
        classes they can draw, see :class:`ImplicitSGDClassifier`).
    eta0_ : float
        The initial learning rate used: ``eta0``, or the value of 'auto'
        (the pilot's best trial times ``min(1, sqrt(50 / r))``, or the
        closed-form rule from the rows seen so far when there were too few
        rows for a pilot).
    eta0_trials_ : ndarray of shape (n_trials, 3) or None
        With ``eta0='auto'``: the pilot's trials, rows of (eta0, held-out
        log-loss, rows of the trial's stage) in the order run; None when no
        pilot ran (fewer than 500 training rows). Not set when eta0 is a float.
    class_count_ : ndarray of shape (n_classes,)
        Summed weight (sample weight times class weight) of the training
        rows of each class seen so far; the intercepts start at their log
        frequencies and the 'frequency' sampler draws from them (see
        Notes).
    n_iter_ : int
        Epochs run by the last ``fit`` (1 after ``partial_fit``).
    t_ : int
        Rows processed since the model was created (schedules use it).
    loss_curve_ : list of float
        Per epoch, the mean over the epoch's rows of the sampled double-sum
        terms (an unbiased estimate of the double-sum objective at the
        visited iterates, an upper estimate of the log-loss) plus the
        penalty: it costs nothing beyond the step itself.
    validation_loss_ : list of float
        Exact validation log-loss per epoch (``early_stopping`` only).
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Feature names, when X has string column names.

    Notes
    -----
    The per-row variables ``u`` (one float64 per training row) persist across
    the epochs of ``fit`` and across warm-started fits on data of the same
    length. In ``partial_fit`` the rows are new on each call: each arriving
    row's ``u_i`` is set by the U-max rule from its sampled classes,
    ``u_i = log(1 + sum_j exp(x_i.(w_kj - w_yi)))``, before its first step
    (``fit`` does the same in its first epoch).

    With ``fit_intercept=True`` the model starts at the class-prior model:
    ``coef_ = 0`` and ``intercept_[k] = log p_k``, p_k the weighted class
    frequency with one pseudo-row spread over the classes (``partial_fit``:
    classes first seen in a batch start at their frequency in the rows seen
    so far). At many skewed classes this start is far better than the
    uniform model, whose log-loss is log K.

    With ``sampler='frequency'`` the m classes are drawn independently
    from q over all K classes (the row's own class included) and each
    draw of a class k other than y_i is weighted by ``1 / (m q_k)``, which
    keeps the estimate of eq. 6's inner sum unbiased; the U-max rule sums
    over the distinct classes drawn (derivation:
    :ref:`umax_frequency_sampler`).

    References
    ----------
    %(fagan_iyengar_2018)s

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sksoftmax import UMaxSoftmaxClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = UMaxSoftmaxClassifier(random_state=0).fit(X, y)
    >>> clf.predict_proba(X[:1]).shape
    (1, 3)

    The mean of the iterates from the 1000th row on (``average=True``: from
    the first):

    >>> avg = UMaxSoftmaxClassifier(average=1000, random_state=0).fit(X, y)
    >>> avg.coef_.shape, avg.t_ >= 1000
    ((3, 4), True)
    """

    _parameter_constraints: dict = {
        **DoubleSumSoftmaxClassifier._parameter_constraints,
        "delta": [Interval(Real, 0, None, closed="neither"), None],
        "variant": [StrOptions({"proposed", "raman"})],
    }

    __init__ = keyword_init(
        {
            "n_sampled_classes": 5,
            "delta": 1.0,
            "variant": "proposed",
            "sampler": "uniform",
            "sampler_power": 1.0,
            "average": False,
        },
    )

    def _make_solver(self, eta0=None, n_threads=None):
        """The U-max solver of the current parameters."""
        return UMaxSolver(
            n_sampled=self.n_sampled_classes,
            delta=self.delta,
            variant=self.variant,
            **self._solver_options(eta0, n_threads),
        )

    def _divergence_hint(self):
        if self.delta is None:
            return (
                ", or use U-max (delta=1.0) instead of plain double-sum "
                "SGD (delta=None), whose gradients are unbounded"
            )
        return ", or lower delta"

    def _sampling_probabilities(self):
        """q_k, the probability that one draw of a row's step is class k.

        Uniform draws exclude the row's own class: q_k = 1 / (K - 1);
        'frequency' draws take q from the class counts.
        """
        table = self._sampler_table()
        if table is not None:
            return np.asarray(table.q)
        n_classes = self.classes_.shape[0]
        return np.full(n_classes, 1.0 / (n_classes - 1))

    def _auto_eta0(self, curvature):
        """eta0='auto': no class score moves by much more than one per step.

        A step moves w_k by eta e^(d_ik - u_i) / (m q_k) x_i for each of
        the m draws of class k, and w_y by eta times the sum of those, each
        moving its class's score on the row by eta times the coefficient
        times ||x_i||^2 + 1 (the intercept). Near u_i's optimum
        e^(d_ik - u_i) = p_k(x_i), the model's probability of class k, so a
        sampled class's coefficient is p_k(x_i) / (m q_k): with uniform
        draws (q_k = 1 / (K - 1)) up to (K - 1) / m, reached only by
        classes the model predicts with high probability. Bounding the move
        of classes predicted with probability up to phi = 0.1, of classes
        at their prior frequency p_k (the class-prior start) and of the
        true class (coefficient 1 - p_y <= 1):

            kappa = max(1, max_k p_k / (m q_k), phi max_k 1 / (m q_k)),
            eta0 = 1 / (c kappa),

        c the mean of ||x_i||^2 + [fit_intercept]. Larger probabilities
        give larger moves, which the U-max increase of u_i bounds
        (e^(d - u) <= e^delta). phi is empirical, chosen from grids of
        eta0 on benchmark sets; the pilot refines the rule's step.
        """
        if self._uses_adagrad():
            return self._auto_eta0_adagrad(curvature)
        phi = 0.1
        p = self._prior_frequencies()
        q = self._sampling_probabilities()
        m = self.n_sampled_classes
        kappa = max(
            1.0, float(np.max(p / q)) / m, phi / (m * float(np.min(q)))
        )
        return 1.0 / (curvature * kappa)

    def _auto_eta0_adagrad(self, curvature):
        """eta0='auto' under learning_rate='adagrad': the constant 3.

        AdaGrad's eta0 is in units of the weights: feature j's steps are
        eta0 g_j / sqrt(sum of g_j^2 so far), so a coefficient moves by at
        most eta0 per step and by about eta0 sqrt(n) over n steps of
        consistent sign, whatever the scale of the gradients; Duchi, Hazan
        & Singer (2011, Cor. 6) set it to the largest coefficient of the
        solution, D_inf / sqrt(2). Because the accumulators normalise the
        gradient, the importance factor kappa and the row curvature c of
        the other schedules' rule cancel out, and no closed form of the
        data's sizes gives D_inf. The constant is empirical: the best
        point of grids of eta0 over ten epochs on benchmark sets of
        different row norms. The pilot refines it.
        """
        return 3.0
