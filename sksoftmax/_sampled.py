"""Sampled-softmax baselines: one-vs-each, NCE and importance sampling."""

from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ._averaging import AVERAGE_CONSTRAINTS
from ._base import BaseSoftmaxClassifier
from ._class_sampler import SAMPLER_CONSTRAINTS
from ._docstrings import fill_doc
from ._parameters import keyword_init
from ._sampled_fast import LOSSES, sampled_epoch32, sampled_epoch64
from ._shared._codes import Status
from ._solver import EpochDiverged, SGDSolver


class SampledSolver(SGDSolver):
    """Sampled-softmax epochs (kernel ``_sampled_fast``), the solver of
    :class:`SampledSoftmaxClassifier`.

    Parameters
    ----------
    loss : str
        A key of ``LOSSES``.
    batch_size : int
        Rows per minibatch.
    n_sampled : int
        Classes drawn per minibatch (already lowered to the distinct-draw
        limit).
    **common
        The parameters of :class:`~sksoftmax._solver.SGDSolver`.
    """

    kernels = (sampled_epoch64, sampled_epoch32)

    def __init__(self, *, loss, batch_size, n_sampled, **common):
        super().__init__(**common)
        self.loss = loss
        self.batch_size = batch_size
        self.n_sampled = n_sampled

    def new_row_state(self, n_rows):
        """None: the sampled losses keep no per-row variable."""
        return None

    def _options(self, eta_epoch):
        """The kernel's SampledOptions (``_sampled_fast.pyx.tp``) for an
        epoch."""
        return {
            "loss": LOSSES[self.loss],
            "batch_size": self.batch_size,
            "n_sampled": self.n_sampled,
            "schedule": self._schedule(eta_epoch),
            "alpha": self.alpha,
            "fit_intercept": self.fit_intercept,
            "shuffle": self.shuffle,
            "n_threads": self.n_threads,
        }

    def epoch(
        self, state, dataset, weights, y, row_state, order, eta_epoch,
        first_visit,
    ):
        status, obj_sum, weight_sum, t, row, value = self._kernel(state)(
            dataset,
            weights,
            y,
            state.rng,
            order,
            state.t,
            self._options(eta_epoch),
            self._table(state),
        )
        if status != Status.STATUS_OK:
            raise EpochDiverged(
                "a class score or ||W|| is not finite", row, value
            )
        state.t = t
        return obj_sum, weight_sum


