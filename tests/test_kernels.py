"""The shared Cython pieces and the U-max kernel against NumPy references."""

import numpy as np
import pytest
import scipy.sparse as sp
from _kernel_options import umax_options
from _reference import (
    clone_rng,
    random_problem,
    sampler_table,
    umax_epoch_reference,
)
from numpy.testing import assert_allclose, assert_array_equal
from scipy import stats

from sksoftmax._class_sampler import frequency_weights
from sksoftmax._shared._dataset import make_dataset
from sksoftmax._shared._random import (
    AliasTable,
    RandomState,
    build_alias_table,
)
from sksoftmax._shared._weight_matrix import make_weight_matrix
from sksoftmax._umax_fast import umax_epoch32, umax_epoch64

pytestmark = pytest.mark.kernel

FORMATS = ["dense", "csr"]
DTYPES = [np.float64, np.float32]
RTOL = {np.float64: 1e-10, np.float32: 2e-4}


_problem = random_problem


# --------------------------------------------------------------- dataset
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_dataset_rows_match_matrix(fmt, dtype):
    X, _, sw = _problem(fmt, dtype)
    ds = make_dataset(X, sw)
    Xd = X.toarray() if sp.issparse(X) else X
    for i in range(X.shape[0]):
        values, idx = ds.row_arrays(i)
        assert values.dtype == dtype
        row = np.zeros(X.shape[1], dtype=dtype)
        row[idx] = values
        assert_array_equal(row, Xd[i])
    assert_allclose(ds.row_sq_norms, (Xd.astype(np.float64) ** 2).sum(1))
    assert_array_equal(ds.weights, sw)


def test_dataset_sums_duplicate_csr_entries_on_a_copy():
    X = sp.csr_matrix(
        (np.array([1.0, 2.0, 3.0]), np.array([1, 1, 0]), np.array([0, 3])),
        shape=(1, 3),
    )
    X.has_canonical_format = False
    before = X.data.copy()
    ds = make_dataset(X)
    values, idx = ds.row_arrays(0)
    assert_array_equal(idx, [0, 1])
    assert_array_equal(values, [3.0, 3.0])
    assert_array_equal(X.data, before)
    assert_allclose(ds.row_sq_norms, [18.0])


# ---------------------------------------------------------- weight matrix
@pytest.mark.parametrize("dtype", DTYPES)
def test_lazy_scale_equals_explicit_shrinkage(dtype):
    rng = np.random.default_rng(1)
    K, d = 5, 9
    W0 = rng.standard_normal((K, d)).astype(dtype)
    coef, intercept = W0.copy(), np.zeros(K, dtype=dtype)
    wm = make_weight_matrix(coef, intercept)
    ref = W0.astype(np.float64)
    folded = False
    for step in range(3000):
        # small factors drive the scale below its floor: folding is exercised
        factor = 1e-4 if rng.random() < 0.02 else rng.choice([0.999, 0.9])
        before = wm.scale
        wm.py_scale_by(factor)
        folded |= wm.scale > before
        ref *= factor
        k = rng.integers(K)
        idx = np.sort(rng.choice(d, 3, replace=False)).astype(np.int32)
        x = rng.standard_normal(3).astype(dtype)
        c = rng.standard_normal()
        assert_allclose(
            wm.py_dot(k, x, idx),
            ref[k, idx] @ x,
            rtol=RTOL[dtype],
            atol=1e-6 * np.abs(ref).max(),
        )
        wm.py_add(k, x, idx, c)
        ref[k, idx] += c * x
        assert_allclose(
            wm.true_coef(),
            ref,
            rtol=RTOL[dtype] * 10,
            atol=1e-6 * np.abs(ref).max(),
        )
        assert_allclose(wm.sq_norm, (ref**2).sum(), rtol=RTOL[dtype] * 10)
    assert folded, "the scale never reached its floor: folding untested"
    wm.fold_scale()
    assert wm.scale == 1.0
    assert_allclose(
        coef, ref, rtol=RTOL[dtype] * 10, atol=1e-6 * np.abs(ref).max()
    )


