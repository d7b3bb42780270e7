"""Per-feature steps (``learning_rate='adagrad'``) of U-max and Implicit
SGD: the kernels against the NumPy references of tests/_reference.py
(the same update, row by row: lazy column decay, accumulators, steps),
the estimators' bookkeeping (fresh fits, warm starts, partial_fit,
pickling, averaging) replayed by the references, and the combinations
that are refused."""

import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.utils._param_validation import InvalidParameterError

from sksoftmax import (
    ARSoftmaxClassifier,
    ImplicitSGDClassifier,
    SampledSoftmaxClassifier,
    SCENTClassifier,
    StochasticBoundClassifier,
    UMaxSoftmaxClassifier,
)
from sksoftmax._adagrad import make_adagrad
from sksoftmax._dataset import make_dataset
from sksoftmax._implicit_fast import implicit_epoch32, implicit_epoch64
from sksoftmax._random import AliasTable, RandomState
from sksoftmax._umax_fast import umax_epoch32, umax_epoch64
from sksoftmax._weight_matrix import make_weight_matrix

from _reference import (
    clone_rng,
    implicit_epoch_reference,
    new_adagrad,
    random_problem,
    umax_epoch_reference,
)

FORMATS = ["dense", "csr"]
DTYPES = [np.float64, np.float32]
RTOL = {np.float64: 1e-8, np.float32: 1e-4}
ADAGRAD_CODE = 3
# alpha: none, mild, and strong enough that column scales are folded
# (below 1e-9) inside the epochs
ALPHAS = [0.0, 0.05, 40.0]


def _start(dtype, K, d, n, seed=5):
    rng0 = np.random.default_rng(seed)
    W = (0.3 * rng0.standard_normal((K, d))).astype(dtype)
    b = (0.1 * rng0.standard_normal(K)).astype(dtype)
    u = np.abs(rng0.standard_normal(n))
    return W, b, u


def _table(sampler, y, K):
    if sampler == "uniform":
        return None
    # skewed, so that hits of y_i and repeated draws come up
    return AliasTable(np.bincount(y, minlength=K) ** 2 + 1.0)


# ------------------------------------------------------------ the kernels
@pytest.mark.kernel
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("alpha", ALPHAS)
@pytest.mark.parametrize("sampler", ["uniform", "frequency"])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_umax_adagrad_matches_reference(
    fmt, dtype, alpha, sampler, fit_intercept
):
    X, y, sw = random_problem(fmt, dtype)
    K, d = 7, X.shape[1]
    W, b, u = _start(dtype, K, d, X.shape[0])
    # a tight bound so that the end-of-epoch projection acts
    bound_w = 1.5 if alpha > 0 else np.inf
    weight_log_k = sw.sum() * np.log(K) if alpha > 0 else np.inf
    table = _table(sampler, y, K)
    ds = make_dataset(X, sw)
    rng = RandomState(11)
    ref_rng = clone_rng(rng)
    coef, intercept, u_k = W.copy(), b.copy(), u.copy()
    wm = make_weight_matrix(coef, intercept)
    G, Gb = np.zeros(d), np.zeros(1)
    acc = new_adagrad(d)
    eta0 = 0.3
    kernel = umax_epoch64 if dtype == np.float64 else umax_epoch32
    for epoch, init_u in enumerate([True, False]):
        order = np.arange(X.shape[0], dtype=np.intp)
        state = make_adagrad(coef, G, Gb, eta0, alpha, fit_intercept)
        status, obj, wsum, t, _, _ = kernel(
            ds, wm, y, u_k, rng, order, 3, 1.0, False, False, init_u,
            ADAGRAD_CODE, eta0, eta0, 0.5, epoch * X.shape[0], alpha,
            bound_w, np.inf, weight_log_k, fit_intercept, True, table,
            state,
        )  # fmt: skip
        assert status == 0
        W, b, u, obj_ref, wsum_ref, t_ref = umax_epoch_reference(
            X, y, sw, W, b, u, ref_rng, m=3, delta=1.0, vanilla=False,
            init_u=init_u, eta_epoch=eta0, t=epoch * X.shape[0],
            alpha=alpha, bound_w=bound_w, weight_log_k=weight_log_k,
            fit_intercept=fit_intercept, sampler=table, adagrad=acc,
        )  # fmt: skip
        tol = RTOL[dtype]
        assert_allclose(wm.true_coef(), W, rtol=tol, atol=tol)
        assert_allclose(intercept, b, rtol=tol, atol=tol)
        assert_allclose(u_k, u, rtol=tol, atol=tol)
        assert_allclose(G, acc["G"], rtol=tol)
        assert_allclose(Gb, acc["Gb"], rtol=tol)
        assert_allclose(obj, obj_ref, rtol=tol)
        assert wsum == pytest.approx(wsum_ref) and t == t_ref
        if alpha > 0:
            # the fold at the end of the epoch makes ||W||^2 exact
            assert wm.sq_norm == pytest.approx(np.sum(W * W), rel=tol)
        # continue both from the reference (float32 drift)
        wm.fold_scale()
        coef[:], intercept[:], u_k[:] = W, b, u
        G[:], Gb[:] = acc["G"], acc["Gb"]
        wm = make_weight_matrix(coef, intercept)
    if not fit_intercept:
        assert_array_equal(Gb, 0.0)


