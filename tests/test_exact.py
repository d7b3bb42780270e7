"""ExactSolver: the exact-gradient kernel against its NumPy reference, the
fixed point of the penalised objective, threads, divergence and state."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from _reference import (
    exact_epoch_reference,
    exact_finalize_reference,
    new_exact_state,
    random_problem,
    softmax_objective,
)
from numpy.testing import assert_allclose, assert_array_equal
from scipy.optimize import minimize

from sksoftmax import DivergenceError
from sksoftmax._exact import ExactSolver
from sksoftmax._exact_fast import _expf

STATE = ("Wt", "b", "G", "Gb", "tau_last", "tau")


def _problem(fmt, dtype, seed=0, n=40, d=12, K=7):
    """random_problem (one empty row, one zero weight) with more zero
    weights and a spread of weights."""
    X, y, sw = random_problem(fmt, dtype, n=n, d=d, K=K, seed=seed)
    rng = np.random.default_rng(seed + 100)
    sw = sw * rng.uniform(0.2, 3.0, sw.shape[0])
    sw[[5, 17]] = 0.0
    return X, y, sw


def _state(solver):
    return {name: getattr(solver, name) for name in STATE}


def _assert_state(solver, ref, dtype):
    rtol, atol = (1e-12, 1e-13) if dtype == np.float64 else (1e-5, 1e-6)
    for name in STATE:
        assert_allclose(
            np.asarray(getattr(solver, name), dtype=np.float64),
            ref[name],
            rtol=rtol,
            atol=atol,
            err_msg=name,
        )


def _objective(solver, X, y, sw, alpha):
    solver.finalize()
    return softmax_objective(
        solver.coef_view().astype(np.float64),
        solver.b.astype(np.float64),
        X,
        y,
        alpha,
        sw,
    )


@pytest.mark.kernel
@pytest.mark.parametrize("fmt", ["dense", "csr"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("alpha", [0.0, 0.05])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("adaptive", [True, False])
def test_kernel_matches_reference(fmt, dtype, alpha, fit_intercept, adaptive):
    """Per-feature AdaGrad-norm steps, or (adaptive=False) one constant
    step for every weight."""
    X, y, sw = _problem(fmt, dtype)
    n, d = X.shape
    K = 7
    eta = 0.3 if adaptive else 0.05
    intercept = np.linspace(-0.5, 0.5, K)
    solver = ExactSolver(eta=eta, alpha=alpha, fit_intercept=fit_intercept,
                         adaptive=adaptive)
    solver.setup(K, d, dtype, intercept=intercept)
    ref = new_exact_state(K, d, intercept=intercept)
    rng = np.random.default_rng(1)
    # two permutations, then an index array with repeats and a gap
    orders = [rng.permutation(n), rng.permutation(n), rng.integers(0, n, 30)]
    for order in orders:
        loss, weight = solver.epoch(X, y, sw, order)
        ref, ref_loss, ref_weight = exact_epoch_reference(
            X, y, sw, ref, order, eta=eta, alpha=alpha,
            fit_intercept=fit_intercept, adaptive=adaptive,
        )
        # the lazy state itself, before any finalize
        _assert_state(solver, ref, dtype)
        assert_allclose(loss, ref_loss, rtol=1e-12 if dtype == np.float64
                        else 1e-5)
        assert weight == pytest.approx(ref_weight, rel=1e-14)
    solver.finalize()
    _assert_state(solver, exact_finalize_reference(ref, eta=eta, alpha=alpha,
                                                   adaptive=adaptive),
                  dtype)
    if not fit_intercept:
        assert_allclose(solver.b, intercept.astype(dtype))


@pytest.mark.kernel
@pytest.mark.parametrize("fmt", ["dense", "csr"])
@pytest.mark.parametrize("adaptive", [True, False])
def test_lazy_decay_equals_decay_at_every_row(fmt, adaptive):
    """The module's derivation: after finalize, the lazy decay gives the
    weights of decaying every feature at every row."""
    X, y, sw = _problem(fmt, np.float64, seed=3)
    n, d = X.shape
    eta, alpha = (0.5, 0.2) if adaptive else (0.05, 0.2)
    solver = ExactSolver(eta=eta, alpha=alpha, adaptive=adaptive)
    solver.setup(7, d, np.float64)
    eager = new_exact_state(7, d)
    rng = np.random.default_rng(2)
    for _ in range(3):
        order = rng.permutation(n)
        loss, _ = solver.epoch(X, y, sw, order)
        eager, eager_loss, _ = exact_epoch_reference(
            X, y, sw, eager, order, eta=eta, alpha=alpha, lazy=False,
            adaptive=adaptive,
        )
        assert loss == pytest.approx(eager_loss, rel=1e-12)
    solver.finalize()
    _assert_state(solver, eager, np.float64)


@pytest.mark.kernel
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_progressive_loss(dtype):
    """loss_sum is sum_i s_i log-loss_i, each row scored before its own
    update: the first row of a fresh model scores log K."""
    X, y, sw = _problem("csr", dtype, seed=5)
    n, d = X.shape
    solver = ExactSolver(eta=0.2, alpha=0.01)
    solver.setup(7, d, dtype)
    first = np.flatnonzero(sw > 0)[:1]
    loss, weight = solver.epoch(X, y, sw, first)
    assert weight == sw[first[0]]
    assert loss == pytest.approx(sw[first[0]] * np.log(7), rel=1e-6)
    ref = exact_epoch_reference(
        X, y, sw, new_exact_state(7, d), first, eta=0.2, alpha=0.01
    )[0]
    order = np.random.default_rng(0).permutation(n)
    loss, weight = solver.epoch(X, y, sw, order)
    _, ref_loss, ref_weight = exact_epoch_reference(
        X, y, sw, ref, order, eta=0.2, alpha=0.01
    )
    assert loss == pytest.approx(ref_loss, rel=1e-12 if dtype == np.float64
                                 else 1e-5)
    assert weight == pytest.approx(sw.sum(), rel=1e-14)
    assert weight == pytest.approx(ref_weight, rel=1e-14)


@pytest.mark.kernel
def test_zero_weight_and_empty_rows_change_nothing():
    X, y, sw = _problem("csr", np.float64)
    solver = ExactSolver(eta=0.3, alpha=0.1)
    solver.setup(7, X.shape[1], np.float64)
    solver.epoch(X, y, sw, np.arange(X.shape[0]))
    before = solver.snapshot()
    zero = np.flatnonzero(sw == 0)
    assert solver.epoch(X, y, sw, zero) == (0.0, 0.0)
    for name in STATE:
        assert_array_equal(getattr(solver, name), before[name])
    # the empty last row moves the intercepts only
    empty = np.array([X.shape[0] - 1])
    assert X[empty].nnz == 0
    solver.epoch(X, y, sw, empty)
    assert_array_equal(solver.G, before["G"])
    assert not np.array_equal(solver.b, before["b"])
    solver.finalize()


@pytest.mark.kernel
def test_steps_are_bounded_by_eta():
    """AdaGrad-norm: G_j >= x_j^2 c_k^2 after a row, so no weight moves by
    more than eta in one row, whatever the state."""
    X, y, sw = _problem("dense", np.float64, seed=7)
    eta = 2.0
    solver = ExactSolver(eta=eta)
    solver.setup(7, X.shape[1], np.float64)
    rng = np.random.default_rng(0)
    for i in rng.integers(0, X.shape[0], 200):
        W0, b0 = solver.Wt.copy(), solver.b.copy()
        solver.epoch(X, y, sw, [i])
        assert np.abs(solver.Wt - W0).max() <= eta * (1 + 1e-12)
        assert np.abs(solver.b - b0).max() <= eta * (1 + 1e-12)


@pytest.mark.kernel
def test_changing_eta_and_alpha_between_epochs():
    """The decay pending at a change of eta or alpha is settled with the
    old values."""
    X, y, sw = _problem("csr", np.float64, seed=4)
    n, d = X.shape
    solver = ExactSolver(eta=0.4, alpha=0.1)
    solver.setup(7, d, np.float64)
    ref = new_exact_state(7, d)
    rng = np.random.default_rng(3)
    for eta, alpha in [(0.4, 0.1), (0.2, 0.1), (0.2, 0.3), (0.2, 0.0),
                       (0.1, 0.05)]:
        if solver.eta != eta or solver.alpha != alpha:
            ref = exact_finalize_reference(ref, eta=solver.eta,
                                           alpha=solver.alpha)
        solver.eta, solver.alpha = eta, alpha
        order = rng.permutation(n)
        solver.epoch(X, y, sw, order)
        ref = exact_epoch_reference(X, y, sw, ref, order, eta=eta,
                                    alpha=alpha)[0]
    solver.finalize()
    ref = exact_finalize_reference(ref, eta=0.1, alpha=0.05)
    _assert_state(solver, ref, np.float64)


def _separable_ish(n=4000, d=300, K=50, seed=0, dtype=np.float64):
    """Sparse rows of ~6 features, each class with its own preferred
    features: nearly separable."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, n)
    pref = rng.integers(0, d, (K, 4))
    rows, cols = [], []
    for i in range(n):
        own = pref[y[i], rng.random(4) < 0.6]
        noise = rng.integers(0, d, 3)
        c = np.unique(np.concatenate([own, noise]))
        rows.extend([i] * c.size)
        cols.extend(c)
    X = sp.csr_matrix(
        (rng.uniform(0.5, 1.5, len(rows)), (rows, cols)), shape=(n, d)
    ).astype(dtype)
    return X, y.astype(np.intp)