@fill_doc
class SampledSoftmaxClassifier(BaseSoftmaxClassifier):
    """Softmax regression fitted by a biased sampled-softmax loss.

    The O(D)-per-step methods that Fagan & Iyengar (2018) compare U-max and
    Implicit SGD with, in their settings: minibatches of ``batch_size`` rows
    sharing ``n_sampled_classes`` classes drawn uniformly (distinct) from
    all classes; a sampled class equal to a row's own class is left out of
    that row's loss. Each loss is a cheap stand-in for the log-loss whose
    minimiser is *not* the softmax maximum-likelihood estimate, so the fit
    is biased; ``predict_proba`` is nevertheless the exact softmax over all
    classes of the learned ``coef_`` and ``intercept_``, and
    :meth:`log_loss` the exact log-loss, as for every sksoftmax estimator.

    Parameters
    ----------
    loss : {'ove', 'nce', 'importance'}, default='ove'
        'ove': one-vs-each (Titsias 2016), a bound on the log-loss whose
        sum over classes is estimated without bias from the sampled terms;
        'nce': noise contrastive estimation (Mnih & Teh 2012) with uniform
        noise; 'importance': importance-sampled softmax (Bengio & Senecal
        2008) as TensorFlow's ``sampled_softmax_loss``. Formulas:
        :ref:`sampled_loss`.
    batch_size : int, default=100
        Rows per update step (the paper's n = 100; no automatic choice):
        the step follows the mean of their gradients, all taken at the
        minibatch's starting weights.
    n_sampled_classes : int, default=5
        Classes m drawn per minibatch (the paper's m = 5). With the uniform
        sampler (distinct classes) at most the number of classes: a larger
        value is lowered to it with a UserWarning (the package's rule for
        samplers without replacement; the value used is
        ``n_sampled_classes_``); every class is then used and the 'ove'
        and 'importance' losses are exact for that minibatch.
    sampler : {'uniform', 'frequency'}, default='uniform'
        'uniform': m distinct classes drawn uniformly from all classes
        (the paper's setting). 'frequency': m classes drawn with
        replacement with probability q_k proportional to
        ``(class_count_[k] + 1) ** sampler_power``; class k's expected count
        is then ``Q_k = m q_k`` and the losses use it in place of the
        uniform ``m / K`` (see Notes).
    sampler_power : float, default=1.0
        Exponent of the class counts in the 'frequency' sampler; 0 samples
        uniformly (with replacement).
    eta0 : float or 'auto', default='auto'
        Initial learning rate, applied to the minibatch mean of per-row
        gradients (the paper's eta / N scaling: its Table 2 values carry
        over). 'auto' takes ``B / (c kappa)``, B the batch size, c the mean
        of ``||x_i||^2 + 1`` and kappa the largest coefficient of a class
        in a row's loss gradient, so that a row's own scores move by about
        one per step (:ref:`sampled_eta0`); the value used is ``eta0_``.
    learning_rate : {'exponential', 'constant', 'invscaling'}, \
            default='exponential'
        As in :class:`UMaxSoftmaxClassifier`; 'invscaling' takes the rate
        at the minibatch's first row.
    decay : float, default=0.9
        Per-epoch factor of the 'exponential' schedule.
    power_t : float, default=0.5
        Exponent of the 'invscaling' schedule.
    alpha : float, default=0.0
        L2 penalty on ``coef_``, applied as its exact gradient (shrinkage of
        all of W, O(1) through the lazy scale) once per minibatch.
    fit_intercept : bool, default=True
        Learn unpenalised class intercepts.
    max_iter, tol, shuffle, random_state, warm_start, verbose, \
early_stopping, validation_fraction, n_iter_no_change, class_weight
        As in :class:`UMaxSoftmaxClassifier`.
    average : bool or int, default=False
        Iterate averaging, as in :class:`UMaxSoftmaxClassifier`. Rows are
        counted one by one, and a minibatch's step gives one iterate that
        counts once for each of its rows (with an int n, once for each of
        its rows from the n-th on): minibatches of equal size weigh
        equally. Costs as there: O(nnz) more per row and class moved, twice
        the memory of W, one O(K D) pass per call.

    n_jobs : int, default=None
        Threads of the training epochs and of the exact evaluation
        (``predict``, ``predict_proba``, ``log_loss``, ...): None means 1,
        -1 every core, as in scikit-learn. With more than one thread the
        epochs run lock-free ("Hogwild!") on chunks of minibatches,
        reproducible in distribution only; ``n_jobs=None`` or 1 stays
        bitwise reproducible under ``random_state``, and ``eta0_`` does not
        depend on it (:ref:`threads_in_training`).

    %(allow_new_classes)s

    Attributes
    ----------
    classes_, coef_, intercept_, n_sampled_classes_, n_iter_, t_, \
n_features_in_, feature_names_in_, validation_loss_
        As in :class:`UMaxSoftmaxClassifier`.
    loss_curve_ : list of float
        Per epoch, the weighted mean of the sampled losses (each at its
        minibatch's starting weights) plus the penalty: the value of the
        biased surrogate, not of the log-loss.

    See Also
    --------
    UMaxSoftmaxClassifier, ImplicitSGDClassifier : unbiased methods at the
        same cost per step.

    Notes
    -----
    With ``sampler='frequency'`` each draw k_j of the minibatch's m stands
    for ``1 / Q_kj = 1 / (m q_kj)`` classes, and a draw equal to a row's
    class is still left out of that row. 'ove' weights its sampled terms
    by ``1 / (m q_kj)``, so that its estimate of the bound's sum over
    k != y stays unbiased, ``E_q[[k != y] l_k / q_k] = sum_{k != y} l_k``
    (the uniform sampler's ``K / m`` is the same ``1 / Q_k``); 'nce' takes
    q as its noise distribution, logits ``s_k - log(m q_k)`` for the true
    and the noise classes; 'importance' is TensorFlow's sampled softmax
    with ``unique=False``, the softmax over the true class and the draws of
    ``s_k - log(m q_k)``, the true class corrected too. Unlike the uniform
    case that correction does not cancel, and 'importance' does not tend
    to the log-loss as m grows (the true logit keeps its
    ``-log(m q_y)``): it remains a biased baseline.

    References
    ----------
    M. Titsias, "One-vs-each approximation to softmax for scalable
    estimation of probabilities", NeurIPS 2016.
    A. Mnih, Y. W. Teh, "A fast and simple algorithm for training neural
    probabilistic language models", ICML 2012.
    Y. Bengio, J.-S. Senecal, "Adaptive importance sampling to accelerate
    training of a neural probabilistic language model", IEEE TNN 2008.
    F. Fagan, G. Iyengar, "Unbiased scalable softmax optimization",
    arXiv:1803.08577, 2018 (Sec. 4.1: the settings used here).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sksoftmax import SampledSoftmaxClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = SampledSoftmaxClassifier(loss="nce", eta0=0.1,
    ...                                random_state=0).fit(X, y)
    >>> clf.predict_proba(X[:1]).shape
    (1, 3)
    """

    _threaded_epochs = True

    _parameter_constraints: dict = {
        **BaseSoftmaxClassifier._parameter_constraints,
        "loss": [StrOptions(set(LOSSES))],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "n_sampled_classes": [Interval(Integral, 1, None, closed="left")],
        **SAMPLER_CONSTRAINTS,
        **AVERAGE_CONSTRAINTS,
    }

    __init__ = keyword_init(
        {
            "loss": "ove",
            "batch_size": 100,
            "n_sampled_classes": 5,
            "sampler": "uniform",
            "sampler_power": 1.0,
            "average": False,
        },
    )

    def _distinct_draw_limit(self):
        # uniform: distinct classes from all K, shared by the minibatch;
        # 'frequency': draws with replacement
        if self.sampler == "uniform":
            return self.classes_.shape[0]
        return None

    def _make_solver(self, eta0=None, n_threads=None):
        """The sampled-softmax solver of the current parameters."""
        return SampledSolver(
            loss=self.loss,
            batch_size=self.batch_size,
            n_sampled=self._n_sampled_used(),
            **self._solver_options(eta0, n_threads),
        )

    def _auto_eta0(self, curvature):
        """eta0='auto': B / (c kappa) (see eta0)."""
        n_classes = self.classes_.shape[0]
        kappa = 1.0
        table = self._sampler_table()
        if self.loss == "ove" and table is None:
            kappa = n_classes / min(self.n_sampled_classes, n_classes)
        elif self.loss == "ove":
            # the estimator weight 1 / (m q_k) of the rarest class
            kappa = 1.0 / (self.n_sampled_classes * np.min(table.q))
        n_rows = self._row_norm_stats.n_rows
        return min(self.batch_size, max(n_rows, 1.0)) / (curvature * kappa)
