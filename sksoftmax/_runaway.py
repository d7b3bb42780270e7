"""The runaway check: a warning when a fitted model is far worse than the
class prior on its own training rows (private).

Functions of a fitted estimator (they read its ``coef_``, ``intercept_``,
``classes_``, ``_log_loss``, ``_prior_frequencies``, ``_softmax_link`` and
``_proba_cost``, the cost of its probabilities per (row, class) term:
A&R's quadrature raises it and checks fewer rows);
``BaseSoftmaxClassifier`` calls ``runaway_due`` after ``fit`` and
``warn_if_runaway``.
"""

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning


def _crossed_power_of_two(before, after):
    """Whether a count that went from ``before`` to ``after`` passed a
    power of two (1, 2, 4, 8, ...): the runaway check's schedule."""
    return after.bit_length() > before.bit_length()


# Rows of the runaway check, and its budget of (row, class) terms: a
# method whose probabilities cost more per term (A&R's quadrature) has a
# larger _proba_cost and checks fewer rows.
RUNAWAY_ROWS = 256
RUNAWAY_TERMS = 2**24
# Floor of the rows scored
RUNAWAY_MIN_ROWS = 16


def runaway_due(est, warm, epochs_before, X, sample_weight):
    """Whether the ``fit`` call that just ran its epochs is checked.

    A cold fit always is. A warm-started one (a loop of
    ``fit(max_iter=1)`` calls, one epoch each, as benchmarks and
    users who watch their own held-out loss run) is checked when its
    rows differ from the last checked call's (their shape, nonzeros
    and total weight), when its step differs (a ``set_params`` of
    eta0 or learning_rate between calls), or when the total of epochs
    crossed a power of two in this call: like ``partial_fit``'s
    calls 1, 2, 4, 8, ..., O(log epochs) checks over a loop instead
    of one per call, which would cost a sizeable share of a
    one-epoch fit at thousands of classes.
    """
    key = (
        est.eta0_,
        est.learning_rate,
        X.shape,
        X.nnz if sp.issparse(X) else None,
        float(sample_weight.sum()),
    )
    due = (
        not warm
        or getattr(est, "_runaway_checked", None) != key
        or _crossed_power_of_two(epochs_before, est._n_epochs)
    )
    if due:
        est._runaway_checked = key
    return due


