"""Implicit SGD on the double-sum softmax (Fagan & Iyengar 2018)."""

import numpy as np

from ._base import DoubleSumSoftmaxClassifier
from ._docstrings import fill_doc
from ._implicit_fast import implicit_epoch32, implicit_epoch64
from ._parameters import keyword_init
from ._shared._codes import Status
from ._solver import EpochDiverged, SGDSolver


class ImplicitSolver(SGDSolver):
    """Implicit SGD epochs (kernel ``_implicit_fast``), the solver of
    :class:`ImplicitSGDClassifier`.

    Parameters
    ----------
    n_sampled : int
        Classes per step (already lowered to the distinct-draw limit).
    raise_u : bool
        Raise a revisited row's u_i to the first-visit rule.
    **common
        The parameters of :class:`~sksoftmax._solver.SGDSolver`.

    Attributes
    ----------
    n_evals_per_step : float
        Root-finder evaluations per step in the last epoch.
    """

    kernels = (implicit_epoch64, implicit_epoch32)

    def __init__(self, *, n_sampled, raise_u, **common):
        super().__init__(**common)
        self.n_sampled = n_sampled
        self.raise_u = raise_u

    def _options(self, eta_epoch, first_visit):
        """The kernel's ImplicitOptions (``_implicit_fast.pyx.tp``) for an
        epoch."""
        return {
            "n_sampled": self.n_sampled,
            "init_u": first_visit,
            "schedule": self._schedule(eta_epoch),
            "alpha": self.alpha,
            "fit_intercept": self.fit_intercept,
            "shuffle": self.shuffle,
            "raise_u": self.raise_u,
            "n_threads": self.n_threads,
        }

    def epoch(
        self, state, dataset, weights, y, u, order, eta_epoch, first_visit
    ):
        t = state.t
        status, obj_sum, weight_sum, t_new, n_evals, row, value = (
            self._kernel(state)(
                dataset,
                weights,
                y,
                u,
                state.rng,
                order,
                t,
                self._options(eta_epoch, first_visit),
                self._table(state),
                self._adagrad(state),
            )
        )
        if status != Status.STATUS_OK:
            raise EpochDiverged("u or ||W|| is not finite", row, value)
        self.n_evals_per_step = n_evals / max(t_new - t, 1)
        state.t = t_new
        return obj_sum, weight_sum