def test_scale_by_zero_zeroes_the_matrix():
    coef = np.ones((2, 3))
    wm = make_weight_matrix(coef, np.zeros(2))
    wm.py_scale_by(0.0)
    wm.fold_scale()
    assert_array_equal(coef, 0.0)
    assert wm.sq_norm == 0.0


# ------------------------------------------------------------------- RNG
def test_rng_is_reproducible_and_picklable():
    a, b = RandomState(42), RandomState(42)
    assert_array_equal(a.randint(1000, 100), b.randint(1000, 100))
    c = clone_rng(a)
    assert_array_equal(a.uniform(10), c.uniform(10))
    assert not np.array_equal(
        RandomState(1).randint(1000, 50), RandomState(2).randint(1000, 50)
    )


def test_rng_uniform_integers_and_permutations():
    r = RandomState(0)
    draws = r.randint(7, 70000)
    counts = np.bincount(draws, minlength=7)
    assert stats.chisquare(counts).pvalue > 1e-3
    u = r.uniform(50000)
    assert 0.0 <= u.min() and u.max() < 1.0
    assert stats.kstest(u, "uniform").pvalue > 1e-3
    perm = r.permutation(100)
    assert_array_equal(np.sort(perm), np.arange(100))
    # position of element 0 over many shuffles is uniform
    pos = [np.argmax(r.permutation(5) == 0) for _ in range(5000)]
    assert stats.chisquare(np.bincount(pos, minlength=5)).pvalue > 1e-3


@pytest.mark.parametrize("replace", [True, False])
def test_class_sampler_excludes_label_and_is_uniform(replace):
    r = RandomState(3)
    K, y, m = 9, 4, 3
    draws = np.concatenate(
        [r.sample_classes(K, y, m, replace) for _ in range(20000)]
    )
    assert not np.any(draws == y)
    counts = np.bincount(draws, minlength=K)
    assert counts[y] == 0
    assert stats.chisquare(np.delete(counts, y)).pvalue > 1e-3
    if not replace:
        for _ in range(200):
            s = r.sample_classes(K, y, K - 1, False)
            assert_array_equal(np.sort(s), np.delete(np.arange(K), y))


def test_class_sampler_rejects_impossible_requests():
    r = RandomState(0)
    with pytest.raises(ValueError, match="without replacement"):
        r.sample_classes(3, 0, 3, False)
    with pytest.raises(ValueError, match="n_classes >= 2"):
        r.sample_classes(1, 0, 1, True)


# ----------------------------------------------------------- alias table
def _table_distribution(prob, alias):
    """The distribution an alias table draws from, exactly."""
    n = prob.shape[0]
    p = prob.copy()
    np.add.at(p, alias, 1.0 - prob)
    return p / n


def test_alias_table_reproduces_q():
    rng = np.random.default_rng(0)
    for weights in [
        rng.exponential(size=1000) ** 3,  # very unequal
        np.r_[np.zeros(5), rng.uniform(size=20), 0.0],  # zero weights
        np.ones(17),
        [2.0],
    ]:
        weights = np.asarray(weights, dtype=float)
        prob, alias = build_alias_table(weights)
        assert prob.dtype == np.float64 and alias.dtype == np.intp
        assert np.all((0 <= prob) & (prob <= 1))
        assert_allclose(
            _table_distribution(prob, alias),
            weights / weights.sum(),
            rtol=1e-12,
            atol=1e-15,
        )
        zero = weights == 0
        assert np.all(prob[zero] == 0) and not np.any(zero[alias])
    for bad in [[], [1.0, -1.0], [0.0, 0.0], [1.0, np.nan], [[1.0]]]:
        with pytest.raises(ValueError, match="weights"):
            build_alias_table(bad)


