"""The held-out rows of ``SoftmaxClassifier``'s early stopping.

Which rows are held out (each class's share of its latest rows, or random
folds for the full-batch penalty path), how many (``validation_fraction``
within a cost cap), whether the fit refits on every row after them, what
a fit does on data with none to spare, and whether one model's per-row
held-out losses are worse than another's beyond the noise of those rows.
The derivations are in the user guide.
"""

import inspect
import warnings

import numpy as np

from ._solver_choice import EXPERT_SOLVERS, row_classes

# Held-out rows (early_stopping): validation_fraction of the rows, at most
# this many, so that scoring them after each epoch costs at most a tenth of
# an exact epoch at large n
MAX_VALIDATION_ROWS = 10_000
# and at most as many as make their exact scoring (n_classes x (nnz + 1)
# multiply-adds a row) cost this share of the epoch's multiply-adds
# (2 x (nnz + 1) per row and class a training row meets: all n_classes for
# 'exact', where the cap never binds below validation_fraction=0.45, a
# few hundred for a sampled solver: ``held_out_cap``), but not fewer than
# MIN_VALIDATION_ROWS (below, the held-out loss is too noisy to stop on)
VALIDATION_COST_SHARE = 0.5
MIN_VALIDATION_ROWS = 100
# An epoch is undone (and the step halved) when its held-out loss is worse
# than the best epoch's by more than this many standard errors of the
# paired per-row differences
SIGNIFICANCE_Z = 2.0
# The model is refitted on every row along the kept path when the held-out
# rows are more than this share of the rows (below, the refit would cost
# the kept epochs again for at most 1% more rows)
REFIT_MIN_SHARE = 0.01


class NoHeldOutRows(ValueError):
    """The data has no rows that ``early_stopping`` could hold out."""


def significantly_worse(losses, best_losses, p):
    """Whether held-out per-row ``losses`` are worse than ``best_losses``
    beyond the noise of the held-out rows: the weighted mean of the paired
    differences exceeds twice its standard error (weights ``p``, summing
    to one). A small held-out set then does not undo an epoch, nor halve
    the step, on a fluctuation of a few rows."""
    diff = losses - best_losses
    mean = float(diff @ p)
    var = float(((diff - mean) ** 2) @ p)
    n_eff = 1.0 / float(p @ p)
    return mean > SIGNIFICANCE_Z * np.sqrt(var / n_eff)


def held_out_rows(y, n_classes, n_val, rng, keep_first=False):
    """The ``n_val`` held-out rows of ``early_stopping`` (sorted indices),
    and how many rows could be held out.

    Each class gives its rows from its *last* in the order given to its
    first, and the classes are interleaved by the share of their rows
    already taken: row i, the j-th from the end of its class's n_k rows,
    has the key (j + u_i) / e_k, u_i uniform, e_k the class's rows that
    may be held out (n_k, or n_k - 1 with ``keep_first``), and the rows
    of the ``n_val`` smallest keys are held out. That is about the same
    share of every class's eligible rows, as many in expectation as a
    uniform draw among them takes (rounded at random: a class of one
    eligible row is held out with that share's probability), and of each
    class its latest rows, as the last fold of ``StratifiedKFold``
    without shuffling. On rows in random order it is
    a stratified random draw; on rows grouped by source or ordered in
    time the held-out rows are the latest sources, which the earlier ones
    must predict, as test rows from other sources are (tokens_small: a
    random draw preferred a step and epochs the test files do not; the
    user guide).

    With ``keep_first`` the first row of each class is never held out
    (a refit follows: every class keeps a training row).
    """
    n = y.shape[0]
    counts = np.bincount(y, minlength=n_classes)
    # the rows sorted by class, stably (a radix sort on 16-bit labels:
    # 0.08 s at 3.8 million rows, against 0.6 s on int64); the keys are
    # computed in that order, where a class's rows are one run
    code = np.uint16 if n_classes <= 1 << 16 else np.uint32
    by_class = np.argsort(y.astype(code, copy=False), kind="stable")
    # a class's rows that may be held out: all, or all but its first
    eligible = np.maximum(counts - 1, 0) if keep_first else counts
    e_k = np.repeat(eligible, counts).astype(np.float64)
    ends = np.cumsum(counts)  # one past each class's run
    from_end = np.repeat(ends - 1, counts) - np.arange(n)
    # (u_i drawn in the rows' own order)
    with np.errstate(divide="ignore", invalid="ignore"):
        key = (from_end + rng.random(n)[by_class]) / e_k
    n_eligible = int(eligible.sum())
    if keep_first:
        firsts = (ends - counts)[counts > 0]
        key[firsts] = np.inf
    n_val = min(n_val, n_eligible)
    if n_val <= 0:
        return np.empty(0, dtype=np.intp), n_eligible
    threshold = np.partition(key, n_val - 1)[n_val - 1]
    picked = np.flatnonzero(key <= threshold)[:n_val]
    return np.sort(by_class[picked]), n_eligible


