"""The epochs of ``SoftmaxClassifier.fit``: the held-out descent, the refit.

``descend`` runs a ``Descent``: epochs over the training rows, scored on
the held-out rows after each, an epoch worse beyond their noise undone
with half the step, a plateau of the exact solver's constant step taken
back to the best epoch with half the step, a constant-step sampled solver
started again from the start at half the step while each phase finds a
new best, and the kept epoch's model restored at the end; it returns the
kept epochs' steps (the path). ``refit_and_blend`` fits again on every
row along that path and averages the result with the held-out phase's
model. ``end_of_epoch`` records and reports an epoch (the fit's hook
``_epoch_callback`` included), ``full_pass`` runs a pass with no way back
(the refit's, partial_fit's).
"""

import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ._centring import shift_intercepts
from ._epochs import improves
from ._held_out import significantly_worse
from ._solver_choice import EXACT_MAX_MEMORY_SHARE, new_solver, snapshots_fit
from ._step_pilot import horizon_step, pilot
from .exceptions import DivergenceError

# The refit model's weight in its mean with the held-out phase's model
# (equal weights: two runs of the same path)
SOUP_WEIGHT = 0.5


def descend(est, X, y, sample_weight, rows, held_out, warm, give_up=None,
            horizon=None):
    """Epochs of the estimator ``est`` over the rows ``rows`` of (X, y)
    until the held-out (or training) loss stops improving, or
    ``give_up(epochs, kept)`` (the epochs of this descent, the best
    held-out loss so far) is true (without a ConvergenceWarning); returns
    the path to the model kept: the steps of its epochs. With the exact
    solver's constant step, a plateau goes back to the best epoch with
    half the step, as long as the step before it improved the kept model.

    ``held_out``: (X_val, y_val, w_val) or None. ``horizon``: the rows
    the descent is expected to run over (the step-rule race's constant
    phase). The pilot's step, judged over fewer rows, is then scaled by
    the square root of their ratio (``horizon_step``) and the descent
    starts from the start with it.
    """
    return Descent(est, X, y, sample_weight, rows, held_out).run(
        warm, give_up, horizon
    )