def test_alias_draws_follow_q():
    # very unequal weights, and one class that must never come up
    weights = np.array([400.0, 150, 60, 25, 10, 3, 1, 0.0])
    table = AliasTable(weights)
    assert_allclose(table.q, weights / weights.sum())
    draws = RandomState(5).sample_alias(table, 1_000_000)
    counts = np.bincount(draws, minlength=len(weights))
    assert counts[-1] == 0
    expected = 1_000_000 * table.q[:-1]
    assert stats.chisquare(counts[:-1], expected).pvalue > 1e-3


def test_alias_draw_is_one_integer_and_one_uniform():
    """Each draw takes rng_randint(K) then rng_uniform, whichever branch:
    the stream, and so every later draw, does not depend on q."""
    table = AliasTable([5.0, 1.0, 0.5, 3.0])
    a = RandomState(9)
    b = clone_rng(a)
    draws = a.sample_alias(table, 200)
    expected = []
    for _ in range(200):
        k = b.randint(4, 1)[0]
        keep = b.uniform(1)[0] < table.prob[k]
        expected.append(k if keep else table.alias[k])
    assert_array_equal(draws, expected)
    assert_array_equal(a.uniform(3), b.uniform(3))


def test_frequency_power_zero_is_uniform_over_all_classes():
    counts = np.array([900.0, 90, 9, 0, 0, 1])
    table = AliasTable(frequency_weights(counts, 0.0))
    assert_array_equal(table.q, np.full(6, 1 / 6))
    # every column keeps itself: a draw is rng_randint(K)
    assert_array_equal(table.prob, 1.0)
    assert_array_equal(table.alias, np.arange(6))
    draws = RandomState(2).sample_alias(table, 60000)
    assert stats.chisquare(np.bincount(draws, minlength=6)).pvalue > 1e-3
    # and power 1 is proportional to the counts plus one
    assert_allclose(
        AliasTable(frequency_weights(counts, 1.0)).q,
        (counts + 1) / (counts + 1).sum(),
    )
    # a huge power does not overflow: all mass on the largest count
    assert_allclose(frequency_weights(counts, 1e4), [1, 0, 0, 0, 0, 0])


def test_alias_table_pickles():
    import pickle

    table = AliasTable([1.0, 2.0, 3.0])
    again = pickle.loads(pickle.dumps(table))
    for attr in ("q", "prob", "alias"):
        assert_array_equal(getattr(again, attr), getattr(table, attr))
    assert_array_equal(
        RandomState(1).sample_alias(again, 50),
        RandomState(1).sample_alias(table, 50),
    )


