"""sksoftmax._stopping.Stopping: the decisions of early stopping, on a
model that is a dict (snapshots are copies of it)."""

import numpy as np
import pytest

from sksoftmax._stopping import Stopping


def _model():
    state = {"epoch": 0}
    return state, {"snapshot": lambda: dict(state), "restore": state.update}


def _run(stopping, state, losses, rows=None):
    """Check one epoch per loss (the model's state: its epoch number);
    returns the decisions and the step each epoch ran with."""
    decisions, steps = [], []
    for i, loss in enumerate(losses):
        steps.append(stopping.eta)
        state["epoch"] = i + 1
        decisions.append(stopping.check(loss, None if rows is None else rows[i]))
        if stopping.stop:
            break
    return decisions, steps


def test_training_rule_undoes_worse_checks_and_stops_on_patience():
    """Without held-out rows: a check above the best is undone (the best
    model restored) and halves the step; one below it by less than tol is
    kept at the same step; patience counts both."""
    state, fns = _model()
    stopping = Stopping(eta=1.0, tol=0.01, patience=3, **fns)
    stopping.start(2.0)
    decisions, steps = _run(stopping, state, [1.0, 1.5, 0.999, 0.998, 0.5])
    assert decisions == ["improved", "undone", "kept", "kept"]
    assert steps == [1.0, 1.0, 0.5, 0.5]
    assert stopping.stop and stopping.n_checks == 4
    # the best: the last check at or below the best loss (epoch 4)
    assert stopping.best == 0.998 and stopping.best_check == 4
    assert stopping.finish() == 4 and state["epoch"] == 4


def test_an_undone_check_restores_the_best_model():
    state, fns = _model()
    stopping = Stopping(eta=1.0, tol=1e-3, patience=5, **fns)
    stopping.start(2.0)
    _run(stopping, state, [1.0, 3.0])
    assert state["epoch"] == 1 and stopping.eta == 0.5
    # an overflow (NaN or inf) is a worse check
    state["epoch"] = 3
    assert stopping.check(np.nan) == "undone" and state["epoch"] == 1


def test_held_out_rule_keeps_within_noise_and_returns_the_best():
    """With held-out rows: a check worse than the best within the rows'
    noise is kept (the step halved with halve_stalled), one worse beyond it
    is undone; finish goes back to the best model."""
    rng = np.random.RandomState(0)
    n = 200
    weights = np.full(n, 1.0 / n)
    base = rng.rand(n)
    noise = 0.05 * rng.randn(n)
    # worse by 0.001 on the mean, within the noise (its standard error
    # about 0.0035); then worse beyond it
    noisy = base + 0.001 + (noise - noise.mean())
    worse = base + 0.5
    state, fns = _model()
    stopping = Stopping(eta=1.0, tol=1e-3, patience=5, weights=weights,
                        halve_stalled=True, **fns)
    stopping.start(10.0, np.full(n, 10.0))
    rows = [base, noisy, worse]
    losses = [float(r @ weights) for r in rows]
    decisions, steps = _run(stopping, state, losses, rows)
    assert decisions == ["improved", "kept", "undone"]
    assert steps == [1.0, 1.0, 0.5]
    assert stopping.eta == 0.25
    assert state["epoch"] == 1  # the undo went back to epoch 1
    state["epoch"] = 4
    assert stopping.check(losses[1], rows[1]) == "kept"
    assert stopping.finish() == 1 and state["epoch"] == 1
    assert stopping.best == losses[0]


def test_tol_none_never_stops_but_still_undoes():
    state, fns = _model()
    stopping = Stopping(eta=1.0, tol=None, patience=1, **fns)
    stopping.start(1.0)
    decisions, _ = _run(stopping, state, [0.9, 2.0, 2.0, 0.85])
    assert decisions == ["improved", "undone", "undone", "improved"]
    assert not stopping.stop and stopping.n_bad == 0
    assert stopping.finish() == 4 and state["epoch"] == 4


def test_a_model_object_and_no_model():
    class Model:
        def __init__(self):
            self.w, self.restored = 0, 0

        def snapshot(self):
            return self.w

        def restore(self, snap):
            self.w, self.restored = snap, self.restored + 1

    model = Model()
    stopping = Stopping(model, eta=1.0, tol=1e-3, patience=3)
    stopping.start(1.0)
    model.w = 1
    stopping.check(0.5)
    model.w = 2
    assert stopping.check(0.9) == "undone" and model.w == 1
    assert stopping.best_snapshot == 1
    # without a model: a worse check is kept (nothing to go back to), the
    # step halved; the last model is the one left
    bare = Stopping(eta=1.0, tol=1e-3, patience=3)
    bare.start(1.0)
    assert bare.check(0.5) == "improved"
    assert bare.check(0.9) == "kept" and bare.eta == 0.5
    assert bare.best_snapshot is None and bare.finish() == 2


def test_state_round_trip():
    """A fit that resumes sets the decisions' state back: the same
    decisions follow."""
    state, fns = _model()
    a = Stopping(eta=1.0, tol=1e-2, patience=3, **fns)
    a.start(2.0)
    _run(a, state, [1.0, 1.2, 0.999])
    saved = a.state()
    b = Stopping(eta=8.0, tol=1e-2, patience=3, **fns)
    b.set_state(saved)
    for s in (a, b):
        assert s.check(1.5) == "undone"
    assert a.state() == b.state()
    assert a.eta == b.eta == 0.25 and b.n_bad == a.n_bad == 3 and b.stop


@pytest.mark.parametrize("loss", [np.inf, -np.inf, np.nan])
def test_non_finite_checks_are_worse(loss):
    state, fns = _model()
    stopping = Stopping(eta=1.0, tol=1e-3, patience=3, **fns)
    stopping.start(1.0)
    assert stopping.check(loss) == "undone"
