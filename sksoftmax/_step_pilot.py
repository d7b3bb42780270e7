"""The step pilot of ``SoftmaxClassifier``'s exact solver.

``pilot`` picks the scale ``eta`` of the exact solver's per-feature
AdaGrad-norm steps (``eta0='auto'``) on the first rows of the first epoch:
stage 1 walks the grid of ``pilot_walk`` on the progressive log-loss of a
few hundred to PILOT_MAX_ROWS rows, stage 2 races the two best on the
held-out rows, and the winner completes the first epoch.
``horizon_step`` scales the pilot's step to the horizon of a longer
constant-step phase (the step-rule race, ``_step_rule_race.py``). The
distributed estimator's pilot (``distributed/_dsmlr.py``) follows the same
rule with these constants.
"""

import numpy as np

from .exceptions import DivergenceError

# The exact solver's step pilot: scales of the AdaGrad-norm step (the
# first update of a feature's K weights has norm eta) on the grid
# PILOT_GRID (1/27 ... 3) extended by PILOT_MAX_EXTEND of its steps beyond
# either end (1/729 ... 81), each run on the same first rows of the first
# epoch. It tries PILOT_ETAS first and walks outward along the grid while
# the winner is at an end of what it tried (``pilot_walk``); the rows of a
# trial are at most a 1 / PILOT_ROW_DIVISOR share of the training rows
# (five trials cost about one epoch) and at most PILOT_MAX_ROWS.
PILOT_GRID = tuple(3.0**k for k in range(-3, 2))  # 1/27 ... 3
PILOT_MAX_EXTEND = 3
PILOT_ETAS = PILOT_GRID[2:]  # 1/3, 1, 3: where the winners were
PILOT_ROW_DIVISOR = len(PILOT_GRID)
PILOT_MAX_ROWS = 50_000
PILOT_MIN_ROWS = 200
# the step scale when there are too few rows for the pilot: a feature's
# first update moves its K weights by one unit of log-odds
ETA_NO_PILOT = 1.0
# stage 2: the two best race over at most this many times m further rows
# (the rest of the first epoch when it is shorter: every row of a set of
# up to 250,000 rows; a cost cap, so that the race costs at most 8 m rows)
PILOT_RACE_ROWS = 4


def pilot_walk(score):
    """The exact solver's stage-1 search: ``score(eta)`` (lower is better,
    inf for a divergence) at each of PILOT_ETAS, then one grid step
    further beyond an end while the best finite score is there (below the
    lowest when every score is infinite), within PILOT_GRID extended by
    PILOT_MAX_EXTEND steps either way. Returns {eta: score}.

    On a score that is unimodal in log eta this tries the grid's winner
    and both of its neighbours, as scoring all of PILOT_GRID and then
    extending it did, with two trials fewer when the winner is inside
    PILOT_ETAS.
    """
    ratio = PILOT_GRID[1] / PILOT_GRID[0]
    lowest = PILOT_GRID[0] / ratio**PILOT_MAX_EXTEND
    highest = PILOT_GRID[-1] * ratio**PILOT_MAX_EXTEND
    results = {eta: score(eta) for eta in PILOT_ETAS}
    while True:
        etas = sorted(results)
        finite = [e for e in etas if results[e] < np.inf]
        lead = min(finite, key=results.get) if finite else None
        if lead is None or lead == etas[0]:
            new = etas[0] / ratio
        elif lead == etas[-1]:
            new = etas[-1] * ratio
        else:
            return results
        if not lowest * (1 - 1e-9) <= new <= highest * (1 + 1e-9):
            return results
        results[new] = score(new)


class _Trials:
    """Runs of the exact solver over parts of the pilot's rows, each from
    the setup state, reset in place (``ExactSolver.reset``): no copy of W
    is ever kept."""

    def __init__(self, solver, X, y, sample_weight):
        self.solver = solver
        self.X, self.y, self.sample_weight = X, y, sample_weight

    def run(self, rows):
        """One pass over ``rows`` from the current state; its progressive
        log-loss (inf for a divergence)."""
        try:
            loss_sum, weight_sum = self.solver.epoch(
                self.X, self.y, self.sample_weight, rows
            )
            score = loss_sum / weight_sum if weight_sum > 0 else np.inf
        except DivergenceError:
            score = np.inf
        return score if np.isfinite(score) else np.inf

    def from_start(self, eta, *parts):
        """Reset to the start and run ``parts`` at step eta; the last
        part's score."""
        self.solver.reset()
        self.solver.eta = eta
        score = np.inf
        for part in parts:
            score = self.run(part)
            if score == np.inf:
                break
        return score


