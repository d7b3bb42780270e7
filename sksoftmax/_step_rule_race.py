"""The race of the exact solver's step rules in ``SoftmaxClassifier.fit``.

After the held-out phase with per-feature AdaGrad steps, the same phase
runs again with one constant step for every weight (its start scaled to
the phase's horizon, ``_step_pilot.horizon_step``), on the same row
orders; the constant step is kept only when its held-out loss is lower
beyond the held-out rows' noise, else AdaGrad's model, path and
generator state are restored (the user guide, "The step rule: a race on
the held-out rows").
"""

import numpy as np

from ._descent import descend
from ._held_out import significantly_worse
from ._solver_choice import (
    EXACT_MAX_MEMORY_SHARE,
    new_solver,
    weight_bytes,
    within_memory,
)
from .exceptions import DivergenceError


def races_step_rules(est, X, held_out, warm):
    """Whether ``fit`` races the exact solver's step rules: 'exact'
    with ``eta0='auto'``, held-out rows, not warm, no rule forced, and
    W three times (the AdaGrad phase's model, the constant phase's and
    its snapshot) within EXACT_MAX_MEMORY_SHARE of the memory."""
    if (
        est.solver_ != "exact"
        or est.eta0 != "auto"
        or held_out is None
        or warm
        or est.__dict__.get("_exact_step_rule") is not None
    ):
        return False
    need = 3.0 * weight_bytes(est.classes_.shape[0], X)
    if not within_memory(need):
        if est.verbose:
            print(
                "No step-rule race: three copies of the weights would "
                f"take more than {EXACT_MAX_MEMORY_SHARE:g} of the "
                "memory; per-feature AdaGrad steps kept"
            )
        return False
    return True


def race_step_rules(est, X, y, sample_weight, rows, held_out, path, orders):
    """The exact solver's step rules, raced on the held-out rows; returns
    the path of the rule kept (``est.step_rule_``).

    Per-feature AdaGrad-norm steps (the held-out phase just run, whose
    model and ``path`` are given) give a rare feature as large a step
    as a frequent one; where the rows are few per feature and class
    the model then learns the rare features' noise (the user guide,
    "The step rule: a race on the held-out rows"). The constant step
    moves a weight in proportion to how often its feature occurs.

    The same held-out phase runs again with it: from the start (its
    own pilot), on the same row orders (the generator's state
    ``orders``, where the AdaGrad phase started: the two rules see
    the same draws), back to its best epoch with half the step on a
    plateau. It is given up once it has run as many epochs as the
    AdaGrad phase without a held-out loss below AdaGrad's best. It is
    kept when its held-out loss is lower beyond the held-out rows'
    noise (the paired per-row test of the undo); else the AdaGrad
    phase's model, path and the generator's state are restored, and
    the fit goes on as without the race.
    """
    w = held_out[2]
    a_solver = est._solver
    a_rows = est._held_out_losses(held_out)
    a_loss = float(a_rows @ w)
    a_best, a_eta0 = est.best_iter_, est.__dict__.get("eta0_trials_")
    rng_state = est._rng.get_state()
    est._rng.set_state(orders)
    est.step_rule_ = "constant"
    b_path = _constant_phase(
        est, X, y, sample_weight, rows, held_out, a_loss, a_best
    )
    if b_path:
        b_rows = est._held_out_losses(held_out)
        b_loss = float(b_rows @ w)
        won = b_loss < a_loss and significantly_worse(a_rows, b_rows, w)
    else:
        b_loss, won = np.nan, False
    if est.verbose:
        print(
            f"Step rules: the constant step's held-out log-loss "
            f"{b_loss:.5f}: "
            + (
                "lower beyond the noise, kept"
                if won
                else "not lower beyond the noise; AdaGrad's kept"
            )
        )
    if won:
        return b_path
    est.step_rule_ = "adagrad"
    est._solver = a_solver
    est.best_iter_ = a_best
    if a_eta0 is None:
        est.__dict__.pop("eta0_trials_", None)
    else:
        est.eta0_trials_ = a_eta0
    est._rng.set_state(rng_state)
    return path


def _constant_phase(est, X, y, sample_weight, rows, held_out, a_loss,
                    a_best):
    """The held-out phase again with the constant step, from a fresh
    solver, given up after as many epochs as AdaGrad's phase ran
    (``est.n_iter_``) unless its held-out loss is below AdaGrad's
    ``a_loss``; its path, or None when it diverged."""
    budget = est.n_iter_
    if est.verbose:
        print(
            f"Step rules: AdaGrad's held-out log-loss {a_loss:.5f} "
            f"(epoch {a_best}); the constant step from the start, "
            f"given up after {budget} epochs unless below it"
        )
    new_solver(est, X, y[rows], sample_weight[rows])
    try:
        return descend(
            est, X, y, sample_weight, rows, held_out, False,
            give_up=lambda epochs, kept: (
                epochs >= budget and not kept < a_loss
            ),
            horizon=budget * rows.shape[0],
        )
    except DivergenceError:
        return None