def _train_loss(n_threads, X, y, chunk_intercept=True, epochs=8, seed=0):
    n = X.shape[0]
    sw = np.ones(n)
    solver = ExactSolver(eta=0.5, alpha=1e-4, n_threads=n_threads)
    solver.chunk_intercept = chunk_intercept
    solver.setup(int(y.max()) + 1, X.shape[1], X.dtype)
    rng = np.random.default_rng(seed)
    for _ in range(epochs):
        solver.epoch(X, y, sw, rng.permutation(n))
    return _objective(solver, X, y, sw, 0.0)


@pytest.mark.parametrize("chunk_intercept", [True, False])
def test_two_threads_reach_the_loss_of_one(chunk_intercept):
    X, y = _separable_ish()
    one = _train_loss(1, X, y)
    two = _train_loss(2, X, y, chunk_intercept=chunk_intercept)
    assert one < 0.5 * np.log(50)
    assert abs(two - one) <= 0.05 * one


def test_one_thread_is_deterministic():
    X, y = _separable_ish(n=500)
    assert _train_loss(1, X, y, epochs=2) == _train_loss(1, X, y, epochs=2)


def test_threads_keep_tau_and_decay_exact_without_rows_overlap():
    """Rows on disjoint features and no intercept: no two rows share a
    parameter, so a threaded epoch must equal the one-thread epoch to
    rounding (each row's tau is its position's, whatever thread runs it)."""
    n, K = 500, 5
    rng = np.random.default_rng(0)
    X = sp.csr_matrix(
        (rng.uniform(0.5, 2.0, n), (np.arange(n), np.arange(n))), shape=(n, n)
    )
    y = rng.integers(0, K, n)
    sw = rng.uniform(0.5, 2.0, n)
    results = []
    for n_threads in (1, 2):
        solver = ExactSolver(eta=0.5, alpha=0.3, fit_intercept=False,
                             n_threads=n_threads)
        solver.setup(K, n, np.float64)
        order = np.random.default_rng(1).permutation(n)
        for _ in range(3):
            loss, weight = solver.epoch(X, y, sw, order)
        solver.finalize()
        results.append((solver.Wt.copy(), solver.tau, loss, weight))
    assert_allclose(results[1][0], results[0][0], rtol=1e-12, atol=1e-15)
    assert results[1][1] == pytest.approx(results[0][1], rel=1e-12)
    assert results[1][2] == pytest.approx(results[0][2], rel=1e-12)
    assert results[1][3] == pytest.approx(results[0][3], rel=1e-12)