def check_n_held_out(n_rows, n_val, validation_fraction, trainable=True):
    """``NoHeldOutRows`` when ``n_val`` held-out rows of ``n_rows`` leave
    no validation or training rows, or (``trainable`` false) when the
    training rows left all have zero weight."""
    if not trainable:
        raise NoHeldOutRows(
            "The training rows left by early_stopping all have zero weight"
        )
    if n_val < 1 or n_rows - n_val < 2:
        raise NoHeldOutRows(
            f"validation_fraction={validation_fraction} of "
            f"{n_rows} rows leaves no validation or training rows"
        )


def split_rows(y, n_classes, n_val, rng, keep_class_rows=True):
    """Held-out and training rows (sorted indices): up to ``n_val``
    rows, each class's share of its last rows (``held_out_rows``), none
    of a class left without a training row.

    With ``keep_class_rows`` (a refit will follow) a class's first row is
    never held out. Without, every row may be drawn, as test rows are
    drawn, and a drawn row whose class would have no training row left
    goes back to the training rows (all going back: the draw is redone
    keeping each class's first row). Why a held-out row's class must have
    a training row, and why the draw is then as a test row's: the user
    guide (held-out rows).
    """
    val, n_eligible = held_out_rows(
        y, n_classes, n_val, rng, keep_first=keep_class_rows
    )
    mask = np.ones(y.shape[0], dtype=bool)
    mask[val] = False
    if not keep_class_rows and val.shape[0]:
        trained = np.bincount(y[mask], minlength=n_classes) > 0
        back = ~trained[y[val]]
        if back.any():
            mask[val[back]] = True
            val = val[~back]
        if val.shape[0] == 0:
            # every row drawn went back (a few rows drawn, all of
            # single-row classes): each class's first row kept instead
            return split_rows(y, n_classes, n_val, rng, True)
    if n_eligible == 0 or val.shape[0] == 0:
        raise NoHeldOutRows(
            f"early_stopping cannot hold out rows: each of the "
            f"{n_classes} classes has a single row"
        )
    return val, np.flatnonzero(mask)


def random_folds(n, n_folds, validation_fraction, sample_weight, rng):
    """The held-out folds of the 'lbfgs' penalty path: up to ``n_folds``
    (held-out, training) pairs of sorted row indices, each fold
    ``validation_fraction`` of the ``n`` rows drawn at random (not
    ``held_out_rows``': the user guide), a fold whose training rows all
    have zero weight skipped; or ``NoHeldOutRows``."""
    n_val = int(np.ceil(validation_fraction * n))
    check_n_held_out(n, n_val, validation_fraction)
    perm = rng.permutation(n)
    folds = []
    for i in range(max(n_folds, 1)):
        val = perm[i * n_val:(i + 1) * n_val]
        if val.shape[0] == 0:
            break
        train = np.concatenate([perm[: i * n_val], perm[(i + 1) * n_val:]])
        if sample_weight[train].sum() <= 0:
            continue
        folds.append((np.sort(val), np.sort(train)))
    if not folds:
        check_n_held_out(n, n_val, validation_fraction, trainable=False)
    return folds


