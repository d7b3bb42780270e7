"""eta0='auto': the closed-form step rules' shared pieces (private).

``AutoStepMixin`` sets ``eta0_`` for every estimator of the package: the
value given, or the method's ``_auto_eta0`` rule of the mean row curvature
and weight over the rows seen (``_row_norm_stats``), refined for the
piloted methods (U-max, Implicit SGD) by the pilot of ``_eta0_pilot.py``
and its horizon factor.
"""

import numpy as np
import scipy.sparse as sp

from ._eta0_pilot import pilot_eta0

# The rows per class at which a step measured on short runs is right for an
# epoch (measured; see BaseSoftmaxClassifier._horizon_factor).
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


class AutoStepMixin:
    """``eta0_`` from ``eta0``: the value given or the 'auto' rules (mixed
    into ``BaseSoftmaxClassifier``)."""

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
        eta0, trials = pilot_eta0(
            self._pilot_setup(), X, y_enc, sample_weight, rule
        )
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
        the right one at r. 50 is empirical: the rows per class at which
        SCENT's 2 B / c was the best of a grid on benchmark sets, sets
        with fewer rows per class wanting larger steps and sets with more
        smaller ones (see SCENTClassifier's eta0).
        """
        n_rows = max(self._row_norm_stats[2], 1.0)
        per_class = max(n_rows / self.classes_.shape[0], 1.0)
        return float(np.sqrt(ROWS_PER_CLASS_REF / per_class))

    def _pilot_step_factor(self):
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
        return min(1.0, self._horizon_factor())

    def _auto_eta0(self, curvature):
        """eta0 of the 'auto' rule, given the mean row curvature.

        Each method overrides this with the rule derived in its docstring.
        """
        raise NotImplementedError
