"""Augment and reduce (Ruiz et al. 2018): kernels, bounds, quadrature, API."""

import pickle
import warnings

import _quadrature_reference as quad_ref
import numpy as np
import pytest
import scipy.sparse as sp
from _kernel_options import ar_options
from _reference import (
    ar_epoch_reference,
    ar_noise,
    clone_rng,
    random_problem,
    softmax_ar_bound,
)
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import log_ndtr, log_softmax, logsumexp
from scipy.stats import norm

from sksoftmax import (
    ARLogisticClassifier,
    ARProbitClassifier,
    ARSoftmaxClassifier,
    DivergenceError,
)
from sksoftmax._augment_reduce import _SCHEDULES
from sksoftmax._augment_reduce_fast import ar_epoch32, ar_epoch64
from sksoftmax._quadrature import noise_log_proba
from sksoftmax._shared._codes import Schedule
from sksoftmax._shared._dataset import make_dataset
from sksoftmax._shared._random import RandomState
from sksoftmax._shared._special import (
    _log_ndtr_mills_arrays,
    log_ndtr_array,
    log_sigmoid_array,
    ndtr_mills_array,
)
from sksoftmax._shared._weight_matrix import make_weight_matrix
from sksoftmax.datasets import make_softmax_classification

MODELS = {"softmax": 0, "probit": 1, "logistic": 2}
SCHEDULE_CODES = {
    "constant": int(Schedule.SCHEDULE_CONSTANT),
    "invscaling": int(Schedule.SCHEDULE_INVSCALING),
    "kucukelbir": int(Schedule.SCHEDULE_ADAPTIVE),
    "adagrad": int(Schedule.SCHEDULE_ADAGRAD),
}
RTOL = {np.float64: 1e-9, np.float32: 2e-4}
ESTIMATORS = [ARSoftmaxClassifier, ARProbitClassifier, ARLogisticClassifier]


def _problem(fmt, dtype, n=41, d=10, K=7, density=0.4, seed=0):
    # n rows, the last of them empty
    return random_problem(fmt, dtype, n - 1, d, K, density, seed)


def _run_kernel(ds, wm, y, local, rng, order, *, model, batch, m, init,
                schedule, eta_epoch=0.1, eta0=0.1, t=0, n_steps=0,
                local_rate=1.0, per_row=True, alpha=0.0, adapt=None,
                fit_intercept=True, shuffle=True, dtype=np.float64,
                natural=False):
    kernel = ar_epoch64 if dtype == np.float64 else ar_epoch32
    return kernel(
        ds, wm, y, local, rng, order, t, n_steps,
        np.zeros(1) if adapt is None else adapt,
        ar_options(
            model=MODELS[model], batch_size=batch, n_sampled=m,
            init_local=init, schedule=SCHEDULE_CODES[schedule],
            eta_epoch=eta_epoch, eta0=eta0, power_t=0.5, decay=0.9,
            local_rate=local_rate, per_row=per_row, alpha=alpha,
            fit_intercept=fit_intercept, shuffle=shuffle, n_threads=1,
            natural_local=natural,
        ),
    )


# ------------------------------------------------------ special functions
def test_log_ndtr_and_its_derivative_in_the_far_tail():
    x = np.concatenate([-np.logspace(-3, 3, 400), np.logspace(-3, 1.5, 100)])
    assert_allclose(log_ndtr_array(x), log_ndtr(x), rtol=1e-13)
    # Phi underflows below -38: log-space values stay finite and exact
    assert np.isfinite(log_ndtr_array(-1e3)) and log_ndtr_array(-1e3) < -5e5
    ref = np.exp(norm.logpdf(x) - log_ndtr(x))
    mid = x > -30  # below, the reference itself loses digits
    assert_allclose(ndtr_mills_array(x[mid]), ref[mid], rtol=1e-12)
    assert_allclose(ndtr_mills_array(x[~mid]), ref[~mid], rtol=1e-8)
    # the derivative of log Phi, checked by central differences across the
    # switch between erfc and the asymptotic series at -20
    for x0 in (-500.0, -20.0, -19.999, -3.0, 0.0, 4.0):
        h = 1e-5 * max(1.0, abs(x0))
        lo, hi = log_ndtr_array([x0 - h, x0 + h])
        fd = (hi - lo) / (2 * h)
        assert ndtr_mills_array([x0])[0] == pytest.approx(fd, rel=1e-7)
    z = np.array([-800.0, -30.0, 0.0, 30.0, 800.0])
    assert_allclose(log_sigmoid_array(z), -np.logaddexp(0, -z), rtol=1e-15)
    # the kernels' fused evaluation (one erfc for both) agrees with them
    fused_log, fused_mills = _log_ndtr_mills_arrays(x)
    assert_allclose(fused_log, log_ndtr_array(x), rtol=1e-15)
    assert_allclose(fused_mills, ndtr_mills_array(x), rtol=1e-15)


