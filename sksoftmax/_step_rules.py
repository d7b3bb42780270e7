"""eta0='auto': the closed-form step rules' shared pieces (private).

:func:`set_eta0` sets ``eta0_`` for every expert estimator: the value
given, or the method's ``_auto_eta0`` rule of the mean row curvature and
weight over the rows seen (:class:`RowNormStats`, the estimator's
``_row_norm_stats``), refined for the piloted methods (U-max, Implicit
SGD) by the pilot of ``_eta0_pilot.py`` and its horizon factor.
"""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ._eta0_pilot import pilot_eta0

# The rows per class at which a step measured on short runs is right for an
# epoch (measured; see RowNormStats.horizon_factor).
ROWS_PER_CLASS_REF = 50.0


def _row_l1_norms(X):
    """||x_i||_1 of every row of X (CSR or dense), without an |X| copy of
    a dense X (blocks of rows)."""
    if sp.issparse(X):
        return np.asarray(abs(X).sum(axis=1), dtype=np.float64).ravel()
    out = np.empty(X.shape[0])
    for lo in range(0, X.shape[0], 4096):
        out[lo : lo + 4096] = np.abs(X[lo : lo + 4096]).sum(axis=1)
    return out


@dataclass(frozen=True)
class RowNormStats:
    """Sums over the rows seen that the 'auto' rules read (summed over
    ``partial_fit`` calls).

    Attributes
    ----------
    sq_sum : float
        sum_i s_i ||x_i||^2.
    weight_sum : float
        sum_i s_i.
    n_rows : float
        The rows.
    l1_sum : float
        sum_i s_i ||x_i||_1.
    """

    sq_sum: float
    weight_sum: float
    n_rows: float
    l1_sum: float

    @classmethod
    def of(cls, dataset, X):
        """The sums of a dataset and its X (O(nnz), with a copy of X's
        values for the l1 norms)."""
        w = dataset.weights
        return cls(
            float(w @ dataset.row_sq_norms),
            float(w.sum()),
            float(dataset.n_samples),
            float(w @ _row_l1_norms(X)),
        )

    def __add__(self, other):
        return RowNormStats(
            self.sq_sum + other.sq_sum,
            self.weight_sum + other.weight_sum,
            self.n_rows + other.n_rows,
            self.l1_sum + other.l1_sum,
        )

    def mean_weight(self):
        """Mean row weight over the rows seen (1 without weights, and with
        class_weight='balanced').

        A row's step is eta times its weight, so the expected step of an
        epoch is this mean times the gradient of the weighted-mean
        objective: the 'auto' rules, set for rows of weight 1, are divided
        by it, and scaling every weight by c leaves the steps eta s_i as
        they were (class weights of 1000 and 1e-4, scikit-learn's
        check_class_weight_classifiers, made them 300 times too large).
        """
        if self.weight_sum > 0:
            return self.weight_sum / self.n_rows
        return 1.0

    def mean_curvature(self, fit_intercept):
        """Weighted mean of ||x_i||^2 + [fit_intercept] over the rows seen.

        A step of size eta on a row's score moves that score by eta times
        this much: the scale every 'auto' rule divides by.
        """
        ws = self.weight_sum
        mean_sq = self.sq_sum / ws if ws > 0 else 0.0
        return mean_sq + float(fit_intercept)

    def mean_l1(self, fit_intercept):
        """Weighted mean of ||x_i||_1 + [fit_intercept] over the rows seen:
        how far a row's score moves when every coordinate of its class's
        [w | b] moves by one (sign-like per-coordinate steps)."""
        ws = self.weight_sum
        mean_l1 = self.l1_sum / ws if ws > 0 else 0.0
        return mean_l1 + float(fit_intercept)

    def horizon_factor(self, n_classes):
        """sqrt(ROWS_PER_CLASS_REF / r), r = n / K the rows per class seen
        (n the rows of ``fit`` or all rows seen by ``partial_fit``; r at
        least 1).

        A class's row of W moves in the steps that involve the class, about
        r of them per epoch (fewer for a rare class, more for a frequent
        one), and the best constant step of T steps of SGD on a convex loss
        scales as 1 / sqrt(T) (the optimisation error ~ 1 / (eta T) against
        the noise ~ eta sigma^2). A step that is right at
        ROWS_PER_CLASS_REF rows per class is therefore sqrt(50 / r) times
        the right one at r. 50 is empirical: the rows per class at which
        SCENT's 2 B / c was the best of a grid on benchmark sets, sets
        with fewer rows per class wanting larger steps and sets with more
        smaller ones (see SCENTClassifier's eta0).
        """
        n_rows = max(self.n_rows, 1.0)
        per_class = max(n_rows / n_classes, 1.0)
        return float(np.sqrt(ROWS_PER_CLASS_REF / per_class))

    def pilot_step_factor(self, n_classes):
        """min(1, horizon factor): what the pilot's best trial is multiplied
        by.

        The pilot's trials run over a fraction of an epoch; at many rows per
        class a whole epoch moves each class far more often than they did,
        and the noise of a constant step grows with it, so the trials'
        winner is scaled down by sqrt(50 / rows per class). The factor is
        one-sided (never above 1): below 50 rows per class the trials'
        ranking already holds what small steps cost
        (doc/user_guide/umax_implicit.rst, the pilot).
        """
        return min(1.0, self.horizon_factor(n_classes))


def resolve_eta0(est):
    """The initial step of ``est``: ``eta0`` as given, or its 'auto' rule
    (``est._auto_eta0`` of the mean row curvature times the mean row
    weight of ``est._row_norm_stats``)."""
    if isinstance(est.eta0, str):
        stats = est._row_norm_stats
        curvature = stats.mean_curvature(est.fit_intercept)
        return float(est._auto_eta0(curvature * stats.mean_weight()))
    return float(est.eta0)


def set_eta0(est, X, y_enc, sample_weight, keep_pilot):
    """Set ``est.eta0_`` (and, for piloted methods, ``eta0_trials_``).

    A piloted 'auto' step (``est._eta0_pilot``) is chosen once, on the
    first fit or partial_fit call with enough rows, and kept by warm
    starts and later partial_fit calls (trials on a model that has trained
    already would start from the wrong point); until then, and for the
    other methods, the closed-form rule follows the rows seen. The pilot
    runs the estimator's ``_pilot_setup()``.
    """
    piloted = est.eta0 == "auto" and est._eta0_pilot
    if piloted and keep_pilot and getattr(est, "_eta0_piloted", False):
        return
    est.eta0_ = resolve_eta0(est)
    est._eta0_piloted = False
    if not piloted:
        return
    est.eta0_trials_ = None
    rule = est.eta0_
    eta0, trials = pilot_eta0(
        est._pilot_setup(), X, y_enc, sample_weight, rule
    )
    if trials is None:
        return
    n_classes = est.classes_.shape[0]
    est.eta0_ = float(eta0) * est._row_norm_stats.pilot_step_factor(n_classes)
    est.eta0_trials_ = trials
    est._eta0_piloted = True
    if est.verbose:
        tried = "; ".join(
            f"{int(n)} rows: "
            + ", ".join(f"{e:.3g}: {v:.4g}" for e, v, m in trials if m == n)
            for n in dict.fromkeys(trials[:, 2])
        )
        print(
            f"eta0='auto': closed-form rule {rule:.3g}; pilot held-out "
            f"log-loss {{{tried}}}; using eta0_={est.eta0_:.3g}"
            f" (best trial {float(eta0):.3g})"
        )
