"""The training epochs of the expert estimators (private).

``BaseSoftmaxClassifier._epoch`` runs one epoch of the method's solver;
the functions here record it (``record_epoch``: the objective estimate
and the verbose line), word a divergence (``divergence_message``), give
the stopping rule (``improves``) and the thread rule of the training
epochs (``training_threads``).
"""

import warnings

import numpy as np

# Dropped after a divergence, so that no prediction uses the broken state
# (the training state, _state, holds the method's and the strategies'
# arrays).
_MODEL_ATTRIBUTES = (
    "coef_",
    "intercept_",
    "classes_",
    "n_iter_",
    "t_",
    "loss_curve_",
    "_row_state",
    "_state",
)


def improves(loss, best, tol):
    """Whether an epoch's monitored ``loss`` counts as an improvement on
    ``best`` under the relative tolerance ``tol``: lower than ``best``
    by more than ``tol`` times ``|best|`` (any finite loss improves on
    an infinite best). ``tol=None`` counts every epoch (the fit runs
    ``max_iter`` epochs).

    Relative, so that one default means the same on a loss of 0.02 and
    one of 7 nats (the user guide: the stopping tolerance).
    """
    if tol is None:
        return True
    if not np.isfinite(best):
        return loss < best
    return loss < best - tol * abs(best)


def record_epoch(est, obj_sum, weight_sum, sq_norm, seconds, n_rows):
    """Count an epoch that ran, append its objective estimate (the mean
    of the kernel's sums plus the penalty at ``sq_norm``, ||W||^2) to
    ``loss_curve_`` and print its line when verbose; returns the
    objective."""
    est._n_epochs += 1
    penalty = 0.5 * est.alpha * sq_norm
    objective = obj_sum / weight_sum + penalty if weight_sum > 0 else np.nan
    est.loss_curve_.append(objective)
    if est.verbose:
        rate = n_rows / seconds if seconds > 0 else np.inf
        print(
            f"Epoch {est._n_epochs}: {seconds:.4f} s, objective "
            f"estimate {objective:.6f}, {rate:,.0f} rows/s"
            + est._verbose_extra()
        )
    return objective


def divergence_message(est, what, row, value):
    """The DivergenceError message of an epoch whose kernel reported
    ``what`` at ``row`` (the method's ``_divergence_hint`` appended)."""
    return (
        f"{type(est).__name__} diverged in epoch {est._n_epochs + 1} "
        f"at row {row}: {what} (value {value:.6g}). The step size is too "
        f"large for this problem: lower eta0 (now {est.eta0_:g}"
        + (", chosen by eta0='auto'" if est.eta0 == "auto" else "")
        + ")"
        + est._divergence_hint()
        + "."
    )


def training_threads(est):
    """Threads of the training epochs: ``_n_threads()`` for a method
    with threaded epochs (``_threaded_epochs``: U-max, Implicit SGD and
    the sampled baselines lock-free, ``_hogwild.pxd``; SCENT and augment
    and reduce inside each minibatch), one otherwise.

    learning_rate='adagrad' keeps its per-row step state in one object,
    so its epochs run on one thread; asking for more then warns (once per
    fit or partial_fit call) rather than running slower than asked
    without a word.
    """
    n_threads = est._n_threads()
    if not est._threaded_epochs or n_threads == 1:
        return 1
    if est._uses_adagrad():
        if not getattr(est, "_adagrad_thread_warned", False):
            warnings.warn(
                "learning_rate='adagrad' trains on one thread: its "
                "per-row step state is not shared between threads; "
                f"n_jobs={est.n_jobs} applies to prediction only.",
                UserWarning,
            )
            est._adagrad_thread_warned = True
        return 1
    return n_threads
