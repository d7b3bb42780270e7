"""The kernels behind ``sksoftmax.distributed`` against NumPy references
(no dask needed): the evaluation's per-row 'stats' mode that a class shard
sends, and the DS-MLR sub-epoch: the exact solver's epoch in its
class-block mode (``_exact_fast.pyx.tp``)."""

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import logsumexp

from sksoftmax._exact_fast import (
    exact_epoch32,
    exact_epoch64,
    exact_finalize32,
    exact_finalize64,
)
from sksoftmax._shared._dataset import make_dataset
from sksoftmax.distributed._worker import ClassShard, merge_stats, merge_topk

pytestmark = pytest.mark.kernel

KERNELS = {
    np.float64: (exact_epoch64, exact_finalize64),
    np.float32: (exact_epoch32, exact_finalize32),
}


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


def _reference_block(X, W, c, y, rest, lo, eta, alpha, eps, fit_intercept):
    """The class-block sub-epoch in NumPy, rows in order: L2 decay of
    every feature at every row (what the kernel's lazy decay equals), the
    block's scores, the partition with the other blocks' part
    ``rest = (R, R2, z_y)`` as the row saw it, the AdaGrad-norm step with
    the row's whole sum of squared coefficients (the block's, plus
    e^{R2 - 2 lse} and, label elsewhere, 1 - 2 p_y), and the block's
    log-partition, log sum e^{2z} and z_y before and after the row's step
    (recomputed from the updated W)."""
    R, R2, zyr = rest
    X = np.asarray(X.todense() if sp.issparse(X) else X, dtype=np.float64)
    W = W.astype(np.float64).copy()
    c = c.astype(np.float64).copy()
    n = X.shape[0]
    G = np.zeros(X.shape[1])
    Gb = 0.0
    out = {k: np.zeros(n) for k in ("lse", "sy", "after", "after2", "zy")}
    for i in range(n):
        rate = eta / np.sqrt(eps + G)
        W *= np.where(G > 0, np.exp(-rate * alpha), 1.0)[None, :]
        s = W @ X[i] + c
        out["lse"][i] = logsumexp(s)
        lse = np.logaddexp(out["lse"][i], R[i])
        g = np.exp(s - lse)
        yl = y[i] - lo
        inside = 0 <= yl < W.shape[0]
        extra = np.exp(R2[i] - 2 * lse)
        if inside:
            out["sy"][i] = s[yl]
            g[yl] -= 1.0
        else:
            extra += 1.0 - 2.0 * np.exp(zyr[i] - lse)
        c2 = g @ g + max(extra, 0.0)
        G += X[i] ** 2 * c2
        W -= np.outer(g, X[i] * eta / np.sqrt(eps + G))
        if fit_intercept:
            Gb += c2
            c -= eta / np.sqrt(eps + Gb) * g
        s_after = W @ X[i] + c
        out["after"][i] = logsumexp(s_after)
        out["after2"][i] = logsumexp(2 * s_after)
        out["zy"][i] = s_after[yl] if inside else zyr[i]
    return W, c, G, Gb, out


def _run_block(dtype, X, W, c, y_local, rest, eta, alpha, fit_intercept,
               order=None, n_threads=1):
    epoch, finalize = KERNELS[dtype]
    Wt = np.ascontiguousarray(W.T)
    intercept = c.copy()
    n = X.shape[0]
    G, tau_last, scalars = np.zeros(X.shape[1]), np.zeros(X.shape[1]), np.zeros(2)
    buf = np.empty((8, n))
    buf[0], buf[4], buf[5] = rest
    buf[7] = buf[5]
    opts = {"eta": eta, "alpha": alpha, "eps": 1e-8, "adaptive": True,
            "fit_intercept": fit_intercept, "n_threads": n_threads,
            "chunk_intercept": True}
    if order is None:
        order = np.arange(n, dtype=np.intp)
    status, *_ = epoch(make_dataset(X), Wt, intercept, G, tau_last, scalars,
                       np.asarray(y_local, dtype=np.intp), order, opts, buf)
    finalize(Wt, G, tau_last, scalars[0], opts)
    return status, Wt.T, intercept, G, scalars, buf


def _no_rest(n):
    return np.full(n, -np.inf), np.full(n, -np.inf), np.zeros(n)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("sparse", [True, False])
