"""The kernels behind ``sksoftmax.distributed`` against NumPy references
(no dask needed): the evaluation's per-row 'stats' mode that a class shard
sends, and the DS-MLR sub-epoch (``_dsmlr_fast.pyx.tp``)."""

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import logsumexp

from sksoftmax._dsmlr_fast import ds_subepoch_32, ds_subepoch_64
from sksoftmax._shared._dataset import make_dataset
from sksoftmax.distributed._worker import ClassShard, merge_stats, merge_topk

pytestmark = pytest.mark.kernel

KERNELS = {np.float64: ds_subepoch_64, np.float32: ds_subepoch_32}


def _problem(dtype, sparse, n=40, d=12, k=9, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d) * (rng.rand(n, d) < (0.4 if sparse else 1.0))
    X = X.astype(dtype)
    W = (0.5 * rng.randn(k, d)).astype(dtype)
    b = rng.randn(k).astype(dtype)
    y = rng.randint(k, size=n)
    return (sp.csr_matrix(X) if sparse else X), W, b, y


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("sparse", [True, False])
def test_stats_mode_matches_numpy(dtype, sparse):
    X, W, b, y = _problem(dtype, sparse)
    S = np.asarray(X.astype(np.float64) @ W.T.astype(np.float64)) + b
    shard = ClassShard(W[3:7], b[3:7], lo=3)
    y_local = shard.local_labels(y)
    stats, arg = shard._evaluate(X, "stats", y_enc=y_local)
    part = S[:, 3:7]
    rtol = 1e-12 if dtype == np.float64 else 1e-5
    assert_allclose(stats[:, 0], part.max(axis=1), rtol=rtol, atol=rtol)
    assert_allclose(
        np.log(stats[:, 1]) + stats[:, 0], logsumexp(part, axis=1), rtol=rtol
    )
    inside = (y >= 3) & (y < 7)
    assert_allclose(stats[inside, 2], part[inside, y[inside] - 3], rtol=rtol,
                    atol=rtol)
    assert np.all(stats[~inside, 2] == -np.inf)
    assert_array_equal(arg, part.argmax(axis=1))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_merged_shards_equal_the_whole_model(dtype):
    """Stats and top-k merged over three shards (9 classes: 3 + 3 + 3 and
    uneven cuts) equal the evaluation of the whole W."""
    X, W, b, y = _problem(dtype, sparse=True)
    whole = ClassShard(W, b, lo=0)
    nll = whole._evaluate(X, "nll", y_enc=y)
    arg = whole._evaluate(X, "argmax")
    top_i, top_p = whole._evaluate(X, "topk", k=4)
    cuts = [0, 2, 7, 9]
    shards = [ClassShard(W[a:c], b[a:c], lo=a) for a, c in zip(cuts, cuts[1:])]
    parts = []
    for s in shards:
        st, a = s._evaluate(X, "stats", y_enc=s.local_labels(y))
        parts.append((st, a + s.lo))
    lse, s_y, arg_m = merge_stats(*parts)
    rtol = 1e-12 if dtype == np.float64 else 1e-5
    assert_allclose(lse - s_y, nll, rtol=rtol, atol=rtol)
    assert_array_equal(arg_m, arg)
    tparts = []
    for s in shards:
        kk = min(4, s.coef_.shape[0])
        i, p = s._evaluate(X, "topk", k=kk)
        st, _ = s._evaluate(X, "stats")
        tparts.append((st, i + s.lo, p))
    idx, proba = merge_topk(4, *tparts)
    assert_array_equal(idx, top_i)
    assert_allclose(proba, top_p, rtol=10 * rtol)


def _reference_subepoch(X, W, c, y, b_row, lo, eta, alpha, fit_intercept):
    """Rows in order: scores, partial log-partition, then the row's SGD
    step on sum_k exp(s_k + b_i) - s_y + alpha/2 ||W_block||^2."""
    X = np.asarray(X.todense() if sp.issparse(X) else X, dtype=np.float64)
    W = W.astype(np.float64).copy()
    c = c.astype(np.float64).copy()
    n = X.shape[0]
    lse = np.empty(n)
    sy = np.zeros(n)
    for i in range(n):
        s = W @ X[i] + c
        lse[i] = logsumexp(s)
        yl = y[i] - lo
        inside = 0 <= yl < W.shape[0]
        if inside:
            sy[i] = s[yl]
        g = np.exp(s + b_row[i])
        if inside:
            g[yl] -= 1.0
        W *= max(1.0 - eta * alpha, 0.0)
        W -= eta * np.outer(g, X[i])
        if fit_intercept:
            c -= eta * g
    return W, c, lse, sy


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("sparse", [True, False])
# alpha=50: factor 0.5 per row, the lazy scale folds below 1e-9 (row 30)
@pytest.mark.parametrize("alpha", [0.0, 0.05, 50.0])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_subepoch_matches_numpy(dtype, sparse, alpha, fit_intercept):
    X, W, b, y = _problem(dtype, sparse)
    lo, hi = 2, 6
    block = ClassShard(W[lo:hi], b[lo:hi], lo=lo)
    rng = np.random.RandomState(1)
    S = np.asarray(X.astype(np.float64) @ W.T.astype(np.float64)) + b
    # b_i near its closed form -log sum_k exp(s_ik), as after an epoch
    b_row = -logsumexp(S, axis=1) + 0.3 * rng.randn(X.shape[0])
    eta = 0.01
    W_ref, c_ref, lse_ref, sy_ref = _reference_subepoch(
        X, W[lo:hi], b[lo:hi], y, b_row, lo, eta, alpha, fit_intercept
    )
    kernel = KERNELS[dtype]
    Wt = np.ascontiguousarray(W[lo:hi].T)
    intercept = b[lo:hi].copy()
    lse = np.empty(X.shape[0])
    sy = np.zeros(X.shape[0])
    opts = {"eta": eta, "alpha": alpha, "fit_intercept": fit_intercept,
            "shuffle": False, "seed": 0, "adagrad": False, "eps": 1e-8}
    status, _, _ = kernel(make_dataset(X), Wt, intercept,
                          block.local_labels(y), b_row, lse, sy, opts)
    assert status == 0
    rtol = 1e-10 if dtype == np.float64 else 2e-4
    assert_allclose(Wt.T, W_ref, rtol=rtol, atol=rtol)
    assert_allclose(intercept, c_ref, rtol=rtol, atol=rtol)
    assert_allclose(lse, lse_ref, rtol=rtol, atol=rtol)
    assert_allclose(sy, sy_ref, rtol=rtol, atol=rtol)