def refits(n_val, n_rows, warm):
    """Whether ``fit`` fits again on every row after the held-out phase:
    not warm, and more than REFIT_MIN_SHARE of the ``n_rows`` rows held
    out (``n_val``)."""
    return not warm and n_val > REFIT_MIN_SHARE * n_rows


def held_out_cap(est, n_classes, X, n_train):
    """Most held-out rows whose exact scoring after an epoch costs at
    most VALIDATION_COST_SHARE of the epoch's multiply-adds (at least
    MIN_VALIDATION_ROWS), for the estimator ``est``'s ``solver_``.

    Scoring a row costs n_classes x (nnz + 1) multiply-adds; an epoch
    2 x (nnz + 1) per training row and class the row meets (scores and
    gradient): n_classes for 'exact', ``row_classes`` for a sampled
    solver (SCENT: its minibatch's 128 classes). At many classes and
    a sampled solver the held-out rows are then a few hundred rather
    than MAX_VALIDATION_ROWS, whose scoring would cost many epochs.
    """
    name = est.solver_
    if name in ("exact", "lbfgs"):
        met = n_classes
    else:
        met = min(n_classes, row_classes(EXPERT_SOLVERS[name]()))
    cap = int(VALIDATION_COST_SHARE * 2.0 * n_train * met / n_classes)
    return max(cap, MIN_VALIDATION_ROWS)


def fit_rows(est, X, y_enc, sample_weight, warm):
    """(train, held_out) of the estimator ``est``'s ``fit``: the training
    rows (indices into X: no copy) and the held-out rows (X_val, y_val,
    w_val), their weights normalised so that a vector of per-row losses
    ``@ w_val`` is the mean; held_out is None without ``early_stopping``
    or on data with no rows to hold out (``fit_without_held_out``)."""
    train = np.arange(X.shape[0])
    if not est.early_stopping:
        return train, None
    try:
        val, train = _split(est, X, y_enc, sample_weight, warm)
    except NoHeldOutRows as exc:
        fit_without_held_out(est, exc)
        return train, None
    X_val, y_val, w_val = X[val], y_enc[val], sample_weight[val]
    if w_val.sum() <= 0:
        w_val = np.ones_like(w_val)
    return train, (X_val, y_val, w_val / w_val.sum())


def _split(est, X, y_enc, sample_weight, warm):
    """The held-out and training rows of ``early_stopping``, or
    ``NoHeldOutRows`` when the data has none to spare."""
    n_classes = est.classes_.shape[0]
    n_val = int(np.ceil(est.validation_fraction * X.shape[0]))
    n_val = min(
        n_val,
        MAX_VALIDATION_ROWS,
        held_out_cap(est, n_classes, X, X.shape[0] - n_val),
    )
    check_n_held_out(X.shape[0], n_val, est.validation_fraction)
    # with a refit on every row (more than REFIT_MIN_SHARE held
    # out) each class keeps a training row; without, the held-out
    # phase's model is the one returned, and the held-out rows are
    # drawn as test rows are
    refit = refits(n_val, X.shape[0], warm)
    val, train = split_rows(y_enc, n_classes, n_val, est._rng, refit)
    if sample_weight[train].sum() <= 0:
        check_n_held_out(
            X.shape[0], n_val, est.validation_fraction, trainable=False
        )
    return val, train


def fit_without_held_out(est, exc):
    """``early_stopping='auto'`` on data with no rows to hold out:
    warn and go on without (as LogisticRegression fits such data);
    ``early_stopping=True``, or a ``validation_fraction`` set by the
    user, asked for held-out rows that cannot be had: raise."""
    default = inspect.signature(type(est)).parameters[
        "validation_fraction"
    ].default
    if est.early_stopping != "auto" or est.validation_fraction != default:
        raise ValueError(
            f"{exc}; change validation_fraction or set "
            "early_stopping=False."
        ) from None
    warnings.warn(
        f"{exc}: fitting on every row without held-out rows (the "
        "epochs stop on the training loss, as with "
        "early_stopping=False).",
        UserWarning,
    )
