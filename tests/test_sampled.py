"""SampledSoftmaxClassifier: the OVE / NCE / importance kernels against their
NumPy reference, the losses' defining properties, and the estimator."""

import numpy as np
import pytest
from _kernel_options import sampled_options
from _reference import (
    clone_rng,
    dense,
    gradient_problem,
    monte_carlo_z,
    random_problem,
    sampled_epoch_reference,
    sampler_table,
    softmax_objective,
)
from numpy.testing import assert_allclose, assert_array_equal

from sksoftmax import DivergenceError, SampledSoftmaxClassifier
from sksoftmax._sampled_fast import LOSSES, sampled_epoch32, sampled_epoch64
from sksoftmax._shared._dataset import make_dataset
from sksoftmax._shared._random import AliasTable, RandomState
from sksoftmax._shared._weight_matrix import make_weight_matrix
from sksoftmax.datasets import make_softmax_classification

RTOL = {np.float64: 1e-10, np.float32: 2e-4}


def _problem(fmt, dtype, n=37, K=9, seed=0):
    return random_problem(fmt, dtype, n=n, d=11, K=K, seed=seed)


def _run_kernel(
    X,
    y,
    sw,
    W,
    b,
    rng,
    *,
    loss,
    batch_size,
    m,
    eta,
    t=0,
    alpha=0.0,
    fit_intercept=True,
    schedule=0,
    eta0=0.5,
    sampler=None,
):
    ds = make_dataset(X, sw)
    wm = make_weight_matrix(W, b)
    kernel = sampled_epoch64 if W.dtype == np.float64 else sampled_epoch32
    out = kernel(
        ds,
        wm,
        y,
        rng,
        np.arange(X.shape[0], dtype=np.intp),
        t,
        sampled_options(
            loss=LOSSES[loss],
            batch_size=batch_size,
            n_sampled=m,
            schedule=schedule,
            eta_epoch=eta,
            eta0=eta0,
            power_t=0.5,
            alpha=alpha,
            fit_intercept=fit_intercept,
            shuffle=True,
        ),
        sampler=sampler,
    )
    return wm, out