class Descent:
    """One descent's state, between its epochs.

    A phase is the run from one start: the first, and after each restart
    from the start. ``best`` / ``best_rows``: the phase's best held-out
    loss and its rows' losses (improvement, patience, the undo's test);
    ``kept`` / ``kept_rows``: the best over every phase, whose state
    ``snap`` holds (with ``own``: from this phase), with the path to it;
    ``n_bad``: epochs without improvement; ``path``: the steps of the
    epochs that made the current model.
    """

    def __init__(self, est, X, y, sample_weight, rows, held_out):
        self.est = est
        self.X, self.y, self.sample_weight = X, y, sample_weight
        self.rows, self.held_out = rows, held_out
        self.path = []

    def run(self, warm, give_up=None, horizon=None):
        """The descent (``descend``); returns the path."""
        est = self.est
        start_epoch = self._pilot(warm, horizon)
        self._start(warm, start_epoch)
        for epoch in range(start_epoch, est.max_iter):
            if give_up is not None and give_up(epoch, self.kept):
                if est.verbose:
                    print(
                        f"The constant step given up after {epoch} epochs "
                        f"(best held-out log-loss {self.kept:.5f})"
                    )
                break
            if not self._epoch():
                break
        else:
            if est.tol is not None and est.max_iter > 1 and give_up is None:
                # (not for the step-rule race's constant phase: the fit
                # goes on with the rule the race keeps)
                warnings.warn(
                    f"Maximum number of epochs ({est.max_iter}) reached "
                    "before the stopping criterion; consider increasing "
                    "max_iter.",
                    ConvergenceWarning,
                )
        self._finish()
        return self.path

    def _pilot(self, warm, horizon):
        """The exact solver's step pilot (``eta0='auto'``, not warm);
        returns the epochs it made: 1 when its winner completed the first
        epoch, else 0."""
        est = self.est
        if warm or est.solver_ != "exact" or est.eta0 != "auto":
            return 0
        eta, tried = pilot(
            est, self.X, self.y, self.sample_weight, self.rows,
            held_out=self.held_out, complete_epoch=horizon is None,
        )
        if tried is None:
            return 0
        if horizon is not None:
            est._solver.reset()
            est._solver.eta = horizon_step(eta, tried, horizon, est.verbose)
            return 0
        # the pilot's winner has made the first epoch
        self.path.append(eta)
        end_of_epoch(est, np.nan, np.nan, self.held_out)
        report(est, "the pilot's winner")
        return 1

    def _start(self, warm, start_epoch):
        """The state before the first epoch: the starting model (class
        prior, the pilot's winner, or the warm start) is the one to beat,
        and its snapshot the one to go back to."""
        est, held_out = self.est, self.held_out
        self.best, self.snap, self.n_bad = np.inf, None, 0
        self.best_rows = None
        est.best_iter_ = 0
        # no snapshot where W and its copy would not fit (snapshots_fit)
        self.keep = held_out is not None and snapshots_fit(est, self.X)
        if est.verbose and held_out is not None and not self.keep:
            print(
                "No snapshot of the model for the undo: the solver's state "
                "twice would take more than "
                f"{EXACT_MAX_MEMORY_SHARE:g} of the memory; a worse epoch "
                "halves the step and is kept"
            )
        if held_out is not None and hasattr(est, "coef_"):
            self.best_rows = est._held_out_losses(held_out)
            self.best = est.validation_loss_[-1] if start_epoch else float(
                self.best_rows @ held_out[2]
            )
            if self.keep:
                self.snap = (est._solver.snapshot(), list(self.path))
            est.best_iter_ = est.n_iter_
        self.kept, self.own = self.best, True
        # the kept model's per-row held-out losses: a restart's epoch
        # replaces it only when better beyond the held-out rows' noise
        self.kept_rows = self.best_rows
        # A constant-step sampled solver plateaus at a level its step
        # sets: where a phase improved on every earlier one, the fit
        # starts again from the start at half the step the phase ended
        # with, and stops at the first phase that does not (the user
        # guide: restarts from the start). Not 'exact': its AdaGrad steps
        # shrink by themselves, and its constant step halves from its best
        # epoch instead (``halve``; the step-rule race, _step_rule_race.py)
        exact = est.solver_ == "exact"
        self.restart = self.keep and not warm and not exact
        self.halve = self.keep and exact and not est._solver.adaptive
        self.phase_kept = np.inf
        self.tol = 0.0 if est.tol is None else est.tol

    def _epoch(self):
        """One epoch and what follows from its loss; whether the descent
        goes on."""
        est = self.est
        order = est._order(self.rows)
        try:
            loss_sum, weight_sum = est._solver.epoch(
                self.X, self.y, self.sample_weight, order
            )
        except DivergenceError as exc:
            return self._diverged(exc)
        est._solver.finalize()
        # the step this epoch took (a sampled solver's 'auto' step is
        # known once its first pass has run)
        self.path.append(est._solver.eta)
        train_loss = loss_sum / weight_sum if weight_sum > 0 else np.nan
        improved, worse = self._score(train_loss)
        if improved:
            self.n_bad = 0
            report(est, "improved")
            return True
        self.n_bad += 1
        decision = self._after_worse(worse)
        if self.n_bad < est.n_iter_no_change:
            report(
                est,
                decision
                or f"no improvement ({self.n_bad} of {est.n_iter_no_change})",
            )
            return True
        goes_on, plateau = self._plateau()
        report(est, (decision + "; " if decision else "") + plateau)
        return goes_on

    def _diverged(self, exc):
        """The step overflowed: back to the phase's best epoch (or its
        start), half the step; without a snapshot, raise. Whether the
        descent goes on."""
        est = self.est
        if self.snap is None:
            raise est._divergence(exc) from exc
        self.n_bad += 1
        est.n_iter_ += 1
        eta = 0.5 * est._solver.eta
        if self.own:
            undo(est, self.snap[0], 0.5)
            self.path = list(self.snap[1])
            back = f"restored epoch {est.best_iter_}"
        else:
            self._start_again(eta)
            back = "started again from the start"
        if est.verbose:
            print(
                f"Epoch {est.n_iter_}: diverged, {cpu_so_far(est):.1f} CPU s "
                f"so far; {back}, step halved to {eta:.3g}"
            )
        return self.n_bad < est.n_iter_no_change

    def _score(self, train_loss):
        """Record the epoch just run (``end_of_epoch``), keep its model
        (a snapshot) when it is the best so far; returns (improved,
        worse): whether it improved on the phase's best, and whether its
        held-out losses are worse beyond their noise."""
        est, held_out = self.est, self.held_out
        rows_loss = None
        if held_out is None:
            monitored = end_of_epoch(est, train_loss, train_loss, None)
            worse = False
        else:
            rows_loss = est._held_out_losses(held_out)
            monitored = end_of_epoch(
                est, train_loss, float(rows_loss @ held_out[2]), held_out
            )
            worse = self.best_rows is not None and significantly_worse(
                rows_loss, self.best_rows, held_out[2]
            )
        improved = improves(monitored, self.best, est.tol)
        if monitored < self.best:
            self.best = monitored
            if held_out is not None:
                self.best_rows = rows_loss
        # (own is False only after a restart, which needs held-out
        # rows and a kept epoch: kept_rows is then set)
        if monitored < self.kept and (
            self.own
            or significantly_worse(self.kept_rows, rows_loss, held_out[2])
        ):
            self.kept, self.own = monitored, True
            if held_out is not None:
                self.kept_rows = rows_loss
            est.best_iter_ = est.n_iter_
            if self.keep:
                # the previous best's arrays are overwritten, not freed
                self.snap = (
                    est._solver.snapshot(
                        into=None if self.snap is None else self.snap[0]
                    ),
                    list(self.path),
                )
        return improved, worse

    def _after_worse(self, worse):
        """An epoch without improvement: without held-out rows, half the
        step; worse beyond the held-out rows' noise, undo the epoch and
        try again with half the step (within the noise, the epoch is kept
        and the step left as it is). Returns what was done, for the
        epoch's line (None: nothing)."""
        solver = self.est._solver
        if self.held_out is None:
            solver.eta = 0.5 * solver.eta
            return f"no improvement: step halved to {solver.eta:.3g}"
        if worse and (self.snap is None or not self.own):
            # no snapshot of this phase's best to go back to
            # (snapshots_fit, or a restart's phase behind an earlier
            # one): the epoch is kept and the next ones take half the
            # step
            solver.eta = 0.5 * solver.eta
            return f"worse beyond the noise: step halved to {solver.eta:.3g}"
        if worse:
            undo(self.est, self.snap[0], 0.5)
            self.path = list(self.snap[1])
            return (
                f"worse beyond the noise: back to epoch "
                f"{self.est.best_iter_}, step halved to {solver.eta:.3g}"
            )
        return None

    def _plateau(self):
        """``n_iter_no_change`` epochs without improvement: the constant
        step back to the best epoch with half the step, or a sampled
        solver from the start with half the step, while the last phase
        improved the kept model; else stop. Returns (whether the descent
        goes on, what was decided)."""
        est = self.est
        waited = f"{est.n_iter_no_change} without improvement"
        if self.halve and self.own and self.snap is not None and improves(
            self.kept, self.phase_kept, self.tol
        ):
            # a plateau at this step: back to the best epoch, half the
            # step, while the last step improved the kept model
            self.phase_kept, self.n_bad = self.kept, 0
            undo(est, self.snap[0], 0.5)
            self.path = list(self.snap[1])
            self.best, self.best_rows = self.kept, self.kept_rows
            return True, (
                f"{waited}: back to epoch {est.best_iter_}, step halved "
                f"to {est._solver.eta:.3g}"
            )
        if self.restart and improves(self.kept, self.phase_kept, self.tol):
            self.phase_kept, self.n_bad = self.kept, 0
            eta = 0.5 * est._solver.eta
            self._start_again(eta)
            return True, (
                f"{waited}: starting again from the start with half the "
                f"step, {eta:.3g} (best so far: epoch {est.best_iter_}, "
                f"{self.kept:.5f})"
            )
        return False, f"{waited}: stop; the model of epoch {est.best_iter_} kept"

    def _start_again(self, eta):
        """A new phase: a fresh solver at step ``eta``."""
        new_solver(
            self.est, self.X, self.y[self.rows], self.sample_weight[self.rows]
        )
        self.est._solver.eta = eta
        self.path, self.best, self.best_rows, self.own = [], np.inf, None, False

    def _finish(self):
        """The kept epoch's model restored (its path with it)."""
        est = self.est
        if self.snap is not None and (
            est.best_iter_ != est.n_iter_ or not self.own
        ):
            undo(est, self.snap[0], 1.0)
            self.path = list(self.snap[1])
        elif self.held_out is not None and not self.keep:
            # without snapshots the model kept is the last one
            est.best_iter_ = est.n_iter_


