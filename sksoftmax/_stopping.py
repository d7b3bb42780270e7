"""Early stopping's decisions, one check after another (private).

A fit checks its model after each epoch: by the log-loss of its held-out
rows or, without held-out rows, by its training objective. A
:class:`Stopping` judges the checks for any solver: it keeps the best
model, counts the checks that do not improve on the best by ``tol``
(relative, as ``_epochs.improves``) and says when ``patience`` of them in
a row end the fit, halves the step on a check worse than the best (first
undone: back to the best model) and, with ``halve_stalled``, on any check
that does not improve, and at the end goes back to the best model.

The model is the caller's: ``Stopping`` only asks for a ``snapshot()``
of it and gives that back to ``restore(snap)``, so a single-process
solver may copy its arrays where ``sksoftmax.distributed`` keeps futures
of class blocks alive on its workers. Nothing here knows of a solver, a
kernel or dask.
"""

import numpy as np

from ._epochs import improves
from ._held_out import significantly_worse


class Stopping:
    """The decisions of early stopping, check after check.

    Call :meth:`start` with the starting model's loss, then after each
    epoch :meth:`check` with the epoch's loss, run the next epoch with
    :attr:`eta` while :attr:`stop` is false, and call :meth:`finish` at
    the end.

    Parameters
    ----------
    model : object, default=None
        The model checked, with ``snapshot()`` (a handle on the current
        model) and ``restore(snap)`` (that model made current again; a
        handle may be restored more than once). Or give the two callables
        ``snapshot`` and ``restore``; with neither, no model is kept: a
        worse check is not undone (only the step is halved) and the last
        model is the one left.
    eta : float
        The step of the first epoch. :attr:`eta` is the step of the next
        epoch: halved by :meth:`check`, read by the caller.
    tol : float or None
        A check improves when its loss is below the best by more than
        ``tol`` times the best (``_epochs.improves``). None: every check
        that is not worse improves, and :attr:`stop` stays false (the fit
        runs all its epochs; a worse check is still undone).
    patience : int
        Checks in a row without an improvement after which :attr:`stop`
        is true.
    weights : ndarray of shape (n_rows,), default=None
        The weights of held-out rows, summing to one. :meth:`start` and
        :meth:`check` then take the rows' per-row losses too, and a check
        is worse only when its rows are worse than the best model's
        beyond their noise (``_held_out.significantly_worse``). None: a
        check is worse when its loss is above the best.
    halve_stalled : bool, default=False
        Also halve the step on a check that is kept without improving (a
        loss not worse than the best, but not better by ``tol``). False:
        only a worse check halves the step.
    snapshot, restore : callable, default=None
        In place of ``model``.

    Attributes
    ----------
    eta : float
        The step of the next epoch.
    best : float
        The lowest loss of a kept check (the starting model's at first).
    best_check : int
        The check that gave it: 0 for the starting model, else its
        position among the checks (1 for the first).
    n_checks : int
        Checks so far.
    n_bad : int
        Checks in a row without an improvement.

    Examples
    --------
    >>> from sksoftmax._stopping import Stopping
    >>> state = {"w": 0.0}
    >>> stopping = Stopping(snapshot=lambda: dict(state), restore=state.update,
    ...                     eta=1.0, tol=1e-3, patience=2)
    >>> stopping.start(1.0)
    >>> state["w"] = 1.0
    >>> stopping.check(0.5)
    'improved'
    >>> state["w"] = 2.0
    >>> stopping.check(0.7), state["w"], stopping.eta
    ('undone', 1.0, 0.5)
    >>> stopping.check(0.6), stopping.stop, stopping.finish()
    ('undone', True, 1)
    """

    def __init__(self, model=None, *, eta, tol, patience, weights=None,
                 halve_stalled=False, snapshot=None, restore=None):
        if model is not None:
            snapshot, restore = model.snapshot, model.restore
        self._snapshot = snapshot
        self._restore = restore
        self.eta = float(eta)
        self.tol = tol
        self.patience = int(patience)
        self.weights = weights
        self.halve_stalled = bool(halve_stalled)
        self.best = np.inf
        self.best_check = 0
        self.n_checks = 0
        self.n_bad = 0
        self._best_rows = None
        self._snap = None
        # whether the current model is the best one (nothing to restore)
        self._at_best = True

    @property
    def stop(self):
        """Whether ``patience`` checks in a row did not improve (never
        with ``tol=None``)."""
        return self.tol is not None and self.n_bad >= self.patience

    @property
    def best_snapshot(self):
        """The best model's handle, as ``snapshot()`` returned it (None
        without one)."""
        return self._snap

    def _keep(self, loss, rows):
        self.best, self._best_rows = loss, rows
        self.best_check = self.n_checks
        self._at_best = True
        if self._snapshot is not None:
            self._snap = self._snapshot()

    def start(self, loss, rows=None):
        """The starting model (before the first epoch) is the one to
        beat: its ``loss`` and, with ``weights``, its per-row losses
        ``rows``."""
        self._keep(float(loss), rows)

    def _worse(self, loss, rows):
        if not np.isfinite(loss):
            return True
        if loss <= self.best:
            return False
        if self.weights is None or rows is None or self._best_rows is None:
            return True
        return significantly_worse(rows, self._best_rows, self.weights)

    def check(self, loss, rows=None):
        """Judge the model after an epoch: its ``loss`` (NaN or inf: the
        epoch overflowed) and, with ``weights``, its per-row losses.

        Returns
        -------
        decision : {'improved', 'kept', 'undone'}
            'improved': better than the best by more than ``tol`` (kept,
            the patience reset). 'kept': not worse than the best, but no
            improvement (with ``halve_stalled``, the step halved).
            'undone': worse than the best, or not finite: the best model
            restored, the step halved. A check at or below the best loss
            becomes the best model.
        """
        self.n_checks += 1
        loss = float(loss)
        if self._worse(loss, rows):
            self.n_bad += 1
            self.eta *= 0.5
            if self._snap is None:
                # no model kept to go back to: the epoch stays
                self._at_best = False
                return "kept"
            self._restore(self._snap)
            self._at_best = True
            return "undone"
        improved = improves(loss, self.best, self.tol)
        if loss <= self.best:
            self._keep(loss, rows)
        else:
            self._at_best = False
        if improved:
            self.n_bad = 0
            return "improved"
        self.n_bad += 1
        if self.halve_stalled:
            self.eta *= 0.5
        return "kept"

    def finish(self):
        """Leave the best model current (the step is not changed); return
        the check it came from (0: the starting model). Without a kept
        model, the last check's model stays and its check is returned."""
        if self._snapshot is None:
            return self.n_checks
        if not self._at_best:
            self._restore(self._snap)
            self._at_best = True
        return self.best_check

    def state(self):
        """The decisions' state, for a fit that resumes: a dict of the
        counters, the step, the best loss and rows and, as ``'snap'``,
        the best model's handle as ``snapshot()`` returned it."""
        return {
            "eta": self.eta, "best": self.best, "best_check": self.best_check,
            "n_checks": self.n_checks, "n_bad": self.n_bad,
            "best_rows": self._best_rows, "snap": self._snap,
            "at_best": self._at_best,
        }

    def set_state(self, state):
        """Back to a :meth:`state` (its ``'snap'`` possibly replaced by a
        handle that restores the same model)."""
        self.eta, self.best = state["eta"], state["best"]
        self.best_check, self.n_checks = state["best_check"], state["n_checks"]
        self.n_bad, self._best_rows = state["n_bad"], state["best_rows"]
        self._snap, self._at_best = state["snap"], state["at_best"]