def test_subepoch_shuffle_visits_every_row_once_and_reports_overflow():
    X, W, b, y = _problem(np.float64, sparse=False)
    opts = {"eta": 0.0, "alpha": 0.0, "fit_intercept": True,
            "shuffle": True, "seed": 7, "adagrad": False, "eps": 1e-8}
    lse = np.full(X.shape[0], np.nan)
    sy = np.zeros(X.shape[0])
    Wt, intercept = np.ascontiguousarray(W.T), b.copy()
    status, _, _ = ds_subepoch_64(make_dataset(X), Wt, intercept,
                                  y.astype(np.intp), np.zeros(X.shape[0]),
                                  lse, sy, opts)
    # eta = 0: W unchanged, and every row's partial log-partition written
    assert status == 0
    assert_array_equal(Wt.T, W)
    assert_allclose(lse, logsumexp(X @ W.T + b, axis=1), rtol=1e-12)
    # a b_i far too large: the exponent passes the threshold, status 1
    status, bad_row, bad_value = ds_subepoch_64(
        make_dataset(X), np.ascontiguousarray(W.T), b.copy(), y.astype(np.intp),
        np.full(X.shape[0], 800.0), lse, sy, dict(opts, eta=0.1))
    assert status == 1 and bad_row >= 0 and bad_value > 700


def _reference_adagrad(X, W, c, y, b_row, lo, eta, alpha, eps):
    """The AdaGrad-norm sub-epoch in NumPy, L2 decay applied to every
    feature at every row (what the kernel's lazy decay equals)."""
    X = np.asarray(X.todense() if sp.issparse(X) else X, dtype=np.float64)
    W = W.astype(np.float64).copy()
    c = c.astype(np.float64).copy()
    G = np.zeros(X.shape[1])
    Gb = 0.0
    for i in range(X.shape[0]):
        rate = eta / np.sqrt(eps + G)
        W *= np.where(G > 0, np.exp(-rate * alpha), 1.0)[None, :]
        s = W @ X[i] + c
        g = np.exp(s + b_row[i])
        yl = y[i] - lo
        if 0 <= yl < W.shape[0]:
            g[yl] -= 1.0
        c2 = g @ g
        G += X[i] ** 2 * c2
        W -= np.outer(g, X[i] * eta / np.sqrt(eps + G))
        Gb += c2
        c -= eta / np.sqrt(eps + Gb) * g
    return W, c, G, Gb


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("sparse", [True, False])
@pytest.mark.parametrize("alpha", [0.0, 0.5])
def test_adagrad_subepoch_matches_numpy(dtype, sparse, alpha):
    X, W, b, y = _problem(dtype, sparse)
    lo, hi = 2, 6
    block = ClassShard(W[lo:hi], b[lo:hi], lo=lo)
    S = np.asarray(X.astype(np.float64) @ W.T.astype(np.float64)) + b
    b_row = -logsumexp(S, axis=1)
    eta, eps = 0.3, 1e-8
    W_ref, c_ref, G_ref, Gb_ref = _reference_adagrad(
        X, W[lo:hi], b[lo:hi], y, b_row, lo, eta, alpha, eps
    )
    Wt = np.ascontiguousarray(W[lo:hi].T)
    intercept = b[lo:hi].copy()
    G, tau_last, scalars = np.zeros(X.shape[1]), np.zeros(X.shape[1]), np.zeros(2)
    lse, sy = np.empty(X.shape[0]), np.zeros(X.shape[0])
    opts = {"eta": eta, "alpha": alpha, "fit_intercept": True,
            "shuffle": False, "seed": 0, "adagrad": True, "eps": eps}
    status, _, _ = KERNELS[dtype](make_dataset(X), Wt, intercept,
                                  block.local_labels(y), b_row, lse, sy, opts,
                                  G, tau_last, scalars)
    assert status == 0
    rtol = 1e-10 if dtype == np.float64 else 2e-4
    assert_allclose(Wt.T, W_ref, rtol=rtol, atol=rtol)
    assert_allclose(intercept, c_ref, rtol=rtol, atol=rtol)
    assert_allclose(G, G_ref, rtol=rtol)
    assert_allclose(scalars, [X.shape[0] if alpha > 0 else 0.0, Gb_ref],
                    rtol=rtol)
    if alpha > 0:
        # every feature brought to the end's tau
        assert np.all(tau_last == X.shape[0])
