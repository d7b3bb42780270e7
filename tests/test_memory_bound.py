"""A million classes on one machine (issue 34, item 5), on small problems:
solver='auto' drops SCENT's momentum and the undo's snapshot when W and
their copies would not fit in the memory, the held-out rows cost at most a
share of an epoch, the refit holds one W, and evaluation by class shards
equals the row-block path."""

import gc
import weakref

import numpy as np
import pytest
import sklearn

from sksoftmax import SoftmaxClassifier, _descent, _held_out, _solver_choice
from sksoftmax._expert_solver import ExpertSolver
from sksoftmax.datasets import make_softmax_classification


@pytest.fixture(scope="module")
def costly():
    # ~770 classes seen x ~1,100 nonzeros: beyond EXACT_MAX_MADDS a row
    X, y = make_softmax_classification(
        n_samples=1500, n_features=3000, n_classes=1000, density=1.0,
        background_exponent=0.0, random_state=0, dtype=np.float32,
    )
    y = np.unique(y, return_inverse=True)[1]
    madds = (y.max() + 1) * (_solver_choice.mean_nnz(X) + 1)
    assert madds > _solver_choice.EXACT_MAX_MADDS
    return X, y


def _w_bytes(X, y):
    return (y.max() + 1) * X.shape[1] * X.dtype.itemsize


def test_auto_keeps_scent_momentum_when_memory_allows(costly):
    X, y = costly
    clf = SoftmaxClassifier(random_state=0)
    _solver_choice.choose_solver_verbosely(clf, y.max() + 1, X)
    assert clf.solver_ == "scent" and clf._solver_params == {}
    clf._rng = np.random.RandomState(0)
    assert _solver_choice.make_solver(clf, "scent", 1).estimator.momentum == 0.1


def test_auto_drops_momentum_and_snapshots_when_memory_is_short(
    costly, monkeypatch, capsys
):
    X, y = costly
    w = _w_bytes(X, y)
    # W and V, twice, exceed half the memory; W twice still fits
    monkeypatch.setattr(_solver_choice, "available_memory", lambda: int(7 * w))
    clf = SoftmaxClassifier(random_state=0, max_iter=2, verbose=1)
    _solver_choice.choose_solver_verbosely(clf, y.max() + 1, X)
    assert clf._solver_params == {"momentum": 1.0}
    assert "momentum=1.0" in capsys.readouterr().out
    # and below W twice: neither V nor a snapshot
    monkeypatch.setattr(_solver_choice, "available_memory", lambda: int(3 * w))
    snapshots = []
    monkeypatch.setattr(
        ExpertSolver, "snapshot", lambda self, into=None: snapshots.append(1)
    )
    clf = SoftmaxClassifier(random_state=0, max_iter=3, tol=None)
    clf.fit(X, y)
    assert clf.solver_ == "scent"
    est = clf._solver.estimator
    assert est.momentum == 1.0 and est._state.velocity is None
    assert snapshots == []
    # the kept model is the last epoch of the held-out phase
    assert clf.best_iter_ == len(clf.validation_loss_)
    # the user's solver='scent' keeps its own default
    clf = SoftmaxClassifier(solver="scent", random_state=0)
    _solver_choice.choose_solver_verbosely(clf, y.max() + 1, X)
    assert clf._solver_params == {}


def test_held_out_rows_cost_at_most_a_share_of_an_epoch(costly, monkeypatch):
    X, y = costly
    sizes = []
    split = _held_out.split_rows

    def spy(y_enc, n_classes, n_val, *args):
        sizes.append(n_val)
        return split(y_enc, n_classes, n_val, *args)

    monkeypatch.setattr(_held_out, "split_rows", spy)
    clf = SoftmaxClassifier(
        random_state=0, max_iter=1, tol=None, validation_fraction=0.5
    ).fit(X, y)
    n_val, n = sizes[0], X.shape[0]
    assert n_val < 0.5 * n
    nnz1 = X.nnz / n + 1
    # scoring: K (nnz + 1) a row; the epoch: 2 x 128 classes x (nnz + 1)
    # a training row (SCENT's minibatch)
    held_out = n_val * (y.max() + 1) * nnz1
    epoch = 2 * (n - int(np.ceil(0.5 * n))) * 128 * nnz1
    assert held_out <= _held_out.VALIDATION_COST_SHARE * epoch
    assert n_val >= _held_out.MIN_VALIDATION_ROWS
    assert len(clf.validation_loss_) == 1
    # 'exact': the cap does not bind at the default fraction
    Xs, ys = X[:, :20], y % 10
    sizes.clear()
    SoftmaxClassifier(
        solver="exact", random_state=0, max_iter=1, tol=None
    ).fit(Xs, ys)
    assert sizes[0] == int(np.ceil(0.1 * n))


def test_the_refit_holds_one_w(costly, monkeypatch):
    """While the refit runs, no earlier expert (the held-out phase's
    model or a snapshot) is alive."""
    X, y = costly
    seen, in_refit, alive = [], [], []
    epoch = ExpertSolver.epoch
    refit = _descent.refit

    def spy_epoch(self, *args):
        if in_refit:
            gc.collect()
            alive.append(
                sum(r() is not None and r() is not self.estimator
                    for r in seen)
            )
        seen.append(weakref.ref(self.estimator))
        return epoch(self, *args)

    def spy_refit(est, *args):
        in_refit.append(True)
        return refit(est, *args)

    monkeypatch.setattr(ExpertSolver, "epoch", spy_epoch)
    monkeypatch.setattr(_descent, "refit", spy_refit)
    clf = SoftmaxClassifier(random_state=0, max_iter=3, tol=None).fit(X, y)
    assert clf.solver_ == "scent" and alive and max(alive) == 0


@pytest.mark.parametrize("solver", ["exact", "scent"])
def test_evaluation_in_row_passes_equals_one_pass(solver):
    # sparse rows are scored by class blocks, in passes of rows whose
    # per-row state fits in working_memory: any number of passes gives
    # bitwise the same results (feature-major W for 'exact', class-major
    # for 'scent')
    X, y = make_softmax_classification(
        n_samples=400, n_features=300, n_classes=200, density=0.05,
        random_state=1,
    )
    clf = SoftmaxClassifier(solver=solver, random_state=0, max_iter=3)
    clf.fit(X[:300], y[:300])
    # the classes seen in training (log_loss needs them)
    test = np.isin(y[300:], clf.classes_)
    Xt, yt = X[300:][test], y[300:][test]
    y_enc = np.searchsorted(clf.classes_, yt)

    def outputs():
        return (
            clf._evaluate(Xt, "nll", y_enc=y_enc),
            clf._evaluate(Xt, "argmax"),
            *clf._evaluate(Xt, "stats", y_enc=y_enc),
            *clf._evaluate(Xt, "topk", k=7),
            clf.log_loss(Xt, yt),
        )

    ref = outputs()
    with sklearn.config_context(working_memory=0.002):
        got = outputs()
    for a, b in zip(got, ref):
        np.testing.assert_array_equal(a, b)
