"""ImplicitSGDClassifier: the proximal step, checked as a fixed point and as a
minimiser, and the estimator's robustness to the learning rate."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _data import fetch_shared_bibtex
from _kernel_options import implicit_options
from _reference import (
    clone_rng,
    dense,
    double_sum_gradient,
    gradient_problem,
    monte_carlo_z,
    sampler_table,
)
from numpy.testing import assert_allclose
from scipy.optimize import minimize
from scipy.special import wrightomega

from sksoftmax import (
    DivergenceError,
    ImplicitSGDClassifier,
    UMaxSoftmaxClassifier,
)
from sksoftmax._implicit_fast import (
    implicit_epoch32,
    implicit_epoch64,
    solve_u_py,
)
from sksoftmax._shared._dataset import make_dataset
from sksoftmax._shared._random import AliasTable, RandomState
from sksoftmax._shared._weight_matrix import make_weight_matrix


def _f_and_grad(
    theta, x, y, ks, K, s, alpha, fit_intercept, shape, weights=None
):
    """f_iC of one row and sampled classes C (per-row loss, weight s, full
    ridge, each sampled term weighted (K-1)/m, or ``weights[j]``) and its
    gradient.

    theta = (u, W.ravel(), b); the plain NumPy reference of the objective the
    implicit step minimises.
    """
    n_cls, d = shape
    u = theta[0]
    W = theta[1 : 1 + n_cls * d].reshape(n_cls, d)
    b = theta[1 + n_cls * d :]
    if weights is None:
        weights = np.full(len(ks), (K - 1) / len(ks))
    gW = s * alpha * W
    gb = np.zeros(n_cls)
    total = 0.0
    for k, ratio in zip(ks, weights):
        z = x @ (W[k] - W[y]) + (b[k] - b[y] if fit_intercept else 0.0)
        ez = ratio * np.exp(z - u)
        total += ez
        gW[k] += s * ez * x
        gW[y] -= s * ez * x
        if fit_intercept:
            gb[k] += s * ez
            gb[y] -= s * ez
    f = s * (u + np.exp(-u) + total - 1) + 0.5 * s * alpha * np.sum(W * W)
    gu = s * (1 - np.exp(-u) - total)
    return f, np.concatenate([[gu], gW.ravel(), gb])


def test_scalar_root_solves_eq_17():
    rng = np.random.default_rng(0)
    for _ in range(3000):
        u0, e = 3 * abs(rng.normal()), 10 ** rng.uniform(-3, 3)
        gamma, z = rng.uniform(0.05, 5), 10 * rng.normal()
        u, a, evals = solve_u_py(u0, e, gamma, 50, z)
        log_c = np.log(e * 49 / gamma)
        assert a == pytest.approx(wrightomega(log_c + z - u).real, rel=1e-12)
        g = e - e * np.exp(-u) + (u - u0) - gamma * a
        assert abs(g) <= 1e-10 * max(1.0, abs(u), e)
        assert evals <= 60


@pytest.mark.kernel
@pytest.mark.parametrize("fmt", ["dense", "csr"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("alpha", [0.0, 0.3])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("m", [1, 3])
@pytest.mark.parametrize("raise_u", [False, True])
def test_implicit_step_is_the_proximal_point(
    fmt, dtype, alpha, fit_intercept, m, raise_u
):
    """theta' = theta - eta grad f(theta') from theta = (u0, W0, b0); with
    raise_u from u0 raised first to log(1 + sum_k e^{z_k}) over the classes
    drawn, z at W0 after the ridge's shrinkage (then u0 < 0 in half the
    trials, below any such value, so the raise acts)."""
    rng = np.random.default_rng(1)
    K, d = 4, 5
    tol = 1e-9 if dtype == np.float64 else 2e-4
    n_raised = 0
    for trial in range(6):
        x = rng.normal(size=(1, d)) * (3.0 if trial % 2 else 0.5)
        X = (sp.csr_matrix(x) if fmt == "csr" else x).astype(dtype)
        y = np.array([trial % K], dtype=np.intp)
        s = rng.uniform(0.5, 2.0)
        W0 = rng.normal(size=(K, d)).astype(dtype)
        b0 = (rng.normal(size=K) if fit_intercept else np.zeros(K)).astype(
            dtype
        )
        u0 = np.array([abs(rng.normal()) * 2])
        if raise_u and trial % 2:
            u0 = -u0
        eta = 10 ** rng.uniform(-2, 2)
        rng_k = RandomState(trial)
        ks = clone_rng(rng_k).sample_classes(K, y[0], m, m == 1)
        coef, intercept, u = _implicit_step(
            X,
            y,
            s,
            W0,
            b0,
            u0,
            rng_k,
            m,
            eta,
            alpha,
            fit_intercept,
            raise_u=raise_u,
        )
        u_start = u0
        if raise_u:
            scores = dense(X)[0].astype(float) @ W0.T.astype(float) / (
                1 + eta * s * alpha
            ) + b0.astype(float)
            z = scores[ks[ks != y[0]]] - scores[y[0]]
            rule = np.log1p(np.exp(z).sum())
            n_raised += rule > u0[0]
            u_start = np.maximum(u0, rule)
        theta_old = np.concatenate(
            [u_start, W0.ravel().astype(float), b0.astype(float)]
        )
        theta_new = np.concatenate(
            [u, coef.ravel().astype(float), intercept.astype(float)]
        )
        xd = dense(X)[0].astype(float)
        args = (xd, y[0], ks, K, s, alpha, fit_intercept, (K, d))
        # fixed point: theta' = theta - eta grad f(theta')
        _, grad = _f_and_grad(theta_new, *args)
        assert_allclose(
            theta_new,
            theta_old - eta * grad,
            rtol=tol,
            atol=tol * max(1.0, np.abs(theta_old).max()),
        )
        if dtype == np.float64:
            # and the minimiser of 2 eta f + ||theta - theta_old||^2
            def prox(th):
                f, g = _f_and_grad(th, *args)
                diff = th - theta_old
                return 2 * eta * f + diff @ diff, 2 * eta * g + 2 * diff

            best = minimize(
                prox,
                theta_old,
                jac=True,
                method="BFGS",
                options={"gtol": 1e-11, "maxiter": 10000},
            )
            assert_allclose(theta_new, best.x, rtol=1e-6, atol=1e-6)
            assert prox(theta_new)[0] <= best.fun + 1e-9 * abs(best.fun)
    assert n_raised >= 3 if raise_u else n_raised == 0


def test_zero_rows_need_the_intercept():
    X = np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 2.0]])
    y = np.array([0, 1, 2])
    with pytest.raises(ValueError, match=r"all zero.*rows \[1\]"):
        ImplicitSGDClassifier(fit_intercept=False).fit(X, y)
    clf = ImplicitSGDClassifier(
        fit_intercept=True, tol=None, max_iter=5, random_state=0
    ).fit(X, y)
    assert np.isfinite(clf.coef_).all()


def test_implicit_fits_better_than_umax_on_a_small_problem():
    from sklearn.datasets import make_classification

    X, y = make_classification(
        n_samples=400,
        n_features=8,
        n_informative=5,
        n_classes=5,
        random_state=0,
    )
    imp = ImplicitSGDClassifier(eta0=1.0, tol=None, random_state=0).fit(X, y)
    assert imp.log_loss(X, y) < 0.9 * np.log(5)
    assert 1.0 <= imp.n_evals_per_step_ < 20


@pytest.fixture(scope="module")
def bibtex(tmp_path_factory):
    X, y, _, _ = fetch_shared_bibtex(tmp_path_factory.mktemp("bibtex"))
    return X, y


def test_no_overflow_for_any_eta0_on_bibtex(bibtex):
    X, y = bibtex
    for eta0 in 10.0 ** np.arange(-3, 4):
        clf = ImplicitSGDClassifier(
            eta0=eta0, max_iter=3, tol=None, random_state=0
        )
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            clf.fit(X, y)
        assert (
            np.isfinite(clf.coef_).all() and np.isfinite(clf.loss_curve_).all()
        )
        assert clf.log_loss(X, y) < 2 * np.log(146)
    with pytest.raises(DivergenceError, match="delta=None"):
        UMaxSoftmaxClassifier(
            delta=None, eta0=1e3, max_iter=3, random_state=0
        ).fit(X, y)


def test_several_sampled_classes_fit_and_validate():
    from sklearn.datasets import make_classification

    X, y = make_classification(
        n_samples=400,
        n_features=8,
        n_informative=5,
        n_classes=5,
        random_state=0,
    )
    clf = ImplicitSGDClassifier(
        n_sampled_classes=3, eta0=1.0, tol=None, random_state=0
    ).fit(X, y)
    assert clf.log_loss(X, y) < 0.9 * np.log(5)
    # more than the K - 1 other classes: lowered to K - 1 with a warning
    # (the package's one rule, tests/test_n_sampled_classes.py)
    with pytest.warns(UserWarning, match="n_sampled_classes=5 is more"):
        ImplicitSGDClassifier(n_sampled_classes=5, sampler="uniform").fit(X, y)


@pytest.fixture(scope="module")
def small():
    from sklearn.datasets import make_classification

    X, y = make_classification(
        n_samples=300,
        n_features=10,
        n_informative=6,
        n_classes=4,
        random_state=1,
    )
    return X, y


@pytest.mark.parametrize("m", [1, 2])
def test_dense_csr_identical_and_reproducible(small, m):
    X, y = small
    kw = dict(n_sampled_classes=m, max_iter=4, tol=None, random_state=3)
    a = ImplicitSGDClassifier(**kw).fit(X, y)
    b = ImplicitSGDClassifier(**kw).fit(sp.csr_matrix(X), y)
    c = ImplicitSGDClassifier(**kw).fit(X, y)
    # ||x||^2 is summed in another order for dense and CSR rows: last bits
    assert_allclose(a.coef_, b.coef_, rtol=1e-10, atol=1e-12)
    assert_allclose(a.coef_, c.coef_, rtol=0, atol=0)
    f32 = ImplicitSGDClassifier(**kw).fit(X.astype(np.float32), y)
    assert f32.coef_.dtype == np.float32
    assert_allclose(f32.coef_, a.coef_, rtol=1e-3, atol=1e-3)


def test_partial_fit_once_equals_one_epoch_and_verbose(small, capsys):
    X, y = small
    a = ImplicitSGDClassifier(max_iter=1, tol=None, random_state=0).fit(X, y)
    b = ImplicitSGDClassifier(random_state=0, verbose=1)
    b.partial_fit(X, y, classes=np.unique(y))
    assert_allclose(a.coef_, b.coef_, rtol=0, atol=0)
    out = capsys.readouterr().out
    assert "root-finder evaluations/step" in out
    assert 1.0 <= b.n_evals_per_step_ < 20


def _implicit_step(
    X,
    y,
    s,
    W,
    b,
    u,
    rng,
    m,
    eta,
    alpha,
    fit_intercept,
    table=None,
    raise_u=False,
):
    """One kernel step on a one-row dataset; the new (W, b, u)."""
    coef, intercept, u_new = W.copy(), b.copy(), u.copy()
    wm = make_weight_matrix(coef, intercept)
    kernel = implicit_epoch64 if W.dtype == np.float64 else implicit_epoch32
    status, *_ = kernel(
        make_dataset(X, np.array([s])),
        wm,
        y,
        u_new,
        rng,
        np.zeros(1, dtype=np.intp),
        0,
        implicit_options(
            n_sampled=m,
            init_u=False,
            schedule=0,
            eta_epoch=eta,
            eta0=eta,
            power_t=0.5,
            alpha=alpha,
            fit_intercept=fit_intercept,
            shuffle=False,
            raise_u=raise_u,
        ),
        sampler=table,
    )
    assert status == 0
    wm.fold_scale()
    return coef, intercept, u_new


@pytest.mark.kernel
@pytest.mark.parametrize("fmt", ["dense", "csr"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("alpha,fit_intercept", [(0.0, True), (0.3, False)])
@pytest.mark.parametrize("m", [1, 3, 9])
def test_frequency_step_is_the_proximal_point(
    fmt, dtype, alpha, fit_intercept, m
):
    """With q, the step minimises 2 eta f + ||theta - theta_old||^2 for the
    f whose draw k_j has weight 1/(m q_kj), or none if k_j = y (duplicates
    merged in the kernel, separate terms here: the same f). m = 9 > K - 1
    draws many duplicates; the last weights make every draw a hit."""
    rng = np.random.default_rng(2)
    K, d = 4, 5
    tol = 1e-9 if dtype == np.float64 else 2e-4
    tables = [
        AliasTable([40.0, 10.0, 3.0, 1.0]),
        AliasTable([1.0, 1.0, 1.0, 1.0]),
        AliasTable([1.0, 0.0, 0.0, 0.0]),  # y = 0 below: hits only
    ]
    n_hits = n_terms = 0
    for trial in range(9):
        table = tables[trial % 3]
        x = rng.normal(size=(1, d)) * (3.0 if trial % 2 else 0.5)
        X = (sp.csr_matrix(x) if fmt == "csr" else x).astype(dtype)
        y = np.array([0 if trial % 3 == 2 else trial % K], dtype=np.intp)
        s = rng.uniform(0.5, 2.0)
        W0 = rng.normal(size=(K, d)).astype(dtype)
        b0 = (rng.normal(size=K) if fit_intercept else np.zeros(K)).astype(
            dtype
        )
        u0 = np.array([abs(rng.normal()) * 2])
        eta = 10 ** rng.uniform(-2, 2)
        rng_k = RandomState(trial)
        ks = clone_rng(rng_k).sample_alias(table, m)
        weights = np.where(ks == y[0], 0.0, 1 / (m * table.q[ks]))
        n_hits += int((ks == y[0]).sum())
        n_terms += int((ks != y[0]).sum())
        coef, intercept, u = _implicit_step(
            X, y, s, W0, b0, u0, rng_k, m, eta, alpha, fit_intercept, table
        )
        theta_old = np.concatenate(
            [u0, W0.ravel().astype(float), b0.astype(float)]
        )
        theta_new = np.concatenate(
            [u, coef.ravel().astype(float), intercept.astype(float)]
        )
        xd = dense(X)[0].astype(float)
        args = (xd, y[0], ks, K, s, alpha, fit_intercept, (K, d), weights)
        _, grad = _f_and_grad(theta_new, *args)
        assert_allclose(
            theta_new,
            theta_old - eta * grad,
            rtol=tol,
            atol=tol * max(1.0, np.abs(theta_old).max()),
        )
    assert n_hits > 0 and n_terms > 0


@pytest.mark.kernel
@pytest.mark.parametrize("sampler", ["uniform", "frequency"])
def test_small_implicit_steps_follow_the_full_gradient(sampler):
    """m = 1: (theta - theta') / eta = grad f_ik(theta'), which tends to
    the stochastic gradient at theta as eta -> 0; its mean over many draws
    at eta = 1e-7 equals the exact gradient of the row's double-sum term
    within Monte Carlo error (the O(eta) remainder is far below it)."""
    X, y, W, b, u = gradient_problem()
    table = sampler_table(sampler)
    rng = RandomState(1)
    eta, n_draws = 1e-7, 20000
    worst = 0.0
    for i in range(X.shape[0]):
        _, g_exact = double_sum_gradient(X[i], y[i], W, b, u[i])
        steps = np.empty((n_draws, g_exact.size))
        for r in range(n_draws):
            coef, intercept, u_r = _implicit_step(
                X[i : i + 1],
                y[i : i + 1],
                1.0,
                W,
                b,
                u[i : i + 1],
                rng,
                1,
                eta,
                0.0,
                True,
                table,
            )
            steps[r, : W.size] = (W - coef).ravel() / eta
            steps[r, W.size : -1] = (b - intercept) / eta
            steps[r, -1] = (u[i] - u_r[0]) / eta
        worst = max(worst, np.abs(monte_carlo_z(steps, g_exact)).max())
    assert worst < 4.5, worst


def test_frequency_sampler_allows_more_draws_than_classes(small):
    X, y = small  # four classes
    clf = ImplicitSGDClassifier(
        n_sampled_classes=6,
        sampler="frequency",
        tol=None,
        random_state=0,
    ).fit(X, y)
    assert np.isfinite(clf.coef_).all()
    assert clf.log_loss(X, y) < 0.9 * np.log(4)