def _lbfgs_objective(X, y, sw, alpha, K):
    n, d = X.shape
    Y = np.eye(K)[y]

    def f(theta):
        W, b = theta[: K * d].reshape(K, d), theta[K * d :]
        S = X @ W.T + b
        m = S.max(axis=1, keepdims=True)
        lse = m[:, 0] + np.log(np.exp(S - m).sum(axis=1))
        P = np.exp(S - lse[:, None])
        wsum = sw.sum()
        value = sw @ (lse - (S * Y).sum(axis=1)) / wsum + 0.5 * alpha * np.sum(W * W)
        R = (P - Y) * sw[:, None] / wsum
        grad = np.concatenate([(R.T @ X + alpha * W).ravel(), R.sum(axis=0)])
        return value, grad

    res = minimize(f, np.zeros(K * (d + 1)), jac=True, method="L-BFGS-B",
                   options={"maxiter": 10000, "gtol": 1e-12, "ftol": 1e-15})
    return res.fun


@pytest.mark.kernel
@pytest.mark.parametrize("fmt", ["dense", "csr"])
def test_fixed_point_is_the_penalised_minimiser(fmt):
    """Many epochs at a constant eta (AdaGrad's steps shrink) reach the
    minimiser of weighted mean log-loss + alpha/2 ||W||^2 (intercepts not
    penalised), found by L-BFGS."""
    rng = np.random.default_rng(0)
    n, d, K, alpha = 60, 5, 3, 0.05
    X = rng.standard_normal((n, d))
    y = rng.integers(0, K, n)
    sw = rng.uniform(0.5, 2.0, n)
    best = _lbfgs_objective(X, y, sw, alpha, K)
    Xf = sp.csr_matrix(X) if fmt == "csr" else X
    solver = ExactSolver(eta=0.5, alpha=alpha)
    solver.setup(K, d, np.float64)
    for _ in range(400):
        solver.epoch(Xf, y, sw, rng.permutation(n))
    obj = _objective(solver, X, y, sw, alpha)
    # measured: 4.5e-4 above after 10 epochs, 1e-5 after 300, 1e-6 after
    # 1500
    assert best * (1 - 1e-9) <= obj <= best * (1 + 1e-4)


