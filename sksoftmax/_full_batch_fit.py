"""``SoftmaxClassifier.fit`` with solver 'lbfgs'.

The estimator's side of the full-batch solver of ``_full_batch.py``: the
held-out folds, the penalty path on them (or one fit at ``alpha``, or,
warm, at the previous fit's ``alpha_``), and the fitted attributes and
warnings of the estimator, with the BLAS held to ``n_jobs`` threads.
"""

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

from ._full_batch import n_folds
from ._held_out import (
    NoHeldOutRows,
    fit_without_held_out,
    random_folds,
    significantly_worse,
)
from ._solver_choice import new_solver


def fit_full_batch(est, X, y, sample_weight, warm):
    """``fit`` of the estimator ``est`` with solver 'lbfgs' on the rows
    (X, y) (encoded, weighted): the penalty path on held-out folds
    (``early_stopping``), or one fit at ``alpha`` (or, warm, at the
    previous fit's ``alpha_``) from the current model. Returns ``est``.

    The BLAS runs on ``n_jobs`` threads (one by default): its
    products are small, and OpenBLAS's own threads spinning on them
    cost 7 to 12 times the CPU of one thread (digits: 4.0 CPU s
    against 0.58; wine: 6.3 against 0.54, on 2 cores)."""
    with threadpool_limits(limits=est._n_threads(), user_api="blas"):
        return _fit(est, X, y, sample_weight, warm)


def _fit(est, X, y, sample_weight, warm):
    if not warm:
        new_solver(est, X, y, sample_weight)
    est._row_shift = None
    est.validation_loss_ = None
    folds = _folds(est, X, sample_weight) if not warm else None
    if folds is not None:
        n_iter, converged = _penalty_path(est, X, y, sample_weight, folds)
    else:
        penalty = est.__dict__.get("alpha_") if warm else None
        if penalty is None or penalty.shape[0] != X.shape[1]:
            penalty = np.full(X.shape[1], float(est.alpha))
        n_iter, converged = est._solver.fit(X, y, sample_weight, penalty)
        est.alpha_ = penalty
    est.n_iter_ = n_iter
    est.best_iter_ = n_iter
    w = sample_weight / max(sample_weight.sum(), 1e-300)
    est.loss_curve_ = [float(est._evaluate(X, "nll", y_enc=y) @ w)]
    if not converged and est.tol is not None:
        warnings.warn(
            f"lbfgs did not converge in max_iter={est.max_iter} "
            "iterations; consider increasing max_iter.",
            ConvergenceWarning,
        )
    est.eta0_ = float(est._solver.eta)
    return est


def _folds(est, X, sample_weight):
    """The held-out folds of the penalty path (``early_stopping``), or
    None: fit without (on data with no rows to spare, with a warning)."""
    if not est.early_stopping:
        return None
    n = X.shape[0]
    try:
        return random_folds(
            n,
            n_folds(n, est.classes_.shape[0], X, est.validation_fraction),
            est.validation_fraction,
            sample_weight,
            est._rng,
        )
    except NoHeldOutRows as exc:
        fit_without_held_out(est, exc)
    return None


def _penalty_path(est, X, y, sample_weight, folds):
    """The penalty path on ``folds``, then the fit on every row at the
    penalty kept (``alpha_``); returns (n_iter, converged) of that fit."""
    n = X.shape[0]
    if est.verbose:
        n_val = int(np.ceil(est.validation_fraction * n))
        print(f"lbfgs: {len(folds)} fold(s) of {n_val} held-out rows")
    record = est._solver.fit_path(
        X, y, sample_weight, folds, significantly_worse, est.verbose
    )
    est.alpha_ = record["penalty"]
    est.validation_loss_ = [
        score for _, score in record["path"][record["profile"]]
    ]
    if est.verbose:
        print(
            f"lbfgs: penalty {record['profile']} x "
            f"{record['lam']:.3g} kept; refit on all {n} rows"
        )
    return record["n_iter"], record["converged"]