@pytest.mark.kernel
@pytest.mark.parametrize("fmt", ["dense", "csr"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("loss", sorted(LOSSES))
@pytest.mark.parametrize("alpha,fit_intercept", [(0.0, True), (0.2, False)])
@pytest.mark.parametrize("schedule", ["constant", "invscaling"])
def test_sampled_epoch_matches_reference(
    fmt, dtype, loss, alpha, fit_intercept, schedule
):
    X, y, sw = _problem(fmt, dtype)
    K, d = 9, X.shape[1]
    rng0 = np.random.default_rng(3)
    W = (0.5 * rng0.standard_normal((K, d))).astype(dtype)
    b = (0.2 * rng0.standard_normal(K)).astype(dtype)
    coef, intercept = W.copy(), b.copy()
    rng = RandomState(7)
    ref_rng = clone_rng(rng)
    ds = make_dataset(X, sw)
    wm = make_weight_matrix(coef, intercept)
    kernel = sampled_epoch64 if dtype == np.float64 else sampled_epoch32
    for epoch in range(2):
        t0 = epoch * X.shape[0]
        status, obj, wsum, t, _, _ = kernel(
            ds,
            wm,
            y,
            rng,
            np.arange(X.shape[0], dtype=np.intp),
            t0,
            sampled_options(
                loss=LOSSES[loss],
                batch_size=8,
                n_sampled=4,
                schedule=2 if schedule == "invscaling" else 0,
                eta_epoch=0.3,
                eta0=0.6,
                power_t=0.5,
                alpha=alpha,
                fit_intercept=fit_intercept,
                shuffle=True,
            ),
        )
        assert status == 0
        W, b, obj_ref, wsum_ref, t_ref = sampled_epoch_reference(
            X,
            y,
            sw,
            W,
            b,
            ref_rng,
            loss=loss,
            batch_size=8,
            m=4,
            eta_epoch=0.3,
            eta0=0.6,
            schedule=schedule,
            t=t0,
            alpha=alpha,
            fit_intercept=fit_intercept,
        )
        tol = RTOL[dtype]
        assert_allclose(wm.true_coef(), W, rtol=tol, atol=tol)
        assert_allclose(intercept, b, rtol=tol, atol=tol)
        assert_allclose(obj, obj_ref, rtol=tol)
        assert wsum == pytest.approx(wsum_ref) and t == t_ref
        if alpha > 0:
            # ||W||^2 tracked through every shared-class update
            assert_allclose(wm.sq_norm, (W**2).sum(), rtol=tol * 10)
        if not fit_intercept:
            assert_array_equal(intercept, b)


@pytest.mark.kernel
def test_importance_with_every_class_is_full_gradient_descent():
    """m >= K and one minibatch: the step is gradient descent on the exact
    weighted mean log-loss (the restricted softmax is the full softmax)."""
    X, y, sw = _problem("csr", np.float64)
    K, d = 9, X.shape[1]
    n = X.shape[0]
    rng0 = np.random.default_rng(1)
    W = 0.3 * rng0.standard_normal((K, d))
    b = 0.1 * rng0.standard_normal(K)
    intercept = b.copy()
    wm, (status, obj, wsum, *_) = _run_kernel(
        X,
        y,
        sw,
        W.copy(),
        intercept,
        RandomState(0),
        loss="importance",
        batch_size=n,
        m=K,
        eta=0.7,
    )
    assert status == 0
    Xd = dense(X)
    S = Xd @ W.T + b
    P = np.exp(S - S.max(1, keepdims=True))
    P /= P.sum(1, keepdims=True)
    G = P.copy()
    G[np.arange(n), y] -= 1
    G *= sw[:, None]
    W_new = W - 0.7 * G.T @ Xd / n
    b_new = b - 0.7 * G.sum(0) / n
    assert_allclose(wm.true_coef(), W_new, rtol=1e-12, atol=1e-12)
    assert_allclose(intercept, b_new, rtol=1e-12, atol=1e-12)
    assert_allclose(obj / wsum, softmax_objective(W, b, X, y, 0.0, sw))


@pytest.mark.kernel
def test_ove_estimate_is_unbiased_and_bounds_the_log_loss():
    """The sampled OVE loss, averaged over many minibatch draws, equals the
    full one-vs-each bound, which lies above the exact log-loss."""
    X, y, sw = _problem("csr", np.float64, n=10, K=6)
    sw = np.ones(X.shape[0])
    K, d = 6, X.shape[1]
    rng0 = np.random.default_rng(2)
    W = rng0.standard_normal((K, d))
    b = rng0.standard_normal(K)
    S = dense(X) @ W.T + b
    z = S - S[np.arange(len(y)), y][:, None]
    z[np.arange(len(y)), y] = -np.inf
    ove = np.logaddexp(0, z).sum() / len(y)
    rng = RandomState(4)
    draws = []
    for _ in range(3000):
        # eta = 0: the kernel only evaluates the sampled loss
        _, (status, obj, wsum, *_) = _run_kernel(
            X,
            y,
            sw,
            W.copy(),
            b.copy(),
            rng,
            loss="ove",
            batch_size=X.shape[0],
            m=2,
            eta=0.0,
        )
        draws.append(obj / wsum)
    draws = np.asarray(draws)
    se = draws.std() / np.sqrt(len(draws))
    assert abs(draws.mean() - ove) < 4 * se
    assert ove >= softmax_objective(W, b, X, y, 0.0)


@pytest.mark.kernel
@pytest.mark.parametrize("fmt", ["dense", "csr"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("loss", sorted(LOSSES))
@pytest.mark.parametrize("alpha,fit_intercept", [(0.0, True), (0.2, False)])
@pytest.mark.parametrize("m", [4, 12])
def test_sampled_epoch_with_frequency_sampler_matches_reference(
    fmt, dtype, loss, alpha, fit_intercept, m
):
    """Draws with replacement from q (m = 12 > K: many duplicates), Q_k =
    m q_k in every loss."""
    X, y, sw = _problem(fmt, dtype)
    K, d = 9, X.shape[1]
    rng0 = np.random.default_rng(4)
    W = (0.5 * rng0.standard_normal((K, d))).astype(dtype)
    b = (0.2 * rng0.standard_normal(K)).astype(dtype)
    table = AliasTable(np.array([300.0, 90, 40, 20, 9, 5, 2, 1, 1]))
    coef, intercept = W.copy(), b.copy()
    rng = RandomState(8)
    ref_rng = clone_rng(rng)
    ds = make_dataset(X, sw)
    wm = make_weight_matrix(coef, intercept)
    kernel = sampled_epoch64 if dtype == np.float64 else sampled_epoch32
    for epoch in range(2):
        status, obj, wsum, t, _, _ = kernel(
            ds,
            wm,
            y,
            rng,
            np.arange(X.shape[0], dtype=np.intp),
            epoch * X.shape[0],
            sampled_options(
                loss=LOSSES[loss],
                batch_size=8,
                n_sampled=m,
                schedule=0,
                eta_epoch=0.3,
                eta0=0.6,
                power_t=0.5,
                alpha=alpha,
                fit_intercept=fit_intercept,
                shuffle=True,
            ),
            sampler=table,
        )
        assert status == 0
        W, b, obj_ref, wsum_ref, t_ref = sampled_epoch_reference(
            X, y, sw, W, b, ref_rng, loss=loss, batch_size=8, m=m,
            eta_epoch=0.3, t=epoch * X.shape[0], alpha=alpha,
            fit_intercept=fit_intercept, sampler=table,
        )
        tol = RTOL[dtype]
        assert_allclose(wm.true_coef(), W, rtol=tol, atol=tol)
        assert_allclose(intercept, b, rtol=tol, atol=tol)
        assert_allclose(obj, obj_ref, rtol=tol)
        assert wsum == pytest.approx(wsum_ref) and t == t_ref
        if alpha > 0:
            assert_allclose(wm.sq_norm, (W**2).sum(), rtol=tol * 10)


def _ove_gradient(X, y, W, b):
    """Gradient in (W, b) of the mean one-vs-each bound
    1/n sum_i sum_{k != y_i} log(1 + e^{s_ik - s_iy})."""
    S = X @ W.T + b
    G = 1 / (1 + np.exp(-(S - S[np.arange(len(y)), y][:, None])))
    G[np.arange(len(y)), y] = 0.0
    G[np.arange(len(y)), y] = -G.sum(1)
    G /= len(y)
    return np.concatenate([(G.T @ X).ravel(), G.sum(0)])


@pytest.mark.kernel
@pytest.mark.parametrize("sampler", ["uniform", "frequency"])
def test_mean_ove_step_is_the_full_bound_gradient(sampler):
    """One minibatch step from a fixed W, many times: the mean step / eta
    equals the exact gradient of the OVE bound (uniform: m distinct classes
    weighted K/m; frequency: m draws weighted 1/(m q_k)) within Monte Carlo
    error."""
    X, y, W, b, _ = gradient_problem()
    table = sampler_table(sampler)
    n, eta, n_draws = X.shape[0], 1e-2, 20000
    exact = _ove_gradient(X, y, W, b)
    rng = RandomState(2)
    steps = np.empty((n_draws, exact.size))
    for r in range(n_draws):
        coef, intercept = W.copy(), b.copy()
        wm, (status, *_) = _run_kernel(
            X, y, np.ones(n), coef, intercept, rng, loss="ove",
            batch_size=n, m=3, eta=eta, sampler=table,
        )
        assert status == 0
        steps[r, : W.size] = (W - coef).ravel() / eta
        steps[r, W.size :] = (b - intercept) / eta
    z = monte_carlo_z(steps, exact)
    assert np.abs(z).max() < 4.5, np.abs(z).max()


@pytest.mark.kernel
def test_huge_scores_do_not_overflow_the_losses():
    X, y, sw = _problem("dense", np.float64)
    K, d = 9, X.shape[1]
    W = np.zeros((K, d))
    b = np.zeros(K)
    b[::2] = 5e3  # scores of +-5e3: every exp(score) would overflow
    b[1::2] = -5e3
    for loss in LOSSES:
        wm, (status, obj, *_rest) = _run_kernel(
            X,
            y,
            sw,
            W.copy(),
            b.copy(),
            RandomState(0),
            loss=loss,
            batch_size=8,
            m=4,
            eta=1e-6,
        )
        assert status == 0 and np.isfinite(obj)
        assert np.all(np.isfinite(wm.true_coef()))


@pytest.mark.kernel
@pytest.mark.parametrize("loss", sorted(LOSSES))
def test_huge_scores_do_not_overflow_under_the_frequency_sampler(loss):
    X, y, sw = _problem("dense", np.float64)
    K, d = 9, X.shape[1]
    b = np.where(np.arange(K) % 2 == 0, 5e3, -5e3)
    table = AliasTable(np.arange(1.0, K + 1) ** 3)
    wm, (status, obj, *_rest) = _run_kernel(
        X, y, sw, np.zeros((K, d)), b, RandomState(0), loss=loss,
        batch_size=8, m=4, eta=1e-6, sampler=table,
    )
    assert status == 0 and np.isfinite(obj)
    assert np.all(np.isfinite(wm.true_coef()))


# ------------------------------------------------------------ estimator
@pytest.fixture(scope="module")
def planted():
    X, y = make_softmax_classification(
        n_samples=3000,
        n_features=300,
        n_classes=40,
        density=0.03,
        random_state=0,
    )
    return X, y


@pytest.mark.parametrize("loss", sorted(LOSSES))
def test_every_loss_learns_and_predicts_exact_probabilities(planted, loss):
    X, y = planted
    clf = SampledSoftmaxClassifier(
        loss=loss, eta0=2.0, max_iter=20, tol=None, random_state=0
    ).fit(X, y)
    n_classes = len(np.unique(y))
    ll = clf.log_loss(X, y)
    assert ll < 0.6 * np.log(n_classes)
    P = clf.predict_proba(X[:50])
    assert_allclose(P.sum(1), 1.0)
    # exact softmax of the learned scores, not a sampled estimate
    S = clf.decision_function(X[:50])
    P_ref = np.exp(S - S.max(1, keepdims=True))
    assert_allclose(P, P_ref / P_ref.sum(1, keepdims=True), rtol=1e-10)
    assert np.all(np.isfinite(clf.loss_curve_))


def test_reproducible_and_dtype_preserving(planted):
    X, y = planted
    X32 = X.astype(np.float32)
    a = SampledSoftmaxClassifier(
        max_iter=3, tol=None, eta0=0.05, random_state=5
    ).fit(X32, y)
    b = SampledSoftmaxClassifier(
        max_iter=3, tol=None, eta0=0.05, random_state=5
    ).fit(X32, y)
    assert a.coef_.dtype == np.float32
    assert_array_equal(a.coef_, b.coef_)
    assert_array_equal(a.intercept_, b.intercept_)


def test_partial_fit_is_one_epoch_of_fit(planted):
    X, y = planted
    classes = np.unique(y)
    kw = dict(loss="nce", eta0=0.05, tol=None, random_state=3)
    fit = SampledSoftmaxClassifier(max_iter=1, **kw).fit(X, y)
    pf = SampledSoftmaxClassifier(**kw).partial_fit(X, y, classes=classes)
    assert_allclose(pf.coef_, fit.coef_)
    assert pf.t_ == X.shape[0]


def test_bad_parameters_and_divergence(planted):
    X, y = planted
    with pytest.raises(ValueError, match="loss"):
        SampledSoftmaxClassifier(loss="hinge").fit(X, y)
    with pytest.raises(ValueError, match="batch_size"):
        SampledSoftmaxClassifier(batch_size=0).fit(X, y)
    clf = SampledSoftmaxClassifier(
        loss="ove", eta0=1e306, max_iter=5, tol=None, random_state=0
    )
    with pytest.raises(DivergenceError, match="lower eta0"):
        clf.fit(X, y)
    assert not hasattr(clf, "coef_")


def test_input_not_modified(planted):
    X, y = planted
    X0, y0 = X.copy(), y.copy()
    sw = np.ones(X.shape[0])
    SampledSoftmaxClassifier(
        max_iter=2, tol=None, eta0=0.05, random_state=0
    ).fit(X, y, sample_weight=sw)
    assert_array_equal(X.toarray(), X0.toarray())
    assert_array_equal(y, y0)
    assert_array_equal(sw, 1.0)


@pytest.mark.parametrize("loss", sorted(LOSSES))
def test_every_loss_learns_with_the_frequency_sampler(planted, loss):
    X, y = planted
    clf = SampledSoftmaxClassifier(
        loss=loss,
        eta0=2.0,
        max_iter=20,
        tol=None,
        random_state=0,
        sampler="frequency",
        n_sampled_classes=60,  # more draws than the 40 classes
    ).fit(X, y)
    assert clf.log_loss(X, y) < 0.6 * np.log(40)
    assert np.all(np.isfinite(clf.loss_curve_))