# ---------------------------------------------------------- U-max kernel
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "alpha,fit_intercept", [(0.0, True), (0.05, False), (0.05, True)]
)
@pytest.mark.parametrize(
    "vanilla,raman", [(False, False), (True, False), (False, True)]
)
@pytest.mark.parametrize("schedule", ["constant", "invscaling"])
def test_umax_epoch_matches_reference(
    fmt, dtype, alpha, fit_intercept, vanilla, raman, schedule
):
    X, y, sw = _problem(fmt, dtype)
    K, d = 7, X.shape[1]
    rng0 = np.random.default_rng(5)
    W = (0.3 * rng0.standard_normal((K, d))).astype(dtype)
    b = (0.1 * rng0.standard_normal(K)).astype(dtype)
    u = np.abs(rng0.standard_normal(X.shape[0]))
    # a tight bound so that the App. B projections act in this test
    bound_w, bound_u = (1.5, 3.0) if alpha > 0 else (np.inf, np.inf)
    weight_log_k = sw.sum() * np.log(K) if alpha > 0 else np.inf
    ds = make_dataset(X, sw)
    rng = RandomState(11)
    ref_rng = clone_rng(rng)
    coef, intercept, u_k = W.copy(), b.copy(), u.copy()
    wm = make_weight_matrix(coef, intercept)
    kernel = umax_epoch64 if dtype == np.float64 else umax_epoch32
    for epoch, init_u in enumerate([True, False]):
        order = np.arange(X.shape[0], dtype=np.intp)
        status, obj, wsum, t, _, _ = kernel(
            ds,
            wm,
            y,
            u_k,
            rng,
            order,
            epoch * X.shape[0],
            umax_options(
                n_sampled=3,
                delta=1.0,
                vanilla=vanilla,
                raman=raman,
                init_u=init_u,
                schedule=2 if schedule == "invscaling" else 0,
                eta_epoch=0.05,
                eta0=0.5,
                power_t=0.5,
                alpha=alpha,
                bound_w=bound_w,
                bound_u=bound_u,
                weight_log_k=weight_log_k,
                fit_intercept=fit_intercept,
                shuffle=True,
            ),
        )
        assert status == 0
        W, b, u, obj_ref, wsum_ref, t_ref = umax_epoch_reference(
            X,
            y,
            sw,
            W,
            b,
            u,
            ref_rng,
            m=3,
            delta=1.0,
            vanilla=vanilla,
            raman=raman,
            init_u=init_u,
            eta_epoch=0.05,
            eta0=0.5,
            schedule=schedule,
            t=epoch * X.shape[0],
            alpha=alpha,
            bound_w=bound_w,
            bound_u=bound_u,
            weight_log_k=weight_log_k,
            fit_intercept=fit_intercept,
        )
        # compare, then continue both from the reference (float32 drift)
        assert_allclose(wm.true_coef(), W, rtol=RTOL[dtype], atol=RTOL[dtype])
        assert_allclose(intercept, b, rtol=RTOL[dtype], atol=RTOL[dtype])
        assert_allclose(u_k, u, rtol=RTOL[dtype], atol=RTOL[dtype])
        assert_allclose(obj, obj_ref, rtol=RTOL[dtype])
        assert_allclose(wm.sq_norm, (W**2).sum(), rtol=RTOL[dtype] * 10)
        assert wsum == pytest.approx(wsum_ref) and t == t_ref
        if not fit_intercept:
            assert_array_equal(intercept, b)
        if alpha > 0:
            assert np.linalg.norm(W) <= bound_w * (1 + 1e-12)
            assert u.max() <= bound_u