def undo(est, snap, step_factor):
    """Back to the state of ``snap``, the current step times
    ``step_factor`` (a snapshot's own step is not restored)."""
    eta = est._solver.eta
    est._solver.restore(snap)
    est._solver.eta = step_factor * eta


def end_of_epoch(est, train_loss, monitored, held_out):
    """Count and record an epoch (reported by ``report``); return the
    monitored loss (held-out log-loss when there are held-out rows:
    ``monitored`` is then that loss, computed by the caller, or NaN to
    compute it)."""
    est.n_iter_ += 1
    est.loss_curve_.append(train_loss)
    if held_out is not None:
        if not np.isfinite(monitored):
            monitored = float(est._held_out_losses(held_out) @ held_out[2])
        est.validation_loss_.append(monitored)
    # (the step the epoch took: a decision after it may change it)
    est._reported = (
        train_loss,
        monitored if held_out is not None else None,
        est._solver.eta,
    )
    callback = getattr(est, "_epoch_callback", None)
    if callback is not None:
        shift = est.__dict__.get("_fit_shift")
        if shift is None:
            callback(est)
        else:
            # the hook sees the model in the rows' own coordinates
            saved = est._solver.b.copy()
            shift_intercepts(est._solver, shift, -1.0)
            try:
                callback(est)
            finally:
                est._solver.b[...] = saved
    return monitored