def test_huge_eta_raises_divergence_error():
    X, y, sw = _problem("csr", np.float64)
    solver = ExactSolver(eta=1e4)
    solver.setup(7, X.shape[1], np.float64)
    with pytest.raises(DivergenceError, match=r"lower eta \(now 10000\)"):
        for _ in range(3):
            solver.epoch(X, y, sw, np.arange(X.shape[0]))


@pytest.mark.parametrize("n_threads", [1, 2])
def test_nonfinite_scores_raise(n_threads):
    X, y, sw = _problem("dense", np.float32)
    solver = ExactSolver(eta=0.1, n_threads=n_threads)
    solver.setup(7, X.shape[1], np.float32)
    solver.Wt[:] = np.inf
    with pytest.raises(DivergenceError, match="inf or NaN"):
        solver.epoch(X, y, sw, np.arange(X.shape[0]))


def test_moderate_eta_keeps_the_loss_finite():
    X, y, sw = _problem("csr", np.float64)
    solver = ExactSolver(eta=20.0, alpha=0.01)
    solver.setup(7, X.shape[1], np.float64)
    for _ in range(5):
        loss, weight = solver.epoch(X, y, sw, np.arange(X.shape[0]))
        assert np.isfinite(loss) and loss >= 0


def test_snapshot_restore_and_pickle():
    X, y, sw = _problem("csr", np.float32)
    n = X.shape[0]
    solver = ExactSolver(eta=0.3, alpha=0.05)
    solver.setup(7, X.shape[1], np.float32)
    solver.epoch(X, y, sw, np.arange(n))
    snap = solver.snapshot()
    order = np.random.default_rng(0).permutation(n)
    after = solver.epoch(X, y, sw, order)
    solver.finalize()
    W_after = solver.Wt.copy()
    solver.restore(snap)
    for name in STATE:
        assert_array_equal(getattr(solver, name), snap[name])
    # the snapshot holds copies: neither the epoch nor restore aliased it
    assert not np.shares_memory(solver.Wt, snap["Wt"])
    assert solver.epoch(X, y, sw, order) == after
    solver.finalize()
    assert_array_equal(solver.Wt, W_after)
    # pickling: the copy continues exactly as the original
    solver.restore(snap)
    clone = pickle.loads(pickle.dumps(solver))
    assert clone.epoch(X, y, sw, order) == solver.epoch(X, y, sw, order)
    clone.finalize()
    solver.finalize()
    assert_array_equal(clone.Wt, solver.Wt)
    assert_array_equal(clone.b, solver.b)