@fill_doc
class ImplicitSGDClassifier(DoubleSumSoftmaxClassifier):
    """Softmax regression fitted by Implicit SGD (Fagan & Iyengar 2018).

    The same double-sum formulation as :class:`UMaxSoftmaxClassifier` (one
    variable ``u_i`` per training row), optimised with implicit (proximal)
    steps: each step samples one row and one class k != y_i and moves to
    ``argmin 2 eta f_ik(theta) + ||theta - theta_old||^2`` exactly. The
    proximal problem reduces to one scalar equation in ``u_i`` (App. E.1),
    solved in log space through the Wright omega function, so the step is
    bounded (Prop. 2), never overflows, and the method is robust to the
    learning rate. A step costs two sparse dot products, two sparse updates
    and a handful of scalar evaluations, whatever the number of classes.

    Parameters
    ----------
    n_sampled_classes : int, default=1
        Classes m per step. m = 1 is Alg. 1 (one class, a scalar equation
        in u_i bracketed by App. E.1); m > 1 follows App. E.3 (m distinct
        classes, safeguarded Newton steps on a monotone equation). With
        the uniform sampler a value above n_classes - 1 is lowered to it
        with a UserWarning (:ref:`implicit_sampled_classes`); the value
        used is ``n_sampled_classes_``.
    sampler : {'uniform', 'frequency'}, default='frequency'
        'uniform': the paper's sampler. 'frequency': the m classes are
        drawn with replacement with probability q_k proportional to
        ``(class_count_[k] + 1) ** sampler_power``, each weighted by
        ``1 / (m q_k)`` (see Notes). 'frequency' is the default: under
        uniform draws the implicit step caps the move of each heavily
        weighted sampled class, which slows the fit of the intercepts
        (:ref:`implicit_sampler`).
    sampler_power : float, default=1.0
        Exponent of the class counts in the 'frequency' sampler; 0 samples
        uniformly from all classes (the row's own included).
    eta0 : float or 'auto', default='auto'
        Initial learning rate, per-row loss (the paper's eta * N). 'auto'
        starts from ``1 / c``, c the mean of ``||x_i||^2 + 1``: the
        implicit step cannot overshoot, so it needs no importance factor;
        with at least 500 rows the pilot of :class:`UMaxSoftmaxClassifier`
        refines it. The value used is ``eta0_``, the pilot's trials
        ``eta0_trials_`` (:ref:`implicit_eta0`).
    learning_rate : {'exponential', 'constant', 'invscaling', 'adagrad'}, \
            default='exponential'
        As in :class:`UMaxSoftmaxClassifier`. 'adagrad': per-feature steps
        with one accumulator per feature column shared by all classes and
        one for the intercepts (memory O(n_features)), taken implicitly:
        the proximal step in the metric of the per-feature steps, still
        exact and O(nnz) (derivation: :ref:`implicit_adagrad`).
    decay : float, default=0.9
        Per-epoch factor of the 'exponential' schedule.
    power_t : float, default=0.5
        Exponent of the 'invscaling' schedule.
    alpha : float, default=0.0
        L2 penalty on ``coef_``. It enters every implicit step for all
        classes: the proximal map of ``alpha/2 ||W||^2`` shrinks every class
        by ``1 / (1 + eta alpha)``, which is one O(1) change of W's lazy
        scale. The paper instead puts ``mu beta_j / 2 ||w_j||^2`` on the two
        sampled classes only (beta_j the inverse probability of sampling
        class j); both are unbiased for the same objective, and this form
        sets every beta_j to 1 at the cost of O(1).
    fit_intercept : bool, default=True
        Learn unpenalised class intercepts; they take part in the proximal
        step with unit curvature. Rows whose features are all zero are then
        fitted through the intercepts alone; with ``fit_intercept=False``
        such rows make the step undefined (division by ||x||^2 = 0) and
        ``fit`` rejects them with a ValueError.
    max_iter, tol, shuffle, random_state, warm_start, verbose, \
early_stopping, validation_fraction, n_iter_no_change, class_weight
        As in :class:`UMaxSoftmaxClassifier`. ``verbose`` also reports the
        mean number of root-finder evaluations per step (Prop. 4 bounds it by
        log2(1/eps) + log2(interval)).
    raise_u : bool, default=True
        On every later visit of a row, first raise its ``u_i`` to the rule
        of a first visit, ``log(1 + sum_k exp(z_k))`` over the classes
        drawn, if it lies below (a departure from Alg. 1; ``False`` is
        Alg. 1 as published). The raise only moves u_i towards its
        optimum, keeps Alg. 1's fixed point, and stops rows that fell
        behind from taking steps scaled up by ``exp(lag)``. Not applied
        with 'adagrad'. Derivation: :ref:`implicit_raise_u`.
    average : bool or int, default=False
        Iterate averaging, as in :class:`UMaxSoftmaxClassifier`: the mean
        of the weights after each row's implicit step (a row of weight zero
        counts, unchanged), at the same costs. Not available with
        ``learning_rate='adagrad'`` and ``alpha > 0`` (ValueError).

    %(n_jobs_hogwild)s

    %(allow_new_classes)s

    Attributes
    ----------
    classes_, coef_, intercept_, n_sampled_classes_, eta0_, eta0_trials_, \
class_count_, n_iter_, t_, loss_curve_, validation_loss_, n_features_in_, \
feature_names_in_
        As in :class:`UMaxSoftmaxClassifier`; ``loss_curve_`` sums the
        sampled double-sum terms at the new iterates.
    n_evals_per_step_ : float
        Mean number of evaluations of the scalar equation per step in the
        last epoch.

    Notes
    -----
    The per-row ``u`` is kept as in :class:`UMaxSoftmaxClassifier`: over
    the epochs of ``fit`` and warm starts on data of the same length; rows
    seen for the first time (first epoch of ``fit``, every ``partial_fit``
    batch) start at ``log(1 + exp(x_i.(w_k - w_yi)))``, the U-max rule with
    their sampled classes. One row per step (the paper's n = 1); its
    recommended and default setting is m = 1.

    With ``sampler='frequency'`` the classes come from q over all K
    classes, the row's own included. For m = 1 the sampled function is
    ``s_i (u_i + e^{-u_i} + [k != y_i] e^{z_k - u_i} / q_k - 1)``, whose
    expectation over k ~ q is the row's double-sum term (eq. 6): the
    factor K-1 of Alg. 1 becomes ``1 / q_k`` (``log(K-1)`` in the Wright
    omega argument of App. E.1 becomes ``-log q_k``), and a draw of y_i is
    an implicit step on u_i alone (plus the ridge's shrinkage), in closed
    form ``u' = u - e + omega(log e + e - u)``, e = eta s_i. For m > 1 the
    m draws are independent (with replacement), ``1/m sum_j [k_j != y_i]
    e^{z_kj - u_i} / q_kj`` is again unbiased, and the draws of one class
    are merged into one term of weight ``n_k / (m q_k)`` so that App. E.3's
    solution holds with one weight per class,
    ``a_k = omega(log(c e w_k) + s_bar_k - v)``.

    References
    ----------
    %(fagan_iyengar_2018)s

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sksoftmax import ImplicitSGDClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = ImplicitSGDClassifier(random_state=0).fit(X, y)
    >>> clf.predict_proba(X[:1]).shape
    (1, 3)
    """

    _parameter_constraints: dict = {
        **DoubleSumSoftmaxClassifier._parameter_constraints,
        "raise_u": ["boolean"],
    }

    __init__ = keyword_init(
        {
            "n_sampled_classes": 1,
            "sampler": "frequency",
            "sampler_power": 1.0,
            "raise_u": True,
            "average": False,
        },
    )

    def _distinct_draw_limit(self):
        # uniform draws are distinct classes other than the row's own
        if self.sampler == "uniform":
            return self.classes_.shape[0] - 1
        return None

    def _check_dataset(self, dataset):
        if not self.fit_intercept:
            empty = np.flatnonzero(dataset.row_sq_norms == 0)
            if empty.size:
                raise ValueError(
                    f"ImplicitSGDClassifier with fit_intercept=False cannot "
                    f"fit rows whose features are all zero (the implicit "
                    f"step divides by ||x||^2); rows {empty[:10].tolist()} "
                    "are. Drop them or set fit_intercept=True."
                )
        super()._check_dataset(dataset)

    def _make_solver(self, eta0=None, n_threads=None):
        """The Implicit SGD solver of the current parameters."""
        return ImplicitSolver(
            n_sampled=self._n_sampled_used(),
            # not under adagrad (see the raise_u entry of the docstring)
            raise_u=self.raise_u and not self._uses_adagrad(),
            **self._solver_options(eta0, n_threads),
        )

    def _after_epoch(self, solver):
        self.n_evals_per_step_ = solver.n_evals_per_step

    def _verbose_extra(self):
        return f", {self.n_evals_per_step_:.1f} root-finder evaluations/step"

    def _auto_eta0(self, curvature):
        """eta0='auto': 1 / (mean ||x_i||^2 + [fit_intercept]).

        The explicit step of U-max must stay below 1 / (c kappa), kappa the
        largest importance-weighted coefficient (see
        ``UMaxSoftmaxClassifier``). The implicit step cannot overshoot: the
        score change a of a sampled class solves a e^a = e (K-1) / gamma
        e^(z - u) (eq. 13-14), which grows only with the logarithm of the
        importance weight. What is left is the scale of the unweighted
        gradient: the true class's coefficient 1 - p_y <= 1 moves its score
        by eta c, so eta0 = 1 / c with c the mean row curvature.

        Under learning_rate='adagrad': ``300 c`` (see
        ``_auto_eta0_adagrad``).
        """
        if self._uses_adagrad():
            return self._auto_eta0_adagrad(curvature)
        return 1.0 / curvature

    def _auto_eta0_adagrad(self, curvature):
        """eta0='auto' under learning_rate='adagrad': 300 c.

        With per-feature steps the implicit step moves the scores by a,
        a e^a = s w C e^(z - u), C = 2 eta0 (sum_j p_j x_ij^2 + p_b)
        (module docstring of the kernel): a grows only with log(eta0), so
        the step cannot overshoot and its best eta0 is large, set by how
        far u_i (stepped by eta0 s_i) and the rarely seen columns should
        move per visit. No closed form was found; the constant 300 was
        chosen from grids of eta0 over ten epochs on benchmark sets of
        different row curvatures, where 300 c lands within a factor of 2
        of the best step. The pilot refines it. The steps scale with the
        row weights (the
        score moves with s eta0, u_i by eta0 s_i): c is the unweighted
        mean curvature and the rule is divided by the mean row weight.
        """
        stats = self._row_norm_stats
        curvature = stats.mean_curvature(self.fit_intercept)
        return 300.0 * curvature / stats.mean_weight()