@pytest.mark.kernel
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("alpha", ALPHAS)
@pytest.mark.parametrize("sampler", ["uniform", "frequency"])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_implicit_adagrad_matches_reference(
    fmt, dtype, alpha, sampler, fit_intercept
):
    X, y, sw = random_problem(fmt, dtype)
    if not fit_intercept:
        # the implicit step needs ||x|| > 0 without intercepts
        keep = np.flatnonzero(np.asarray((X != 0).sum(axis=1)).ravel() > 0)
        X, y, sw = X[keep], y[keep], sw[keep]
    K, d = 7, X.shape[1]
    W, b, u = _start(dtype, K, d, X.shape[0])
    table = _table(sampler, y, K)
    ds = make_dataset(X, sw)
    rng = RandomState(11)
    ref_rng = clone_rng(rng)
    coef, intercept, u_k = W.copy(), b.copy(), u.copy()
    wm = make_weight_matrix(coef, intercept)
    G, Gb = np.zeros(d), np.zeros(1)
    acc = new_adagrad(d)
    eta0 = 0.5
    kernel = implicit_epoch64 if dtype == np.float64 else implicit_epoch32
    for epoch, init_u in enumerate([True, False]):
        order = np.arange(X.shape[0], dtype=np.intp)
        state = make_adagrad(coef, G, Gb, eta0, alpha, fit_intercept)
        status, obj, wsum, t, _, _, _ = kernel(
            ds, wm, y, u_k, rng, order, 1, init_u, ADAGRAD_CODE, eta0,
            eta0, 0.5, epoch * X.shape[0], alpha, fit_intercept, True,
            table, state,
        )  # fmt: skip
        assert status == 0
        W, b, u, obj_ref, wsum_ref, t_ref = implicit_epoch_reference(
            X, y, sw, W, b, u, ref_rng, init_u=init_u, eta_epoch=eta0,
            t=epoch * X.shape[0], alpha=alpha, fit_intercept=fit_intercept,
            sampler=table, adagrad=acc,
        )  # fmt: skip
        tol = RTOL[dtype]
        assert_allclose(wm.true_coef(), W, rtol=tol, atol=tol)
        assert_allclose(intercept, b, rtol=tol, atol=tol)
        assert_allclose(u_k, u, rtol=tol, atol=tol)
        assert_allclose(G, acc["G"], rtol=tol)
        assert_allclose(Gb, acc["Gb"], rtol=tol)
        assert_allclose(obj, obj_ref, rtol=tol)
        assert wsum == pytest.approx(wsum_ref) and t == t_ref
        wm.fold_scale()
        coef[:], intercept[:], u_k[:] = W, b, u
        G[:], Gb[:] = acc["G"], acc["Gb"]
        wm = make_weight_matrix(coef, intercept)