def test_coef_view_and_setup():
    solver = ExactSolver(eta=0.1)
    solver.setup(4, 6, np.float32, intercept=[1, 2, 3, 4])
    assert solver.Wt.shape == (6, 4) and solver.Wt.flags.c_contiguous
    assert solver.b.dtype == np.float32
    assert_array_equal(solver.b, [1, 2, 3, 4])
    view = solver.coef_view()
    assert view.shape == (4, 6) and np.shares_memory(view, solver.Wt)
    assert solver.G.dtype == np.float64 and solver.tau == 0.0


def test_input_checks():
    X, y, sw = _problem("dense", np.float64)
    solver = ExactSolver(eta=0.1)
    solver.setup(7, X.shape[1], np.float64)
    with pytest.raises(TypeError, match="dtype"):
        solver.epoch(X.astype(np.float32), y, sw, [0])
    with pytest.raises(ValueError, match="out of range"):
        solver.epoch(X, y, sw, [X.shape[0]])
    with pytest.raises(ValueError, match="codes"):
        solver.epoch(X, np.full_like(y, 7), sw, [0])
    solver.eta = -1.0
    with pytest.raises(ValueError, match="eta"):
        solver.epoch(X, y, sw, [0])


@pytest.mark.kernel
def test_float_exp():
    """The float32 kernel's exp: within 2 float ulps of e^x on [-87, 0],
    0 below (and at -inf), NaN for NaN."""
    x = np.concatenate([
        -np.geomspace(1e-8, 87.0, 3000),
        np.linspace(-87.0, 0.0, 3001),
    ]).astype(np.float32)
    got = np.array([_expf(v) for v in x])
    exact = np.exp(x.astype(np.float64))
    assert np.all(np.abs(got - exact) <= 2 * np.finfo(np.float32).eps * exact)
    assert _expf(-87.5) == 0.0 and _expf(-np.inf) == 0.0
    assert _expf(0.0) == 1.0
    assert np.isnan(_expf(np.nan))


def test_snapshot_into_a_spare_and_restore_in_place():
    """snapshot(into=old) overwrites old's arrays with the current state;
    restore writes into the current arrays, so views of W stay valid."""
    X, y, sw = _problem("csr", np.float64)
    n = X.shape[0]
    solver = ExactSolver(eta=0.3, alpha=0.05)
    solver.setup(7, X.shape[1], np.float64)
    solver.epoch(X, y, sw, np.arange(n))
    first = solver.snapshot()
    view = solver.coef_view()
    solver.epoch(X, y, sw, np.arange(n)[::-1])
    solver.finalize()
    second = solver.snapshot(into=first)
    assert second["Wt"] is first["Wt"]
    for name in STATE:
        assert_array_equal(second[name], getattr(solver, name))
    W_second = solver.Wt.copy()
    solver.epoch(X, y, sw, np.arange(n))
    solver.restore(second)
    assert_array_equal(view.T, W_second)
    assert np.shares_memory(view, solver.Wt)
    assert not np.shares_memory(solver.Wt, second["Wt"])