@pytest.mark.parametrize("alpha", [0.0, 0.5])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_block_subepoch_matches_numpy(dtype, sparse, alpha, fit_intercept):
    X, W, b, y = _problem(dtype, sparse)
    lo, hi = 2, 6
    block = ClassShard(W[lo:hi], b[lo:hi], lo=lo)
    rng = np.random.RandomState(1)
    S = np.asarray(X.astype(np.float64) @ W.T.astype(np.float64)) + b
    # the other blocks as a row last saw them: near their values now
    others = np.concatenate([S[:, :lo], S[:, hi:]], axis=1)
    n = X.shape[0]
    rest = (
        logsumexp(others, axis=1) + 0.3 * rng.randn(n),
        logsumexp(2 * others, axis=1) + 0.3 * rng.randn(n),
        S[np.arange(n), y] + 0.3 * rng.randn(n),
    )
    eta, eps = 0.3, 1e-8
    W_ref, c_ref, G_ref, Gb_ref, ref = _reference_block(
        X, W[lo:hi], b[lo:hi], y, rest, lo, eta, alpha, eps, fit_intercept
    )
    status, Wk, ck, G, scalars, buf = _run_block(
        dtype, X, W[lo:hi], b[lo:hi], block.local_labels(y), rest, eta,
        alpha, fit_intercept,
    )
    assert status == 0
    rtol = 1e-10 if dtype == np.float64 else 1e-4
    assert_allclose(Wk, W_ref, rtol=rtol, atol=rtol)
    assert_allclose(ck, c_ref, rtol=rtol, atol=rtol)
    assert_allclose(G, G_ref, rtol=rtol)
    assert_allclose(scalars[1], Gb_ref if fit_intercept else 0.0, rtol=rtol)
    assert_allclose(buf[1], ref["lse"], rtol=rtol, atol=rtol)
    assert_allclose(buf[2], ref["sy"], rtol=rtol, atol=rtol)
    assert_allclose(buf[3], ref["after"], rtol=rtol, atol=rtol)
    assert_allclose(buf[6], ref["after2"], rtol=rtol, atol=rtol)
    assert_allclose(buf[7], ref["zy"], rtol=rtol, atol=rtol)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_one_block_is_the_exact_softmax_epoch(dtype):
    """Every class in the block and lse_rest = -inf: the block mode's step
    is the plain exact epoch's (the same W to rounding), and its
    log-partitions are the rows' own."""
    X, W, b, y = _problem(dtype, sparse=True)
    epoch, finalize = KERNELS[dtype]
    opts = {"eta": 0.5, "alpha": 0.0, "eps": 1e-8, "adaptive": True,
            "fit_intercept": True,
            "n_threads": 1, "chunk_intercept": True}
    Wt, intercept = np.ascontiguousarray(W.T), b.copy()
    G, tl, sc = np.zeros(X.shape[1]), np.zeros(X.shape[1]), np.zeros(2)
    order = np.arange(X.shape[0], dtype=np.intp)
    epoch(make_dataset(X), Wt, intercept, G, tl, sc, y.astype(np.intp),
          order, opts)
    status, Wk, ck, _, _, buf = _run_block(
        dtype, X, W, b, y, _no_rest(X.shape[0]), 0.5, 0.0, True
    )
    assert status == 0
    rtol = 1e-12 if dtype == np.float64 else 1e-5
    assert_allclose(Wk, Wt.T, rtol=rtol, atol=rtol)
    assert_allclose(ck, intercept, rtol=rtol, atol=rtol)


def test_block_subepoch_reports_overflow():
    X, W, b, y = _problem(np.float64, sparse=False)
    # scores far past the exponent's threshold with the label in the
    # block (a diverged block): the row's loss exceeds it, status 1
    status, *_ = _run_block(np.float64, X, 1e4 * W, b, y, _no_rest(40), 0.1,
                            0.0, True)
    assert status == 1


def test_block_subepoch_threads_visit_every_row_once():
    """With threads every row writes its parts once (eta = 0: they are
    the rows' log-partitions over the block at the unchanged W)."""
    X, W, b, y = _problem(np.float64, sparse=True, n=900)
    lo, hi = 3, 8
    block = ClassShard(W[lo:hi], b[lo:hi], lo=lo)
    order = np.random.RandomState(0).permutation(X.shape[0]).astype(np.intp)
    status, Wk, _, _, _, buf = _run_block(
        np.float64, X, W[lo:hi], b[lo:hi], block.local_labels(y),
        (np.zeros(X.shape[0]), np.zeros(X.shape[0]), np.zeros(X.shape[0])),
        0.0, 0.0, True, order=order, n_threads=2,
    )
    assert status == 0
    S = np.asarray(X @ W[lo:hi].T) + b[lo:hi]
    assert_allclose(buf[1], logsumexp(S, axis=1), rtol=1e-12)
    assert_allclose(buf[3], logsumexp(S, axis=1), rtol=1e-12)
    assert_array_equal(Wk, W[lo:hi])