def pilot(est, X, y, sample_weight, rows, whole_epoch=True, held_out=None,
          complete_epoch=True):
    """Pick the exact solver's step scale for the estimator ``est`` (its
    solver ``est._solver`` fresh from setup); returns (eta, rows): the
    rows the winner was judged over (m, or m and stage 2's), None when
    there were too few rows to try.

    Stage 1: each candidate of ``pilot_walk`` (PILOT_ETAS, walking on
    along the grid past an end while the winner is there) runs from
    the same start over the same first m rows of a random order, m at
    most a fifth of the rows; its
    score is the progressive log-loss of the second half of those rows,
    each row scored before its own update, an honest held-out
    estimate on rows in random order. Stage 2 (``whole_epoch``): the
    two best go on over the next PILOT_RACE_ROWS x m rows (the rest of
    the epoch at up to 250,000 rows) and the lower log-loss on the
    ``held_out`` rows after them wins (without held-out rows, the
    lower progressive log-loss over them), so the choice is made at
    the horizon of a whole epoch or of 250,000 rows, on the rows that
    stop the fit; the winner then completes the first epoch
    (unless ``complete_epoch`` is False: the race's constant phase
    rescales the step and starts again). (On rows
    grouped by source the progressive loss of rows in random order
    rewards learning each source's own vocabulary, which the held-out
    rows, the last sources, do not: the user guide, "The step
    pilot's two stages".) No copy of W is
    kept: every run restarts from the setup state in place
    (``ExactSolver.reset``) and replays the rows it needs.
    """
    n = rows.shape[0]
    m = min(PILOT_MAX_ROWS, n // PILOT_ROW_DIVISOR)
    if m < PILOT_MIN_ROWS:
        if est.verbose:
            print(
                f"eta0='auto': {n} rows are too few for the pilot; "
                f"using {est._solver.eta:.3g}"
            )
        return est._solver.eta, None
    order = est._rng.permutation(rows).astype(np.intp)
    first, second = order[: m // 2], order[m // 2 : m]
    race = order[m : (1 + PILOT_RACE_ROWS) * m]
    rest = order[(1 + PILOT_RACE_ROWS) * m :]
    trials = _Trials(est._solver, X, y, sample_weight)
    results = pilot_walk(lambda eta: trials.from_start(eta, first, second))
    # the two best
    ranked = sorted((v, e) for e, v in results.items() if v < np.inf)[:2]
    est.eta0_trials_ = np.array(sorted(results.items()))
    if not ranked:
        est._solver.reset()
        est._solver.eta = min(results)
        return est._solver.eta, None
    finals = []
    parts = (first, second, race) if whole_epoch else (first, second)
    if whole_epoch and race.shape[0] > 0 and len(ranked) > 1:
        eta, finals = _race(est, trials, ranked, parts, held_out)
    else:
        eta = ranked[0][1]
        # the stage-1 state, rebuilt from the start (m rows or 5 m)
        trials.from_start(eta, *parts)
    if whole_epoch and complete_epoch and rest.shape[0] > 0:
        # the winner completes the first epoch
        trials.run(rest)
    est._solver.finalize()
    if est.verbose:
        _report(results, finals, m, race.shape[0], held_out, eta)
    return eta, m + (race.shape[0] if finals else 0)


def _race(est, trials, ranked, parts, held_out):
    """Stage 2: the two best of stage 1 (``ranked``) each run ``parts``
    from the start; the lower held-out log-loss after them wins (without
    held-out rows, the lower progressive log-loss). Returns (eta, finals),
    the winner's state left in the solver."""
    finals = []
    # the runner-up first: when the leader of stage 1 wins the
    # race, as it mostly does, its state is the one left
    for _, eta in reversed(ranked):
        score = trials.from_start(eta, *parts)
        if held_out is not None and score < np.inf:
            est._solver.finalize()
            score = float(est._held_out_losses(held_out) @ held_out[2])
        finals.append((score, eta))
    finals.sort()
    eta = finals[0][1]
    if eta != ranked[0][1]:
        # the runner-up won: its state is rebuilt (5 m rows)
        trials.from_start(eta, *parts)
    return eta, finals


def _report(results, finals, m, n_race, held_out, eta):
    """The pilot's line of ``verbose``."""
    tried = ", ".join(f"{e:.3g}: {v:.4g}" for e, v in sorted(
        results.items()))
    line = (
        f"eta0='auto': pilot on {m} rows, progressive log-loss "
        f"{{{tried}}}"
    )
    if finals:
        line += (
            f"; after the next {n_race} rows, held-out "
            if held_out is not None
            else f"; on the next {n_race} rows "
        ) + ", ".join(
            f"{e:.3g}: {v:.4g}" for v, e in finals
        )
    print(line + f"; using {eta:.3g}")


def horizon_step(eta, judged, horizon, verbose=0):
    """The constant step for a descent over ``horizon`` rows, from the
    pilot's ``eta`` judged over ``judged`` rows: SGD's best constant
    step over T updates falls as 1 / sqrt(T) (the bound
    D^2 / (2 eta T) + eta G^2 / 2 is least at eta = D / (G sqrt(T))),
    so the pilot's step, best over its short run, is scaled by
    sqrt(judged / horizon); never up (the user guide, "The constant
    step's starting step")."""
    scaled = eta * min(1.0, np.sqrt(judged / horizon))
    if verbose:
        print(
            f"Constant step: the pilot's {eta:.3g}, judged over "
            f"{judged} rows, scaled to {scaled:.3g} for about "
            f"{horizon} rows (square root of their ratio)"
        )
    return scaled