# ------------------------------------------------ kernels vs references
@pytest.mark.kernel
@pytest.mark.parametrize("fmt", ["dense", "csr"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("model", list(MODELS))
@pytest.mark.parametrize(
    "schedule,alpha,fit_intercept,per_row,width,n0,natural",
    [
        ("constant", 0.0, True, True, 10, 0, False),
        ("invscaling", 0.05, False, False, 10, 0, False),
        # the 'kucukelbir' step sweeps whole rows of W (10 features) or keeps
        # lists of touched ones (400 features, ~3 per row); from step 509
        # the epochs cross the rebasing of its state at step 512
        ("kucukelbir", 0.0, True, False, 10, 0, False),
        ("kucukelbir", 0.05, False, True, 10, 509, False),
        ("kucukelbir", 0.0, True, True, 400, 509, False),
        # AdaGrad: whole-row sweeps and touched lists, with the penalty;
        # no rebasing (n0 = 509 crosses step 512)
        ("adagrad", 0.0, True, True, 10, 0, False),
        ("adagrad", 0.05, False, False, 10, 509, False),
        ("adagrad", 0.0, True, True, 400, 509, False),
        # the natural local step of Alg. 2 (the softmax ignores it)
        ("constant", 0.0, True, True, 10, 0, True),
        ("kucukelbir", 0.05, False, False, 400, 509, True),
    ],
)
def test_ar_epoch_matches_reference(
    fmt, dtype, model, schedule, alpha, fit_intercept, per_row, width, n0,
    natural,
):
    X, y, sw = _problem(fmt, dtype, d=width,
                        density=0.4 if width == 10 else 0.008)
    K, d = 7, X.shape[1]
    rng0 = np.random.default_rng(5)
    W = (0.3 * rng0.standard_normal((K, d))).astype(dtype)
    b = (0.1 * rng0.standard_normal(K)).astype(dtype)
    local = np.column_stack(
        [rng0.normal(0, 1, X.shape[0]), rng0.normal(0.5, 0.3, X.shape[0]),
         rng0.integers(0, 3, X.shape[0])]
    ).astype(np.float64)
    adapt = np.full(K * (d + 1), -1.0)
    ds = make_dataset(X, sw)
    rng = RandomState(11)
    ref_rng = clone_rng(rng)
    coef, intercept, local_k = W.copy(), b.copy(), local.copy()
    adapt_k = adapt.copy()
    wm = make_weight_matrix(coef, intercept)
    local_rate = 1.0 if model == "softmax" else 0.05
    t, n_steps = 0, n0
    for init in (True, False):
        order = np.arange(X.shape[0], dtype=np.intp)
        status, obj, wsum, t_k, steps_k, _, _ = _run_kernel(
            ds, wm, y, local_k, rng, order, model=model, batch=9, m=3,
            init=init, schedule=schedule, eta_epoch=0.05, eta0=0.3, t=t,
            n_steps=n_steps, local_rate=local_rate, per_row=per_row,
            alpha=alpha, adapt=adapt_k, fit_intercept=fit_intercept,
            dtype=dtype, natural=natural,
        )
        assert status == 0
        W, b, local, adapt, obj_ref, wsum_ref, t, n_steps = (
            ar_epoch_reference(
                X, y, sw, W, b, local, ref_rng, model=model, batch_size=9,
                m=3, init_local=init, schedule=schedule, eta_epoch=0.05,
                eta0=0.3, t=t, n_steps=n_steps, local_rate=local_rate,
                per_row=per_row, alpha=alpha, adapt=adapt, fit_intercept=fit_intercept,
                natural_local=natural,
            )
        )
        tol = RTOL[dtype]
        assert_allclose(wm.true_coef(), W, rtol=tol, atol=tol)
        assert_allclose(intercept, b, rtol=tol, atol=tol)
        assert_allclose(local_k, local, rtol=tol, atol=tol)
        assert_allclose(obj, obj_ref, rtol=tol)
        if schedule in ("kucukelbir", "adagrad"):
            assert_allclose(adapt_k, adapt, rtol=tol * 10, atol=tol)
        if alpha > 0:  # ||W||^2 is tracked for the penalty only
            assert_allclose(wm.sq_norm, (W**2).sum(), rtol=tol * 10)
        assert wsum == pytest.approx(wsum_ref)
        assert (t_k, steps_k) == (t, n_steps) == (t, n0 + 5 * (2 - init))
        if not fit_intercept:
            assert_array_equal(intercept, b)
        # continue both from the reference (float32 drift)
        coef[:] = W
        intercept[:] = b
        local_k[:] = local
        adapt_k[:] = adapt
        wm = make_weight_matrix(coef, intercept)


@pytest.mark.kernel
@pytest.mark.parametrize("model", list(MODELS))
def test_kernel_reports_non_finite_scores(model):
    # (the softmax exponent psi_k - psi_y - log eta_n cannot overflow after
    # the local step: log eta_n >= log a_t + log eta~_n >= log a_t + psi_k -
    # psi_y, so only non-finite values are left to report)
    X, y, sw = _problem("csr", np.float64)
    W = np.zeros((7, X.shape[1]))
    W[0] = np.inf
    ds = make_dataset(X, sw)
    local = np.zeros((X.shape[0], 3))
    status, *_, row, value = _run_kernel(
        ds, make_weight_matrix(W, np.zeros(7), 0.0), y, local,
        RandomState(0), np.arange(X.shape[0], dtype=np.intp), model=model,
        batch=5, m=6, init=False, schedule="constant",
    )
    assert status == 2 and 0 <= row < X.shape[0]


# ------------------------------------------------------------ the bounds
def _one_row_objective(x, y, W, b, log_eta, n_steps):
    """-eq. 8 as the kernel evaluates it with all K - 1 classes (|S| = K-1)."""
    X = sp.csr_matrix(x[None, :])
    ds = make_dataset(X, np.ones(1))
    # v_n = 10^6 earlier visits: a_t = (1 + 10^6)^-0.9
    local = np.array([[0.0 if log_eta is None else log_eta, 0.0, 1e6]])
    coef, intercept = W.copy(), b.copy()
    status, obj, *_ = _run_kernel(
        ds, make_weight_matrix(coef, intercept), np.array([y]), local,
        RandomState(0), np.zeros(1, dtype=np.intp), model="softmax",
        batch=1, m=W.shape[0] - 1, init=log_eta is None, schedule="constant",
        n_steps=n_steps,
    )
    assert status == 0
    return obj, local[0, 0]


def test_eq8_is_below_the_log_likelihood_and_tight_at_eta_star():
    rng = np.random.default_rng(0)
    K, d = 9, 6
    W, b = rng.normal(0, 1.5, (K, d)), rng.normal(0, 1, K)
    for _ in range(10):
        x, y = rng.normal(size=d), int(rng.integers(K))
        psi = W @ x + b
        log_lik = log_softmax(psi)[y]
        log_eta_star = logsumexp(psi - psi[y])
        # init: the kernel sets eta = eta~ = eta* (all classes), tight bound
        obj, le = _one_row_objective(x, y, W, b, None, 0)
        assert le == pytest.approx(log_eta_star, abs=1e-12)
        assert -obj == pytest.approx(log_lik, abs=1e-12)
        # any other eta: after the local step at a_t = (1 + 1e6)^-0.9 the
        # bound the kernel reports is below the log-likelihood
        for log_eta in (-3.0, 0.0, log_eta_star - 1, log_eta_star + 2, 30.0):
            obj, le = _one_row_objective(x, y, W, b, log_eta, 10**6)
            assert -obj < log_lik
            assert -obj == pytest.approx(
                softmax_ar_bound(psi[None], np.array([y]), le)[0],
                rel=1e-12, abs=1e-12,
            )
        # the NumPy bound on a wide grid of eta, equal only at eta*
        grid = np.linspace(-20, 40, 601)
        bound = softmax_ar_bound(np.tile(psi, (grid.size, 1)),
                                 np.full(grid.size, y), grid)
        assert np.all(bound <= log_lik + 1e-12)
        assert softmax_ar_bound(psi[None], np.array([y]),
                                log_eta_star)[0] == pytest.approx(log_lik)


def _elbo_by_quadrature(psi, y, mu, sig, model):
    """Eq. 7 for q = N(mu, sig^2) or logistic(mu, sig), integrated on eps."""
    log_pdf, _, log_cdf, _ = ar_noise(model)
    u = np.linspace(-40, 40, 400001)
    du = u[1] - u[0]
    q = np.exp(log_pdf(u))  # density of u, q(eps) = q_u(u) / sig
    eps = mu + sig * u
    d = np.delete(psi, y) - psi[y]
    inner = log_pdf(eps) + log_cdf(eps[:, None] - d).sum(1) - (
        log_pdf(u) - np.log(sig)
    )
    return float(np.sum(q * inner) * du)


@pytest.mark.parametrize("model", ["probit", "logistic"])
def test_monte_carlo_elbo_is_below_the_quadrature_log_likelihood(model):
    rng = np.random.default_rng(1)
    K, d, n_draws = 6, 4, 20000
    W, b = rng.normal(0, 1.0, (K, d)), rng.normal(0, 0.5, K)
    noise = "normal" if model == "probit" else "logistic"
    for trial in range(4):
        x, y = rng.normal(size=d), int(rng.integers(K))
        psi = W @ x + b
        log_lik = noise_log_proba(psi[None], noise)[0, y]
        mu, sig = (rng.normal(1.0, 1.0), rng.uniform(0.3, 1.5))
        gamma = np.log(np.expm1(sig))
        # n_draws copies of the row: one epoch of the kernel with every class
        # (|S| = K - 1), a negligible step (eta 1e-300, a_t ~ 1e-12) draws
        # n_draws independent one-sample estimates of -eq. 7 at (mu, sig)
        X = sp.csr_matrix(np.tile(x, (n_draws, 1)))
        local = np.tile([mu, gamma, 1e15], (n_draws, 1))
        status, obj, wsum, *_ = _run_kernel(
            make_dataset(X, np.ones(n_draws)),
            make_weight_matrix(W.copy(), b.copy()),
            np.full(n_draws, y, dtype=np.intp), local, RandomState(trial),
            np.arange(n_draws, dtype=np.intp), model=model, batch=n_draws,
            m=K - 1, init=False, schedule="constant", eta_epoch=1e-300,
            n_steps=10**15, local_rate=0.01,
        )
        assert status == 0
        elbo_mc = -obj / wsum
        elbo = _elbo_by_quadrature(psi, y, mu, sig, model)
        # the kernel's estimate is unbiased for eq. 7 ...
        assert elbo_mc == pytest.approx(elbo, abs=0.05)
        # ... and eq. 7 is a lower bound on the exact log-likelihood
        assert elbo < log_lik
        assert elbo_mc < log_lik


# ------------------------------------------------------------ quadrature
def test_gumbel_quadrature_reproduces_the_softmax():
    rng = np.random.default_rng(0)
    worst = 0.0
    for K, spread in [(2, 1.0), (10, 3.0), (148, 5.0), (500, 10.0)]:
        psi = rng.normal(0, spread, (30, K))
        log_p, mass_error = noise_log_proba(psi, "gumbel", return_error=True)
        err = np.abs(np.exp(log_p) - np.exp(log_softmax(psi, axis=1))).max()
        worst = max(worst, err, mass_error.max())
    print(f"largest Gumbel quadrature error: {worst:.2e}")
    assert worst < 1e-10


@pytest.mark.parametrize("noise", ["normal", "logistic"])
def test_probit_and_logistic_quadrature_error_and_monte_carlo(noise):
    rng = np.random.default_rng(2)
    psi = rng.normal(0, 3, (40, 50))
    log_p, mass_error = noise_log_proba(psi, noise, return_error=True)
    fine = noise_log_proba(psi, noise, panel_width=0.5, n_nodes=20)
    err = max(mass_error.max(), np.abs(np.exp(log_p) - np.exp(fine)).max())
    print(f"largest {noise} quadrature error: {err:.2e}")
    assert err < 1e-10
    assert_allclose(np.exp(log_p).sum(1), 1.0, atol=1e-12)
    # eq. 5 against simulation of argmax_k (psi_k + eps_k), 4 classes
    small = np.array([[0.0, 0.5, -1.0, 1.2]])
    draw = rng.standard_normal if noise == "normal" else rng.logistic
    wins = np.bincount(np.argmax(small + draw(size=(400000, 4)), 1), None, 4)
    assert_allclose(np.exp(noise_log_proba(small, noise))[0],
                    wins / 400000, atol=4e-3)


def _mp_log_proba(psi, noise, dps=20):
    """log p_k of eq. 5 by mpmath (the high-precision reference).

    Each class is integrated around its own peak: the integrand is
    log-concave, located on a fine float grid, and split there into 20
    pieces, plus the two infinite ends (integrating all classes over the
    same cuts missed the peak of a class far behind)."""
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = dps
    if noise == "normal":

        def lcdf(z):
            return mp.log(mp.ncdf(z))

        def lpdf(z):
            return -z * z / 2 - mp.log(mp.sqrt(2 * mp.pi))

        def flt(z):
            return log_ndtr(z), -0.5 * z * z

    else:

        def lcdf(z):
            return -mp.log1p(mp.exp(-z))

        def lpdf(z):
            return lcdf(z) + lcdf(-z)

        def flt(z):
            lc = -np.logaddexp(0.0, -z)
            return lc, lc - np.logaddexp(0.0, z)

    psi = np.asarray(psi, dtype=np.float64)
    ts = np.linspace(psi.min() - 60, psi.max() + 60, 100001)
    lc, lp = flt(ts[:, None] - psi)
    mpsi = [mp.mpf(float(v)) for v in psi]
    out = []
    for k, pk in enumerate(mpsi):
        hs = lp[:, k] + lc.sum(1) - lc[:, k]
        keep = np.flatnonzero(hs > hs.max() - 80)
        a, b = ts[max(keep[0] - 1, 0)], ts[min(keep[-1] + 1, ts.size - 1)]
        h_top = mp.mpf(float(hs.max()))

        def f(t, k=k, pk=pk):
            rest = mp.fsum(lcdf(t - pj) for j, pj in enumerate(mpsi) if j != k)
            return mp.exp(lpdf(t - pk) + rest - h_top)

        cuts = [mp.mpf(float(c)) for c in np.linspace(a, b, 21)]
        out.append(mp.log(mp.quad(f, [-mp.inf, *cuts, mp.inf])) + h_top)
    return np.array([float(v) for v in out])


@pytest.mark.parametrize("noise", ["normal", "logistic"])
def test_quadrature_matches_high_precision_reference(noise):
    """Scores within a few noise units: log p to 1e-9 against mpmath,
    at any offset of the scores (only their differences matter)."""
    rng = np.random.default_rng(4)
    # on a grid of 2^-10 so that psi + offset is exact
    psi = np.round(rng.normal(0, 1.5, 5) * 1024) / 1024
    ref = _mp_log_proba(psi, noise)
    for offset in (0.0, 1e3, -2.5e5):
        got = noise_log_proba((psi + offset)[None], noise)[0]
        assert_allclose(got, ref, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("noise", ["normal", "logistic"])
@pytest.mark.parametrize("gap", [1e2, 1e5, 1e17, 1e20, 1e100, 1e300])
def test_quadrature_limits_at_huge_score_gaps(noise, gap):
    """A class far ahead gets probability 1 and log-probability 0 exactly,
    as the softmax does; the others the (underflowing) probabilities of
    the high-precision reference; no NaN at any finite scores (before, gaps
    from about 1e17 on gave NaN for every entry)."""
    psi = np.array([[0.0, -gap, gap, 0.5 * gap], [gap, gap, gap, gap]])
    log_p = noise_log_proba(psi, noise)
    p = np.exp(log_p)
    assert not np.any(np.isnan(log_p))
    assert p[0, 2] == 1.0
    if gap > 1e2:  # others below 1e-300: log p exactly 0, as log_softmax
        assert log_p[0, 2] == 0.0
    else:  # log p = -(the others' mass), about -1e-20 for logistic
        assert -1e-15 < log_p[0, 2] <= 0.0
    assert_allclose(p.sum(1), 1.0, atol=1e-15)
    assert_allclose(p[1], 0.25, atol=1e-12)
    if gap <= 1e2:  # the reference's own quadrature is reliable there
        ref = np.exp(_mp_log_proba(psi[0], noise))
        assert_allclose(p[0], ref, rtol=0, atol=1e-15)
    else:  # every other class is below 1e-300: exactly 0 in float64
        assert np.all(p[0, [0, 1, 3]] == 0.0)


@pytest.mark.parametrize("noise", ["normal", "logistic"])
def test_log_proba_of_classes_far_behind(noise):
    """Classes whose mass lies where F(t) < TAIL, left of the row's grid:
    their log-probabilities to 1e-9 relative against mpmath (before the
    extension of issue 15, normal psi = (0, -0.5, -50) gave -1009 for the
    last class against -833.0907)."""
    for psi in ([0.0, -0.5, -50.0], [0.0, -3.0, -20.0, -70.0]):
        ref = _mp_log_proba(psi, noise)
        got = noise_log_proba(np.array([psi]), noise)[0]
        assert_allclose(got, ref, rtol=1e-9, atol=1e-12)
    if noise == "normal":
        assert noise_log_proba(np.array([[0.0, -0.5, -50.0]]), noise)[
            0, 2
        ] == pytest.approx(-833.0907052, abs=1e-6)


@pytest.mark.parametrize("noise", ["normal", "logistic"])
def test_log_proba_against_a_finer_quadrature(noise):
    """Every class of rows with scores spread over tens of noise units
    (classes far behind the top in most rows): the default quadrature,
    grid extensions included, agrees with one of four times the nodes
    and panels a quarter as wide to 1e-10 relative."""
    import sksoftmax._quadrature as quad

    rng = np.random.default_rng(7)
    psi = (
        rng.normal(0.0, 1.0, (120, 30))
        * np.repeat([3.0, 5.0, 10.0], 40)[:, None]
    )
    got = noise_log_proba(psi, noise)
    kappa, nodes = quad.KAPPA, quad.EXTENSION_NODES
    try:
        quad.KAPPA, quad.EXTENSION_NODES = kappa / 4, 2 * nodes
        fine = noise_log_proba(psi, noise, panel_width=0.5, n_nodes=24)
    finally:
        quad.KAPPA, quad.EXTENSION_NODES = kappa, nodes
    assert np.all(np.isfinite(got))
    assert got.min() < -100.0 if noise == "normal" else got.min() < -20.0
    assert_allclose(got, fine, rtol=1e-10, atol=1e-12)
    # and no class's integrand holds mass right of the grid (the design's
    # argument: there F > 1 - TAIL and each integrand is below phi's tail;
    # the helpers of the NumPy reference)
    rel = psi - psi.max(axis=1, keepdims=True)
    t_hi = quad_ref.support(rel, noise)[1]
    h, slope, _ = quad_ref._local_terms(t_hi, rel, noise)
    assert not quad_ref._outside(h, slope, got, -1).any()


@pytest.mark.parametrize("noise", ["normal", "logistic"])
@pytest.mark.parametrize(
    "gap", [30.0, 100.0, 500.0, 3e3, 1e4, 1e6, 1e20, 1e100, 1e300]
)
def test_log_proba_at_any_gap_against_closed_forms(noise, gap):
    """Two classes: p = Phi(-gap / sqrt 2) (normal), and for logistic
    noise (the difference of two logistic variables) p = ((g - 1) e^g +
    1) / (e^g - 1)^2. Within the panels' reach (gaps of hundreds of noise
    units) to 1e-9 relative, beyond it by the asymptotic expansion to
    1e-4 (measured 1.3e-5 at 1,500, 3.7e-6 at 3,000); the top class has
    log p 0 exactly."""
    log_p = noise_log_proba(np.array([[0.0, -gap]]), noise)[0]
    if noise == "normal":
        exact = log_ndtr(-gap / np.sqrt(2.0))
    else:
        exact = (
            -gap
            + np.log(gap - 1.0 + np.exp(-gap))
            - 2.0 * np.log1p(-np.exp(-gap))
        )
    assert log_p[0] == 0.0 or gap < 100.0
    if np.isinf(exact):  # -gap^2 / 4 beyond float range: -inf there too
        assert log_p[1] == -np.inf
    else:
        rtol = 1e-9 if gap <= 500.0 else 1e-4
        assert_allclose(log_p[1], exact, rtol=rtol)


@pytest.mark.parametrize("noise", ["normal", "logistic"])
def test_far_asymptotics_against_a_longer_quadrature(noise):
    """Rows with a cluster at the top and classes 1,500 noise units
    behind (beyond the panels' reach: the asymptotic expansion): within
    1e-3 relative of a quadrature allowed 40 times the panels."""
    import sksoftmax._quadrature as quad

    rng = np.random.default_rng(3)
    psi = np.hstack(
        [rng.normal(0, 2, (6, 5)), rng.normal(-1500.0, 3.0, (6, 3))]
    )
    got = noise_log_proba(psi, noise)
    cap = quad.MAX_EXTENSION_PANELS
    try:
        quad.MAX_EXTENSION_PANELS = 40 * cap
        long = noise_log_proba(psi, noise)
    finally:
        quad.MAX_EXTENSION_PANELS = cap
    assert_allclose(got[:, :5], long[:, :5], rtol=1e-12, atol=1e-14)
    assert_allclose(got[:, 5:], long[:, 5:], rtol=1e-3)
    assert np.all(got[:, 5:] < -1000.0)


@pytest.mark.parametrize("Est", [ARProbitClassifier, ARLogisticClassifier])
def test_probabilities_stay_finite_at_huge_inputs(Est):
    """The reproducer of issue 15: 180 NaN at X * 1e20 before."""
    rng = np.random.RandomState(0)
    X, y = rng.randn(60, 6), np.arange(60) % 3
    est = Est(max_iter=5, tol=None, random_state=0).fit(X, y)
    for scale in (1e20, 1e300):
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            p = est.predict_proba(X * scale)
        assert np.all(np.isfinite(p))
        assert_allclose(p.sum(1), 1.0, atol=1e-15)
        assert_array_equal(est.classes_[p.argmax(1)], est.predict(X * scale))


def test_quadrature_is_stable_for_extreme_scores():
    psi = np.array([[0.0, -1e3, 1e3, 50.0], [1e4, 1e4, 1e4, 1e4]])
    for noise in ("normal", "logistic", "gumbel"):
        p = np.exp(noise_log_proba(psi, noise))
        assert np.all(np.isfinite(p))
        assert_allclose(p.sum(1), 1.0, atol=1e-12)
        assert p[0, 2] == pytest.approx(1.0)
        assert_allclose(p[1], 0.25, atol=1e-10)
    with pytest.raises(ValueError, match="noise"):
        noise_log_proba(psi, "cauchy")


# ----------------------------------------------------------- estimators
@pytest.fixture(scope="module")
def problem():
    X, y = make_softmax_classification(
        n_samples=1200, n_features=40, n_classes=12, density=0.2,
        random_state=0,
    )
    return X[:900], y[:900], X[900:], y[900:]


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_fit_predict_contract(problem, Est):
    X, y, Xt, yt = problem
    clf = Est(max_iter=30, tol=None, random_state=0).fit(X, y)
    assert len(clf.elbo_curve_) == len(clf.loss_curve_) == clf.n_iter_ == 30
    # the bound rises and stays below the log-likelihood it bounds
    assert np.mean(clf.elbo_curve_[-5:]) > np.mean(clf.elbo_curve_[:3])
    assert clf.elbo_curve_[-1] < -clf.log_loss(X, y) + 0.05
    proba = clf.predict_proba(Xt)
    assert_allclose(proba.sum(1), 1.0, atol=1e-10)
    assert_array_equal(clf.classes_[proba.argmax(1)], clf.predict(Xt))
    assert_allclose(np.log(proba), clf.predict_log_proba(Xt), atol=1e-10)
    # better than the uniform model, and than before fitting
    assert clf.log_loss(Xt, yt) < np.log(12) - 0.3
    assert clf.score(Xt, yt) > 0.4


def test_softmax_reaches_the_exact_maximum_likelihood():
    from sklearn.linear_model import LogisticRegression

    # a well-specified, not separable softmax problem (exact loss ~ 1)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 5))
    W = rng.normal(0, 0.8, (8, 5))
    logits = X @ W.T
    p = np.exp(logits - logsumexp(logits, axis=1, keepdims=True))
    y = (p.cumsum(1) > rng.uniform(size=(2000, 1))).argmax(1)
    exact = LogisticRegression(C=1e6, max_iter=2000).fit(X, y)
    ll_exact = -np.mean(exact.predict_log_proba(X)[np.arange(len(y)), y])
    clf = ARSoftmaxClassifier(
        n_sampled_classes=3, batch_size=50, eta0=0.2, max_iter=40, tol=None,
        random_state=0,
    ).fit(X, y)
    assert clf.log_loss(X, y) < ll_exact + 0.03
    # the running bound ends a little below the log-likelihood (the eta_n
    # lag behind W by up to an epoch)
    assert -clf.log_loss(X, y) - 0.15 < clf.elbo_curve_[-1] < -ll_exact


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_dense_csr_reproducible_and_float32(problem, Est):
    X, y, _, _ = problem
    kw = dict(max_iter=3, random_state=3)
    a = Est(**kw).fit(X, y)
    b = Est(**kw).fit(X.toarray(), y)
    assert_allclose(a.coef_, b.coef_, rtol=1e-12, atol=1e-14)
    assert_array_equal(a.elbo_curve_, Est(**kw).fit(X, y).elbo_curve_)
    c = Est(**kw).fit(X.astype(np.float32), y)
    assert c.coef_.dtype == np.float32
    assert_allclose(c.coef_, a.coef_, rtol=1e-2, atol=1e-3)


@pytest.mark.parametrize("schedule", ["constant", "exponential", "invscaling"])
def test_package_schedules(problem, schedule):
    X, y, Xt, yt = problem
    eta0 = {"constant": 0.5, "exponential": 0.5, "invscaling": 10.0}
    clf = ARSoftmaxClassifier(
        learning_rate=schedule, eta0=eta0[schedule], max_iter=20,
        random_state=0,
    ).fit(X, y)
    assert clf.log_loss(Xt, yt) < np.log(12) - 0.3


def test_partial_fit_rules_and_warm_start(problem):
    X, y, _, _ = problem
    clf = ARProbitClassifier(random_state=0)
    with pytest.raises(ValueError, match="classes must be passed"):
        clf.partial_fit(X, y)
    classes = np.unique(y)
    clf.partial_fit(X[:300], y[:300], classes=classes)
    steps = clf._state.n_steps
    clf.partial_fit(X[300:], y[300:])
    assert clf._state.n_steps > steps and clf.t_ == 900 and clf.n_iter_ == 1
    assert len(clf.elbo_curve_) == 2
    with pytest.raises(ValueError, match="not in classes"):
        clf.partial_fit(X[:5], np.full(5, 999))
    # warm_start continues (per-row eta, schedule state); fit starts over
    a = ARSoftmaxClassifier(max_iter=4, random_state=0).fit(X, y)
    b = ARSoftmaxClassifier(max_iter=2, random_state=0, warm_start=True)
    b.fit(X, y)
    log_eta = b._row_state[:, 0].copy()
    b.fit(X, y)
    assert b._state.n_steps == a._state.n_steps and b.t_ == 4 * X.shape[0]
    assert not np.array_equal(b._row_state[:, 0], log_eta)
    b.set_params(warm_start=False).fit(X, y)
    assert b.t_ == 2 * X.shape[0]


def test_bad_input_and_divergence(problem):
    X, y, _, _ = problem
    for bad in [dict(batch_size=0), dict(n_sampled_classes=0),
                dict(learning_rate="sometimes"), dict(batch_size="big")]:
        with pytest.raises(ValueError):
            ARSoftmaxClassifier(**bad).fit(X, y)
    Xn = X.toarray()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        ARLogisticClassifier().fit(Xn, y)
    X_copy, y_copy = X.copy(), y.copy()
    ARProbitClassifier(max_iter=1, random_state=0).fit(X, y)
    assert (X != X_copy).nnz == 0 and np.array_equal(y, y_copy)
    huge = X * 1e200
    clf = ARSoftmaxClassifier(learning_rate="constant", eta0=1e100,
                              max_iter=5, random_state=0)
    with pytest.raises(DivergenceError, match="eta0"):
        clf.fit(huge, y)
    assert not hasattr(clf, "coef_") and not hasattr(clf, "elbo_curve_")


def test_auto_sizes_follow_the_paper():
    clf = ARSoftmaxClassifier()
    clf.classes_ = np.arange(148)
    assert clf._sizes(4880) == (20, 488)  # Ruiz et al.'s Bibtex setting
    assert clf._sizes(150) == (20, 15)
    clf.classes_ = np.arange(3)
    assert clf._sizes(10**6) == (2, 488)
    clf.set_params(n_sampled_classes=500, batch_size=10**6)
    assert clf._sizes(100) == (2, 100)


def test_auto_learning_rate_is_adagrad_for_softmax_only(problem):
    X, y, _, _ = problem
    kw = dict(max_iter=2, random_state=0)
    for Est, rate in [(ARSoftmaxClassifier, "adagrad"),
                      (ARProbitClassifier, "kucukelbir")]:
        auto = Est(**kw).fit(X, y)
        explicit = Est(learning_rate=rate, **kw).fit(X, y)
        assert auto.learning_rate == "auto"  # stored as given
        assert_array_equal(auto.coef_, explicit.coef_)
        assert auto.eta0_ == explicit.eta0_
    # the two schedules do differ
    adagrad = ARSoftmaxClassifier(**kw).fit(X, y)
    paper = ARSoftmaxClassifier(learning_rate="kucukelbir", **kw).fit(X, y)
    assert not np.allclose(adagrad.coef_, paper.coef_)


def test_warm_start_switching_schedule_starts_a_fresh_state(problem):
    # 'kucukelbir' keeps s / 0.9^phase, 'adagrad' s itself: a warm start that
    # switches must not read one as the other
    X, y, _, _ = problem
    a = ARSoftmaxClassifier(learning_rate="kucukelbir", max_iter=2,
                            random_state=0, warm_start=True).fit(X, y)
    b = pickle.loads(pickle.dumps(a))
    b._state.adapt = None  # what a fresh state means
    a.set_params(learning_rate="adagrad").fit(X, y)
    b.set_params(learning_rate="adagrad").fit(X, y)
    assert_array_equal(a.coef_, b.coef_)
    assert a._state.adapt_schedule == _SCHEDULES["adagrad"].code


@pytest.mark.parametrize("model", ["probit", "logistic"])
def test_natural_local_step_reaches_the_best_q(model):
    # W held fixed (eta 1e-300): repeated natural local steps of one row
    # (copies of it, each its own q) settle where eq. 7 is largest over
    # (mu, sigma): for a Gaussian q the step's fixed point E_q[h'] = 0,
    # 1 / sigma^2 = E_q[-h''] is the optimum (Price's theorem); for the
    # logistic q it matches the variance, and the bound is near its best.
    from scipy.optimize import minimize

    rng = np.random.default_rng(3)
    K, d, n_copies, n_epochs = 6, 4, 200, 300
    W, b = rng.normal(0, 1.5, (K, d)), rng.normal(0, 0.5, K)
    x = rng.normal(size=d)
    psi = W @ x + b
    y = int(np.argsort(psi)[2])  # a label behind three classes
    X = sp.csr_matrix(np.tile(x, (n_copies, 1)))
    local = np.tile([0.0, np.log(np.expm1(1.0)), 0.0], (n_copies, 1))
    ds = make_dataset(X, np.ones(n_copies))
    wm = make_weight_matrix(W.copy(), b.copy())
    rng_k = RandomState(7)
    for _ in range(n_epochs):
        status, *_ = _run_kernel(
            ds, wm, np.full(n_copies, y, dtype=np.intp), local, rng_k,
            np.arange(n_copies, dtype=np.intp), model=model, batch=n_copies,
            m=K - 1, init=False, schedule="constant", eta_epoch=1e-300,
            natural=True,
        )
        assert status == 0
    mu, sig = local[:, 0].mean(), np.logaddexp(0.0, local[:, 1]).mean()
    best = minimize(
        lambda p: -_elbo_by_quadrature(psi, y, p[0], np.exp(p[1]), model),
        [mu, np.log(sig)], method="Nelder-Mead",
        options={"xatol": 1e-5, "fatol": 1e-9},
    )
    elbo_best = -best.fun
    elbo = _elbo_by_quadrature(psi, y, mu, sig, model)
    assert elbo == pytest.approx(elbo_best, abs=2e-3)
    if model == "probit":
        assert mu == pytest.approx(best.x[0], abs=0.03)
        assert sig == pytest.approx(np.exp(best.x[1]), rel=0.03)
    # the paper's gradient step from the same start, same number of visits,
    # is further from the best bound (its a_0 = 0.01 has not converged)
    local_p = np.tile([0.0, np.log(np.expm1(1.0)), 0.0], (n_copies, 1))
    for _ in range(n_epochs):
        _run_kernel(
            ds, wm, np.full(n_copies, y, dtype=np.intp), local_p, rng_k,
            np.arange(n_copies, dtype=np.intp), model=model, batch=n_copies,
            m=K - 1, init=False, schedule="constant", eta_epoch=1e-300,
            local_rate=0.01,
        )
    elbo_paper = _elbo_by_quadrature(
        psi, y, local_p[:, 0].mean(),
        np.logaddexp(0.0, local_p[:, 1]).mean(), model,
    )
    assert elbo_paper < elbo