@pytest.mark.parametrize("fmt", ["dense", "csr"])
@pytest.mark.parametrize("alpha", [0.0, 0.05])
def test_reset_returns_to_the_setup_state(fmt, alpha):
    """reset() after epochs that touched only some features (it zeroes the
    rows of Wt whose G is positive) leaves the state setup() gave: every
    array equal, and the next epoch bitwise that of a fresh solver."""
    X, y, sw = _problem(fmt, np.float64)
    n, d = X.shape
    # the first rows leave half the features untouched (zero there)
    rows = np.arange(10)
    mask = np.ones((n, d))
    mask[rows, d // 2 :] = 0
    X = sp.csr_matrix(X.multiply(mask)) if fmt == "csr" else X * mask
    intercept = np.linspace(-0.5, 0.5, 7)
    solver = ExactSolver(eta=0.3, alpha=alpha)
    solver.setup(7, d, np.float64, intercept)
    fresh = solver.snapshot()
    solver.epoch(X, y, sw, rows)
    solver.finalize()
    touched = np.flatnonzero(solver.G)
    assert 0 < touched.shape[0] <= d // 2
    assert np.any(solver.Wt != 0)
    solver.reset()
    for name in STATE:
        assert_array_equal(getattr(solver, name), fresh[name], err_msg=name)
    other = ExactSolver(eta=0.3, alpha=alpha)
    other.setup(7, d, np.float64, intercept)
    for s in (solver, other):
        s.epoch(X, y, sw, np.arange(n))
        s.finalize()
    for name in STATE:
        assert_array_equal(getattr(solver, name), getattr(other, name))


@pytest.mark.parametrize("alpha", [0.0, 0.05])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_blend_is_the_weighted_mean_and_its_loss_at_most_theirs(alpha, dtype):
    """blend(other, w) sets (W, b) to (1 - w) (W, b) + w (W', b') of the
    finalized models (NumPy reference) and keeps the rest of its state; by
    convexity its loss is at most the weighted mean of the two losses."""
    X, y, sw = _problem("csr", dtype)
    n, d = X.shape
    runs = []
    for seed in (0, 1):
        solver = ExactSolver(eta=0.5, alpha=alpha)
        solver.setup(7, d, dtype)
        order = np.random.default_rng(seed).permutation(n)
        solver.epoch(X, y, sw, order)
        runs.append(solver)
    a, b = runs
    a.finalize()
    b.finalize()
    W_a, b_a = a.coef_view().astype(np.float64), a.b.astype(np.float64)
    W_b, b_b = b.coef_view().astype(np.float64), b.b.astype(np.float64)
    G_a = a.G.copy()
    loss_a = softmax_objective(W_a, b_a, X, y, 0.0, sw)
    loss_b = softmax_objective(W_b, b_b, X, y, 0.0, sw)
    a.blend(b, 0.25)
    rtol = 1e-12 if dtype == np.float64 else 1e-6
    assert_allclose(a.coef_view(), 0.75 * W_a + 0.25 * W_b, rtol=rtol, atol=rtol)
    assert_allclose(a.b, 0.75 * b_a + 0.25 * b_b, rtol=rtol, atol=rtol)
    assert_array_equal(a.G, G_a)
    loss = softmax_objective(
        a.coef_view().astype(np.float64), a.b.astype(np.float64), X, y, 0.0, sw
    )
    assert loss <= 0.75 * loss_a + 0.25 * loss_b + 1e-6
    with pytest.raises(ValueError, match="weight"):
        a.blend(b, 1.5)
    other = ExactSolver(eta=0.5)
    other.setup(6, d, dtype)
    with pytest.raises(ValueError, match="same shape"):
        a.blend(other, 0.5)