def cpu_so_far(est):
    """CPU seconds of the process since the fit began (``_fit_cpu0``)."""
    return time.process_time() - est.__dict__.get(
        "_fit_cpu0", time.process_time()
    )


def report(est, decision):
    """With ``verbose``, the last epoch's one line: its held-out log-loss
    (its training loss without held-out rows), the fit's CPU seconds so
    far and what was decided."""
    if not est.verbose:
        return
    train_loss, held, eta = est.__dict__.get(
        "_reported", (np.nan, None, est._solver.eta)
    )
    loss = (
        f"training loss {train_loss:.5f}"
        if held is None
        else f"held-out log-loss {held:.5f}"
    )
    print(
        f"Epoch {est.n_iter_}: {loss}, step {eta:.3g}, "
        f"{cpu_so_far(est):.1f} CPU s so far; {decision}"
    )


def refit_and_blend(est, X, y, sample_weight, path):
    """After the held-out phase: the held-out rows chose the steps and
    the epochs; the model is then fitted again on every row along the
    same ``path`` (``refit``) and, for a solver with ``blend`` ('exact'),
    averaged with the held-out phase's model."""
    # (the held-out phase's model is kept only to be blended: a
    # solver without blend frees its W before the refit's)
    kept = est._solver if hasattr(est._solver, "blend") else None
    refit(est, X, y, sample_weight, path)
    if path and kept is not None:
        # two runs' different row orders, averaged, are a lower-variance
        # fit (the log-loss is convex: the mean's loss is at most the
        # mean of their losses; the user guide, "The refit and the
        # blend")
        est._solver.blend(kept, SOUP_WEIGHT)
        if est.verbose:
            print(
                "The model: the mean of the refit and the held-out "
                f"phase's epoch {est.best_iter_}"
            )


def refit(est, X, y, sample_weight, path):
    """Fit again on all rows from the start, one epoch per step of
    ``path`` (the held-out rows' choice of steps and epochs)."""
    if not path:
        return
    new_solver(est, X, y, sample_weight)
    if est.verbose:
        print(
            f"Refit on all {X.shape[0]} rows along the kept path: "
            f"{len(path)} epochs"
        )
    for i, eta in enumerate(path, 1):
        est._solver.eta = eta
        train_loss = full_pass(est, X, y, sample_weight)
        end_of_epoch(est, train_loss, train_loss, None)
        report(est, f"refit epoch {i} of {len(path)}")


def full_pass(est, X, y, sample_weight):
    """One pass over every row of X with no way back (refit,
    partial_fit): a divergence is raised in the estimator's terms.
    Returns the pass's training-loss estimate."""
    order = est._order(np.arange(X.shape[0], dtype=np.intp))
    try:
        loss_sum, weight_sum = est._solver.epoch(X, y, sample_weight, order)
    except DivergenceError as exc:
        raise est._divergence(exc) from exc
    est._solver.finalize()
    return loss_sum / weight_sum if weight_sum > 0 else np.nan
