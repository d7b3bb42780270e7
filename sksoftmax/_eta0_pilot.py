"""eta0='auto' by a pilot: short trial runs judged on held-out rows.

The sampled methods' right step size depends on the number of classes, the
number of draws, the sampling probabilities and how concentrated the data's
class probabilities are; the last is not known before training. Measured
over ten epochs, the best eta0 of a grid sits between 0.04 and 0.6 times
the closed-form rule's (K - 1) / m scale across Bibtex, a 1,000-class and a
4,845-class set: no rule of the data's sizes alone lands within a few
percent of the best step everywhere. So, as Bottou recommends ("Stochastic
Gradient Descent Tricks", 2012, sec. 5.2: "try various learning rates on a
small sample of the training set and pick the one that most reduces the
cost"), the estimator runs the method itself for one pass over a small
sample of the training rows at a few steps and keeps the best.

The pilot
---------
* Rows: ``PILOT_VAL_ROWS`` training rows (at most a quarter of them) are
  held out; one pass over at most ``PILOT_ROWS`` others trains each trial.
  With fewer than ``PILOT_MIN_ROWS`` training rows the closed-form rule is
  kept (the held-out loss of so few rows is too noisy to rank steps).
* Trials: each is the estimator's own method with the same parameters,
  classes and class-prior start as the real fit, one epoch, eta0 fixed at
  the trial value. Only the columns that the trial rows use are kept:
  the other columns of W get no gradient in the trial, so the trial is the
  same as on all columns at a fraction of the memory.
* Criterion: the exact log-loss of the held-out rows (all K classes). A
  trial that diverges counts as infinite loss.
* Search: start at the closed-form rule eta_r; step by ``FACTOR`` up while
  the loss falls, else down while it falls, at most ``MAX_STEPS`` steps.
  One pass over a small sample favours a step that is slightly large for
  many epochs over the full data, where noise accumulates over more steps;
  the 'exponential' schedule's decay brings it down epoch by epoch.

Cost: a few passes over ``PILOT_ROWS`` rows and a few exact evaluations of
``PILOT_VAL_ROWS`` rows, and one trial weight matrix of K x (columns the
sample uses) at a time. It is recorded in ``eta0_trials_``.
"""

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.utils import check_random_state

from ._dataset import make_dataset
from ._random import RandomState
from .exceptions import DivergenceError

PILOT_MIN_ROWS = 500
PILOT_ROWS = 2048
PILOT_VAL_ROWS = 512
FACTOR = 3.0
MAX_STEPS = 6
PILOT_EPOCHS = 2


def pilot_rows(n_rows, sample_weight, random_state):
    """Indices (train, held-out) of the pilot, or None below the minimum.

    Rows of zero weight are left out: they teach nothing and count for
    nothing in the held-out loss.
    """
    rows = np.flatnonzero(sample_weight > 0)
    if rows.shape[0] < PILOT_MIN_ROWS:
        return None
    rng = check_random_state(random_state)
    rows = rows[rng.permutation(rows.shape[0])]
    n_val = min(PILOT_VAL_ROWS, rows.shape[0] // 4)
    val = np.sort(rows[:n_val])
    train = np.sort(rows[n_val : n_val + PILOT_ROWS])
    return train, val


def _used_columns(X_train, X_val):
    """X_train, X_val restricted to the columns X_train uses (CSR only)."""
    if not sp.issparse(X_train):
        return X_train, X_val
    cols = np.unique(X_train.indices)
    if cols.shape[0] == 0:
        cols = np.zeros(1, dtype=np.intp)
    return X_train[:, cols], X_val[:, cols]


def pilot_eta0(estimator, X, y_enc, sample_weight, start):
    """Run the pilot; return (eta0, trials) or (start, None) if too few rows.

    ``estimator`` has classes_, class_count_, _max_row_weight and
    _row_norm_stats set for the fit; it is not modified. trials is an
    array of rows (eta0, held-out log-loss) in the order run.
    """
    split = pilot_rows(X.shape[0], sample_weight, estimator.random_state)
    if split is None:
        return start, None
    train, val = split
    X_train, X_val = _used_columns(X[train], X[val])
    if not sp.issparse(X_train):
        X_train = np.ascontiguousarray(X_train)
        X_val = np.ascontiguousarray(X_val)
    y_train, y_val = y_enc[train], y_enc[val]
    w_train, w_val = sample_weight[train], sample_weight[val]

    losses = {}

    def loss(eta):
        if eta not in losses:
            losses[eta] = _trial(
                estimator, eta, X_train, y_train, w_train, X_val, y_val, w_val
            )
        return losses[eta]

    best = start
    loss(start)  # first row of the trials: the closed-form rule
    for direction in (FACTOR, 1.0 / FACTOR):
        eta = best
        for _ in range(MAX_STEPS):
            eta = eta * direction
            if not loss(eta) < loss(best):
                break
            best = eta
        if best != start:
            break  # the first direction improved: no need to try the other
    trials = np.array(list(losses.items()), dtype=np.float64)
    if not np.isfinite(losses[best]):
        raise DivergenceError(
            f"{type(estimator).__name__}: eta0='auto' found no step size "
            f"that trains without diverging (tried {trials[:, 0]}); set "
            "eta0 by hand or rescale the features."
        )
    return best, trials


def _trial(estimator, eta, X_train, y_train, w_train, X_val, y_val, w_val):
    """Held-out log-loss after one epoch of the method at step ``eta``."""
    trial = clone(estimator).set_params(
        eta0=eta,
        max_iter=1,
        tol=None,
        early_stopping=False,
        verbose=0,
        warm_start=False,
    )
    if "average" in trial.get_params():
        trial.set_params(average=False)
    trial.classes_ = estimator.classes_
    trial._init_state(X_train.shape[1], X_train.dtype)
    trial._rng = RandomState.from_random_state(estimator.random_state)
    trial.class_count_ = estimator.class_count_
    trial._max_row_weight = estimator._max_row_weight
    if trial.fit_intercept:
        trial._start_at_prior(np.arange(trial.classes_.shape[0]))
    trial.t_, trial._n_epochs, trial.loss_curve_ = 0, 0, []
    trial._row_norm_stats = estimator._row_norm_stats
    trial.eta0_ = eta
    dataset = make_dataset(X_train, w_train)
    weights = trial._weight_matrix(fresh=True)
    row_state = trial._new_row_state(X_train.shape[0])
    order = np.arange(X_train.shape[0], dtype=np.intp)
    try:
        for epoch in range(PILOT_EPOCHS):
            trial._epoch(dataset, weights, y_train, row_state, order, epoch == 0)
    except DivergenceError:
        return np.inf
    finally:
        trial._fold_weights(weights)
    with np.errstate(all="ignore"):
        value = trial._log_loss(X_val, y_val, w_val)
    return value if np.isfinite(value) else np.inf