def runaway_n_rows(est, X):
    """Rows the runaway check scores: RUNAWAY_ROWS, fewer while their
    (row, class, entry) terms exceed RUNAWAY_TERMS, at least 16.

    A row's terms: n_classes x (entries of W it reads + 1), times
    ``_proba_cost``. The entries read: every column of a dense row;
    for a sparse row, its nonzeros' columns of W gathered for all
    classes, each of which costs a whole cache line per class when W
    is stored class by class, (n_classes, n_features) C-contiguous
    (``_evaluation.gather_columns``), so counting nonzeros alone
    would let the check cost much more than the budget says at many
    classes.
    """
    per_row = est.classes_.shape[0] * runaway_class_cost(est, X)
    budget = int(RUNAWAY_TERMS // per_row)
    return int(min(RUNAWAY_ROWS, max(RUNAWAY_MIN_ROWS, budget)))


def runaway_class_cost(est, X):
    """Terms of one (row, class) pair of the exact check (see
    ``runaway_n_rows``)."""
    n_features = X.shape[1]
    if sp.issparse(X):
        read = X.nnz / max(X.shape[0], 1)
        coef = getattr(est, "coef_", None)
        if coef is not None and coef.flags.c_contiguous:
            read = min(read * max(64 // coef.itemsize, 1), n_features)
    else:
        read = n_features
    return est._proba_cost * (1 + read)


def runaway_n_classes(est, X):
    """Classes the check scores each row against: all of them while
    RUNAWAY_MIN_ROWS rows over every class (``runaway_class_cost``
    terms each) stay within RUNAWAY_TERMS;
    beyond, a uniform sample that keeps them within it (the softmax
    link only: the sampled estimate of its normaliser,
    ``sampled_log_loss``). The check then costs O(1) in the number
    of classes rather than O(K) per checked call."""
    n_classes = est.classes_.shape[0]
    if not est._softmax_link():
        return n_classes
    exact = RUNAWAY_MIN_ROWS * n_classes * runaway_class_cost(est, X)
    if exact <= RUNAWAY_TERMS:
        return n_classes
    # beyond, each drawn class counted at a whole row of W per row
    # scored: a small fixed draw (about 1,000 classes at D = 1,000),
    # so that a checked call costs about what an unchecked one does
    nnz = X.nnz / max(X.shape[0], 1) if sp.issparse(X) else 0.0
    per_class = RUNAWAY_MIN_ROWS * (1 + X.shape[1] + nnz)
    return int(max(2, min(n_classes, RUNAWAY_TERMS // per_class)))


def sampled_log_loss(est, X, y_enc, sample_weight, n_sampled, seed=0):
    """An estimate of the mean log-loss of rows X over ``n_sampled``
    uniformly drawn classes: each row's normaliser
    e^{s_y} + sum_{k != y} e^{s_k} with the sum estimated by
    (K - 1) / m' times its sum over the drawn classes other than y
    (m' of them), an unbiased estimate of the sum (Horvitz-Thompson,
    draws without replacement). The draw is seeded: the same rows
    and model give the same estimate."""
    n_classes = est.classes_.shape[0]
    drawn = np.random.default_rng(seed).choice(
        n_classes, size=n_sampled, replace=False
    )
    coef = np.asarray(est.coef_)
    b = np.asarray(est.intercept_, dtype=np.float64)
    if sp.issparse(X):
        # only the columns the rows use
        cols = np.unique(X.indices)
        X = X[:, cols]
    else:
        cols = np.arange(X.shape[1])
    W = coef[np.ix_(drawn, cols)].astype(np.float64)
    scores = np.asarray(X @ W.T, dtype=np.float64) + b[drawn]
    own = coef[np.ix_(y_enc, cols)].astype(np.float64)
    if sp.issparse(X):
        s_y = np.asarray(X.multiply(own).sum(axis=1)).ravel()
    else:
        s_y = np.einsum("ij,ij->i", X, own)
    s_y = s_y + b[y_enc]
    others = drawn[None, :] != y_enc[:, None]
    m = others.sum(axis=1)
    scores = np.where(others, scores, -np.inf)
    top = np.maximum(scores.max(axis=1), s_y)
    rest = np.exp(scores - top[:, None]).sum(axis=1)
    rest = rest * (n_classes - 1) / np.maximum(m, 1)
    log_z = top + np.log(np.exp(s_y - top) + rest)
    nll = log_z - s_y
    return float(nll @ sample_weight / sample_weight.sum())


def warn_if_runaway(est, X, y_enc, sample_weight):
    """ConvergenceWarning if the model just fitted is far worse than the
    class prior on (a sample of) its own training rows.

    A step size far too large does not always overflow: the five
    estimators that took eta0 = 1e6 on a small problem returned
    coef_ near 3e6 and log-losses of 1e5 to 1e6 without a word, and
    Implicit SGD, whose step cannot overshoot, returned 12.2 against
    the prior's 1.39. Each method's own running estimate cannot tell
    (Implicit SGD's was 0.0 there), so this is the exact log-loss of up
    to RUNAWAY_ROWS training rows of positive weight (evenly spaced,
    no random draw; fewer at many classes, ``runaway_n_rows``), against the
    class-prior model's log-loss on the same rows. It warns when the
    model's exceeds the prior's by more than the prior's own value plus
    one nat (twice the prior plus one): a wide margin, which a model
    that learned anything is far below, and which the runaway fits
    above were far above. At many classes the model's log-loss is
    estimated over a uniform sample of the classes
    (``runaway_n_classes``, ``sampled_log_loss``).
    Cost: one exact evaluation of at most 256 rows, on the columns
    those rows use, per checked call: ``partial_fit`` checks its calls
    1, 2, 4, 8, ... only (counted by ``_n_epochs``), and a warm-started
    ``fit`` only when ``runaway_due`` says so.
    """
    rows = np.flatnonzero(sample_weight > 0)
    if rows.size == 0:
        return
    n_rows = runaway_n_rows(est, X)
    if rows.size > n_rows:
        rows = rows[np.linspace(0, rows.size - 1, n_rows).astype(np.intp)]
    w = sample_weight[rows]
    y_rows = y_enc[rows]
    n_sampled = runaway_n_classes(est, X)
    with np.errstate(all="ignore"):
        if n_sampled < est.classes_.shape[0]:
            model = sampled_log_loss(est, X[rows], y_rows, w, n_sampled)
        else:
            # the prediction path's exact log-loss (a blocked kernel
            # at the softmax link): no (rows, K) array, no copy of W's
            # columns
            model = est._log_loss(X[rows], y_rows, w)
    if not np.isfinite(model):
        model = np.inf
    prior = float(-np.log(est._prior_frequencies()[y_rows]) @ w / w.sum())
    if model <= 2.0 * prior + 1.0:
        return
    hint = (
        "eta0='auto' chose it from the data, but these data want a "
        "smaller one: set eta0"
        if isinstance(est.eta0, str)
        else "try eta0='auto', or an eta0"
    )
    warnings.warn(
        f"{type(est).__name__}: on {rows.size} of its training rows the "
        f"fitted model's log-loss is {model:.4g}, against {prior:.4g} "
        "for the class-prior model: the step size is probably far too "
        f"large (eta0_={est.eta0_:.3g}); {hint} 10 to 1000 times "
        "smaller.",
        ConvergenceWarning,
    )

