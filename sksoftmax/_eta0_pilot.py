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
  held out; the others, in a random order, form the pool the trial rows
  are taken from (nested: each stage's rows contain the last stage's).
  With fewer than ``PILOT_MIN_ROWS`` training rows the closed-form rule is
  kept (the held-out loss of so few rows is too noisy to rank steps).
* Trials: each runs the estimator's solver (``_solver.PilotSetup``: the
  method with the same parameters on one thread, without averaging) from
  a fresh state of its ``setup``, with the classes and class-prior start
  of the real fit (a copy of its class counts), ``PILOT_EPOCHS`` passes
  over the stage's rows, eta0 fixed at the trial value. Only the columns
  that the trial rows use are kept: the other columns of W get no
  gradient in the trial, so the trial is the same as on all columns at a
  fraction of the memory.
* Criterion: the exact log-loss of the held-out rows (all K classes). A
  trial that diverges counts as infinite loss.
* Stage 1, ``PILOT_ROWS`` rows: start at the closed-form rule eta_r; step
  by ``FACTOR`` up while the loss falls, else down while it falls, at
  most ``MAX_STEPS`` steps.
* Later stages, the horizon (a departure from a one-sample pilot). A few
  passes over a small sample favour a step that is too large for the
  whole fit: the best constant step of SGD shrinks as the run grows
  (noise accumulates over more steps; for a convex loss the best constant
  step of T steps scales as 1 / sqrt(T)), and how fast it shrinks depends
  on how redundant the rows are, which no formula of the sizes knows.
  Measured on the 10,000-class tokens task (4M rows), Implicit SGD's
  pilot chose 0.022 on 2,048 rows, 0.0074 on 16,384 and 0.0025 on 65,536,
  and the best of a ten-epoch grid on all rows was 1e-3 (test log-loss
  2.47, against 3.09 at the one-sample pilot's step); on a 20,000-class
  Zipfian set with 4 rows per class the best step of the grid was instead
  larger than the pilot's. So the pilot follows the drift itself: each
  stage multiplies the rows by ``PILOT_GROWTH`` and tries the current
  step and ``1 / FACTOR`` of it (walking down while the loss falls). A
  stage that keeps the step does not end the stages: on the tokens task
  8,192 rows kept 0.022 (held-out 3.268 against 3.282), 32,768 moved to
  0.0074 and 131,072 to 0.0025. The stages end before one that would
  use more than an eighth of the training rows or more than
  ``PILOT_MAX_ROWS``, or whose trial matrix (K x the columns its rows
  use) would exceed ``PILOT_MAX_BYTES`` (1.8 GB on the tokens task, whose
  W is 2.6 GB: the pilot raises the fit's peak memory there). Only
  smaller steps are tried there: where the whole fit wanted a larger
  step (the Zipfian set), it was less than a factor of 3 away and cost
  under 1% of test log-loss,
  while a step too large for the whole fit cost 25% on the tokens task.
* After the stages, the estimator multiplies the best trial by
  ``min(1, sqrt(50 / r))``, r the rows per class
  (``_step_rules.RowNormStats.pilot_step_factor``): the stages stop at
  131,072 rows, and at hundreds of rows per class an epoch is still long
  enough for the noise of the trials' step to dominate (tokens: U-max's
  stages kept 3.3e-4, ten epochs want 1e-4 to 1.9e-4).

Cost: a few passes over each stage's rows (the stages together cost
about as many row visits as three or four passes over the last stage's
rows), a few exact evaluations of ``PILOT_VAL_ROWS`` rows, and one trial
weight matrix of K x (columns the stage's rows use) at a time. It is
recorded in ``eta0_trials_`` (step, held-out loss, rows of the stage).
"""

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

from ._shared._dataset import make_dataset
from ._shared._weight_matrix import make_weight_matrix
from ._solver import PilotSetup, exact_log_loss
from .exceptions import DivergenceError

PILOT_MIN_ROWS = 500
PILOT_ROWS = 2048
PILOT_VAL_ROWS = 512
FACTOR = 3.0
MAX_STEPS = 6
PILOT_EPOCHS = 2
PILOT_GROWTH = 4
PILOT_MAX_ROWS = 131072
PILOT_MAX_BYTES = 2**31


def pilot_rows(n_rows, sample_weight, random_state):
    """Indices (pool, held-out) of the pilot, or None below the minimum.

    ``pool`` holds the candidate trial rows in a random order (a stage
    takes its first rows), at most ``PILOT_MAX_ROWS``; ``held-out`` is
    sorted. Rows of zero weight are left out: they teach nothing and count
    for nothing in the held-out loss.
    """
    rows = np.flatnonzero(sample_weight > 0)
    if rows.shape[0] < PILOT_MIN_ROWS:
        return None
    rng = check_random_state(random_state)
    rows = rows[rng.permutation(rows.shape[0])]
    n_val = min(PILOT_VAL_ROWS, rows.shape[0] // 4)
    val = np.sort(rows[:n_val])
    pool = rows[n_val : n_val + PILOT_MAX_ROWS]
    return pool, val


def stage_sizes(n_pool, n_rows):
    """Rows of each stage: PILOT_ROWS (or the pool), then times
    PILOT_GROWTH while within the pool and an eighth of ``n_rows``."""
    sizes = [min(PILOT_ROWS, n_pool)]
    while True:
        nxt = sizes[-1] * PILOT_GROWTH
        if nxt > n_pool or nxt > n_rows // 8:
            return sizes
        sizes.append(nxt)


def _used_columns(X_train, X_val):
    """X_train, X_val restricted to the columns X_train uses (CSR only)."""
    if not sp.issparse(X_train):
        return X_train, X_val
    cols = np.unique(X_train.indices)
    if cols.shape[0] == 0:
        cols = np.zeros(1, dtype=np.intp)
    return X_train[:, cols], X_val[:, cols]


def pilot_eta0(setup, X, y_enc, sample_weight, start):
    """Run the pilot; return (eta0, trials) or (start, None) if too few rows.

    ``setup``: the estimator's ``PilotSetup`` (its solver on one thread,
    schedule, random_state and a copy of the class counts of the fit).
    trials is an array of rows (eta0, held-out log-loss, stage rows) in
    the order run.
    """
    split = pilot_rows(X.shape[0], sample_weight, setup.random_state)
    if split is None:
        return start, None
    pool, val = split
    n_classes = setup.n_classes
    itemsize = np.dtype(X.dtype).itemsize
    trials = []
    best = start
    for stage, n_stage in enumerate(stage_sizes(len(pool), X.shape[0])):
        train = np.sort(pool[:n_stage])
        X_train, X_val = _used_columns(X[train], X[val])
        if stage > 0 and (
            n_classes * X_train.shape[1] * itemsize > PILOT_MAX_BYTES
        ):
            break
        if not sp.issparse(X_train):
            X_train = np.ascontiguousarray(X_train)
            X_val = np.ascontiguousarray(X_val)
        args = (
            X_train,
            y_enc[train],
            sample_weight[train],
            X_val,
            y_enc[val],
            sample_weight[val],
        )
        losses = {}

        def loss(eta):
            if eta not in losses:
                losses[eta] = _trial(setup, eta, *args)
                trials.append((eta, losses[eta], n_stage))
            return losses[eta]

        stage_start = best
        loss(stage_start)  # stage 1: the closed-form rule
        directions = (FACTOR, 1.0 / FACTOR) if stage == 0 else (1 / FACTOR,)
        for direction in directions:
            eta = best
            for _ in range(MAX_STEPS):
                eta = eta * direction
                if not loss(eta) < loss(best):
                    break
                best = eta
            if best != stage_start:
                break  # the first direction improved: no need to try others
        if stage == 0 and not np.isfinite(losses[best]):
            tried = np.array([t[0] for t in trials])
            raise DivergenceError(
                f"{setup.name}: eta0='auto' found no step "
                f"size that trains without diverging (tried {tried}); set "
                "eta0 by hand or rescale the features."
            )
    return best, np.array(trials, dtype=np.float64)


def _trial(setup, eta, X_train, y_train, w_train, X_val, y_val, w_val):
    """Held-out log-loss after ``PILOT_EPOCHS`` passes of the method at
    step ``eta``, from a fresh state (the solver's ``setup``: zero weights,
    the class-prior intercepts, a new generator), one thread, no averaging.

    ``setup`` is a ``PilotSetup`` (an estimator is asked for its own).
    """
    if not isinstance(setup, PilotSetup):
        setup = setup._pilot_setup()
    solver = setup.solver_at(eta)
    state = solver.setup(
        X_train.shape[1],
        X_train.dtype,
        setup.random_state,
        setup.class_count,
        setup.max_row_weight,
    )
    dataset = make_dataset(X_train, w_train)
    weights = make_weight_matrix(state.coef, state.intercept, 0.0)
    row_state = solver.new_row_state(X_train.shape[0])
    order = np.arange(X_train.shape[0], dtype=np.intp)
    try:
        for epoch in range(PILOT_EPOCHS):
            solver.epoch(
                state,
                dataset,
                weights,
                y_train,
                row_state,
                order,
                setup.schedule.eta_for_epoch(eta, setup.decay, epoch),
                epoch == 0,
            )
    except DivergenceError:
        return np.inf
    finally:
        weights.fold_scale()
    with np.errstate(all="ignore"):
        value = exact_log_loss(
            state.coef, state.intercept, X_val, y_val, w_val
        )
    return value if np.isfinite(value) else np.inf