def test_umax_kernel_reports_overflow_for_vanilla():
    X, y, sw = _problem("csr", np.float64)
    K, d = 7, X.shape[1]
    W = np.zeros((K, d))
    W[0] = 400.0  # class 0 scores ~ 400 |x|: exp overflows
    b = np.zeros(K)
    ds = make_dataset(X, sw)
    wm = make_weight_matrix(W, b)
    u = np.zeros(X.shape[0])
    status, *_, row, value = umax_epoch64(
        ds,
        wm,
        y,
        u,
        RandomState(0),
        np.arange(X.shape[0], dtype=np.intp),
        0,
        umax_options(
            n_sampled=5,
            delta=1.0,
            vanilla=True,
            raman=False,
            init_u=False,
            schedule=0,
            eta_epoch=0.1,
            eta0=0.1,
            power_t=0.5,
            alpha=0.0,
            bound_w=np.inf,
            bound_u=np.inf,
            weight_log_k=np.inf,
            fit_intercept=True,
            shuffle=False,
        ),
    )
    assert status == 1 and value > 700


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "alpha,fit_intercept", [(0.0, True), (0.05, False)]
)
@pytest.mark.parametrize(
    "vanilla,raman", [(False, False), (True, False), (False, True)]
)
@pytest.mark.parametrize("m", [1, 4])
def test_umax_epoch_with_frequency_sampler_matches_reference(
    fmt, dtype, alpha, fit_intercept, vanilla, raman, m
):
    X, y, sw = _problem(fmt, dtype)
    K, d = 7, X.shape[1]
    rng0 = np.random.default_rng(6)
    W = (0.3 * rng0.standard_normal((K, d))).astype(dtype)
    b = (0.1 * rng0.standard_normal(K)).astype(dtype)
    u = np.abs(rng0.standard_normal(X.shape[0]))
    bound_w, bound_u = (1.5, 3.0) if alpha > 0 else (np.inf, np.inf)
    weight_log_k = sw.sum() * np.log(K) if alpha > 0 else np.inf
    # weights 1/(m q_k) reach 655 / m: a small rate keeps vanilla SGD finite
    table = sampler_table("frequency")
    ds = make_dataset(X, sw)
    rng = RandomState(12)
    ref_rng = clone_rng(rng)
    coef, intercept, u_k = W.copy(), b.copy(), u.copy()
    wm = make_weight_matrix(coef, intercept)
    kernel = umax_epoch64 if dtype == np.float64 else umax_epoch32
    n_hits = 0
    for epoch, init_u in enumerate([True, False]):
        status, obj, wsum, t, _, _ = kernel(
            ds,
            wm,
            y,
            u_k,
            rng,
            np.arange(X.shape[0], dtype=np.intp),
            epoch * X.shape[0],
            umax_options(
                n_sampled=m,
                delta=1.0,
                vanilla=vanilla,
                raman=raman,
                init_u=init_u,
                schedule=0,
                eta_epoch=0.005,
                eta0=0.5,
                power_t=0.5,
                alpha=alpha,
                bound_w=bound_w,
                bound_u=bound_u,
                weight_log_k=weight_log_k,
                fit_intercept=fit_intercept,
                shuffle=True,
            ),
            sampler=table,
        )
        assert status == 0
        draws = clone_rng(ref_rng)
        W, b, u, obj_ref, wsum_ref, t_ref = umax_epoch_reference(
            X, y, sw, W, b, u, ref_rng, m=m, delta=1.0, vanilla=vanilla,
            raman=raman, init_u=init_u, eta_epoch=0.005,
            t=epoch * X.shape[0], alpha=alpha, bound_w=bound_w,
            bound_u=bound_u, weight_log_k=weight_log_k,
            fit_intercept=fit_intercept, sampler=table,
        )
        order = draws.permutation(X.shape[0])
        ks = draws.sample_alias(table, m * X.shape[0]).reshape(-1, m)
        n_hits += int((ks == y[order][:, None]).sum())
        assert_allclose(wm.true_coef(), W, rtol=RTOL[dtype], atol=RTOL[dtype])
        assert_allclose(intercept, b, rtol=RTOL[dtype], atol=RTOL[dtype])
        assert_allclose(u_k, u, rtol=RTOL[dtype], atol=RTOL[dtype])
        assert_allclose(obj, obj_ref, rtol=RTOL[dtype])
        assert_allclose(wm.sq_norm, (W**2).sum(), rtol=RTOL[dtype] * 10)
        assert wsum == pytest.approx(wsum_ref) and t == t_ref
    # the test covers draws of the row's own class
    assert n_hits > 0


def test_kernels_reject_a_sampler_of_another_size():
    X, y, sw = _problem("csr", np.float64)
    wm = make_weight_matrix(np.zeros((7, X.shape[1])), np.zeros(7))
    with pytest.raises(ValueError, match="sampler has 6 classes"):
        umax_epoch64(
            make_dataset(X, sw),
            wm,
            y,
            np.zeros(X.shape[0]),
            RandomState(0),
            np.arange(X.shape[0], dtype=np.intp),
            0,
            umax_options(
                n_sampled=2,
                delta=1.0,
                vanilla=False,
                raman=False,
                init_u=True,
                schedule=0,
                eta_epoch=0.1,
                eta0=0.1,
                power_t=0.5,
                alpha=0.0,
                bound_w=np.inf,
                bound_u=np.inf,
                weight_log_k=np.inf,
                fit_intercept=True,
                shuffle=False,
            ),
            sampler=AliasTable(np.ones(6)),
        )
