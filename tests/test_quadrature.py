"""The quadrature kernel of eq. 5 (_quadrature_fast.pyx.tp) against its
NumPy reference (tests/_quadrature_reference.py).

Small problems, both noise models of the estimators (and the Gumbel one),
float64 and float32, one thread and two, scores that take every branch:
the core grid, the extension panels left of it, the asymptotic tail and
gaps beyond float range. The accuracy of the method itself (mpmath,
closed forms, a finer quadrature) is tested in test_augment_reduce.py on
the kernel.
"""

import _quadrature_reference as ref
import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import log_ndtr

import sksoftmax._quadrature as quad
from sksoftmax import ARLogisticClassifier, ARProbitClassifier
from sksoftmax._quadrature import noise_log_proba
from sksoftmax._shared._special import (
    log_mills_table,
    log_ndtr_signed_array,
    log_ndtr_signed_table,
    log_ndtr_tab_array,
    log_sigmoid_row_array,
    logistic_row_array,
    normal_row_array,
)
from sksoftmax.datasets import make_softmax_classification

pytestmark = pytest.mark.kernel

NOISES = ["normal", "logistic", "gumbel"]


def _score_sets():
    """Rows of scores by branch of the algorithm."""
    rng = np.random.default_rng(11)
    return {
        # within a few noise units: the core grid alone
        "core": rng.normal(0.0, 1.5, (12, 9)),
        # spread over tens of units: classes far behind, extension panels
        "spread": rng.normal(0.0, 1.0, (12, 25))
        * np.repeat([3.0, 10.0, 30.0], 4)[:, None],
        # a cluster at the top and classes 1,500 units behind: the
        # asymptotic expansion (_far_log_proba)
        "far": np.hstack(
            [rng.normal(0, 2, (4, 5)), rng.normal(-1500.0, 3.0, (4, 3))]
        ),
        # ties, huge magnitudes, gaps beyond float range (-inf entries)
        "extreme": np.array(
            [
                [0.0, -1e3, 1e3, 50.0, 0.5],
                [1e4, 1e4, 1e4, 1e4, 1e4],
                [0.0, -1e300, 1e300, 5e299, -0.5],
                [2.0, 2.0, -1e17, 1e17, 1e17],
            ]
        ),
        # two classes: the closed forms' case
        "pair": np.array([[0.0, -g] for g in (0.1, 3.0, 30.0, 100.0, 600.0)]),
    }


def _assert_log_proba_close(got, want, rtol):
    """Equal -inf entries; elsewhere |got - want| <= rtol max(1, |want|)
    (log-probabilities near 0 compared in absolute terms)."""
    assert_array_equal(np.isneginf(got), np.isneginf(want))
    fin = np.isfinite(want)
    assert np.all(np.isfinite(got[fin]))
    err = np.abs(got[fin] - want[fin]) / np.maximum(1.0, np.abs(want[fin]))
    assert err.max(initial=0.0) <= rtol, err.max()


@pytest.mark.parametrize("noise", NOISES)
@pytest.mark.parametrize(
    "case", ["core", "spread", "far", "extreme", "pair"]
)
def test_kernel_matches_numpy_reference(noise, case):
    """float64, one thread and two: the reference's log-probabilities and
    mass errors to rounding (the kernel sums in another order and finds
    the support's ends by regula falsi, not bisection)."""
    psi = _score_sets()[case]
    want, want_err = ref.noise_log_proba(psi, noise, return_error=True)
    one, one_err = noise_log_proba(psi, noise, return_error=True)
    two, two_err = noise_log_proba(
        psi, noise, return_error=True, n_threads=2
    )
    _assert_log_proba_close(one, want, 1e-12)
    assert_allclose(one_err, want_err, rtol=0, atol=1e-13)
    # rows are independent: bitwise the same on two threads
    assert_array_equal(one, two)
    assert_array_equal(one_err, two_err)
    assert one.dtype == np.float64


@pytest.mark.parametrize("noise", NOISES)
@pytest.mark.parametrize("case", ["core", "spread", "far"])
def test_float32_kernel_matches_reference_on_the_same_scores(noise, case):
    """float32 scores are read as they are (no copy to float64) and the
    result is rounded to float32 once, at the end."""
    psi = _score_sets()[case].astype(np.float32)
    want = ref.noise_log_proba(psi.astype(np.float64), noise)
    for n_threads in (1, 2):
        got = noise_log_proba(psi, noise, n_threads=n_threads)
        assert got.dtype == np.float32
        # to float32 rounding of the reference's float64 result
        _assert_log_proba_close(got.astype(np.float64), want, 2e-7)


@pytest.mark.parametrize("noise", ["normal", "logistic"])
def test_kernel_follows_the_module_constants(noise):
    """The options are read at each call: with a quarter of the extension
    panels' width and twice their nodes, the kernel still matches the
    reference run with the same constants (the finer-quadrature test
    relies on it)."""
    psi = _score_sets()["spread"]
    kappa, nodes = quad.KAPPA, quad.EXTENSION_NODES
    try:
        quad.KAPPA = ref.KAPPA = kappa / 4
        quad.EXTENSION_NODES = ref.EXTENSION_NODES = 2 * nodes
        got = noise_log_proba(psi, noise, panel_width=0.5, n_nodes=24)
        want = ref.noise_log_proba(psi, noise, panel_width=0.5, n_nodes=24)
    finally:
        quad.KAPPA = ref.KAPPA = kappa
        quad.EXTENSION_NODES = ref.EXTENSION_NODES = nodes
    _assert_log_proba_close(got, want, 1e-12)


def test_reference_and_kernel_share_their_constants():
    for name in (
        "TAIL",
        "KAPPA",
        "EXTENSION_NODES",
        "EXTENSION_WIDTH",
        "MAX_EXTENSION_PANELS",
        "CORE_PANELS",
    ):
        assert getattr(quad, name) == getattr(ref, name), name
    assert np.log(quad.REL_TAIL) == ref._LOG_REL_TAIL


def test_tabulated_log_ndtr_against_scipy():
    """The kernel's log Phi (a table of the log Mills ratio, no erfc): to
    2e-15 of log Phi relative (absolute near 0) for z > -64, exactly 0 and
    -inf at +-inf."""
    z = np.concatenate(
        [np.linspace(-63.99, 45.0, 100001), [-1e-300, 0.0, 1e-300]]
    )
    got, want = log_ndtr_tab_array(z), log_ndtr(z)
    err = np.abs(got - want) / np.maximum(np.abs(want), 1.0)
    assert err.max() < 2e-15, err.max()
    # relative in the upper tail, where log Phi = -Q is tiny (the products
    # it enters stay right in relative terms), while Q is above 1e-250
    up = (z > 0) & (want < -1e-250)
    assert np.max(np.abs(got[up] / want[up] - 1.0)) < 1e-12
    assert_array_equal(log_ndtr_tab_array([np.inf, -np.inf]), [0.0, -np.inf])
    assert log_mills_table().shape == (1024, 7)


def _with_piece_ends(z):
    """z and every end of the tables' pieces of 1/16 in its range, with
    the points just either side of them."""
    ends = np.arange(np.ceil(z.min() * 16), np.floor(z.max() * 16) + 1) / 16
    return np.sort(np.concatenate([z, ends, ends - 1e-13, ends + 1e-13]))


def test_signed_log_ndtr_table_against_scipy():
    """The signed table (the root finder's and the log-space panels' log
    Phi, ``sks_sg_value``): log Phi = g below 0 and -e^g above, to 2e-15
    relative (absolute near 0) for z > -64 and 1e-12 relative in the
    upper tail while Q is above 1e-250 (the standard of the tabulated log
    Phi above); -inf and 0 at the infinities."""
    z = _with_piece_ends(np.linspace(-63.99, 64.0, 100001))
    z = np.concatenate([z, [-1e-300, 0.0, 1e-300]])
    g = log_ndtr_signed_array(z)
    got = np.where(z < 0, g, -np.exp(g))
    want = log_ndtr(z)
    err = np.abs(got - want) / np.maximum(np.abs(want), 1.0)
    assert err.max() < 2e-15, err.max()
    up = (z > 0) & (want < -1e-250)
    assert np.max(np.abs(got[up] / want[up] - 1.0)) < 1e-12
    g_inf = log_ndtr_signed_array([-np.inf, np.inf])
    assert g_inf[0] == -np.inf and -np.exp(g_inf[1]) == 0.0
    assert log_ndtr_signed_table().shape == (3072, 7)
    assert_array_equal(log_ndtr_signed_table()[:1024], log_mills_table())


def test_direct_log_ndtr_table_against_scipy():
    """The core grid's log Phi (the table's third part for z >= 0): to
    1e-15 absolutely above 0, where log F and the integrands need it in
    absolute terms, and as the signed table below 0."""
    z = _with_piece_ends(np.linspace(0.0, 64.0, 100001))
    got = log_ndtr_signed_array(z, direct=True)
    assert np.max(np.abs(got - log_ndtr(z))) < 1e-15
    neg = _with_piece_ends(np.linspace(-63.99, -1e-3, 20001))
    neg = neg[neg < 0]
    assert_array_equal(
        log_ndtr_signed_array(neg, direct=True), log_ndtr_signed_array(neg)
    )


def test_log_ndtr_tables_against_mpmath():
    """Both tables against mpmath at the branch points (0, the ends of
    pieces, the row regions' bounds 10 and 40) and at random points."""
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 40
    rng = np.random.default_rng(5)
    z = np.concatenate(
        [
            [-63.9, -20.0, -1 / 16, -1e-9, 0.0, 1e-9, 1 / 16, 1.0, 9.999],
            [10.0, 10.001, 15.0, 37.5, 39.999, 40.0],
            rng.uniform(-63.0, 40.0, 300),
        ]
    )
    # above 0 as log1p(-Phi(-z)), right at any working precision
    want = np.array(
        [
            float(
                mp.log(mp.ncdf(mp.mpf(float(v))))
                if v < 0
                else mp.log1p(-mp.ncdf(-mp.mpf(float(v))))
            )
            for v in z
        ]
    )
    g = log_ndtr_signed_array(z)
    signed = np.where(z < 0, g, -np.exp(g))
    err = np.abs(signed - want) / np.maximum(np.abs(want), 1.0)
    assert err.max() < 2e-15, err.max()
    # e^g in the upper tail: relative to the rounding of g (|g| eps)
    up = z > 0
    assert_allclose(signed[up], want[up], rtol=1e-12, atol=0)
    direct = log_ndtr_signed_array(z, direct=True)
    assert_allclose(direct, want, rtol=2e-15, atol=1e-15)


def _regions(z, a, b):
    """For ascending z: the counts below a and below b (the row order)."""
    return int(np.searchsorted(z, a)), int(np.searchsorted(z, b))


@pytest.mark.parametrize("t", [-3.0, 0.0, 0.7, 8.5])
def test_normal_row_against_scipy(t):
    """``sks_normal_row`` on scores whose z = t - psi spans every region:
    with the ratio (the core grid), log Phi below z = 10 to 2e-15
    relative (1e-15 absolutely above 0) and e^-5 phi / Phi to the
    rounding of its exp's argument; without it (the root finder), log Phi
    to 2e-15 relative below z = 40; the same numbers whatever the regions
    the caller vouches for."""
    psi = t - _with_piece_ends(np.linspace(-60.0, 60.0, 4001))
    z = t - psi  # as the row computes it
    want = log_ndtr(z)
    arg = -0.5 * z * z - 0.5 * np.log(2 * np.pi) - 5.0 - want
    n_neg, n_far = _regions(z, 0.0, 10.0)
    lc, r = normal_row_array(t, psi, n_neg, n_far)
    assert np.all(np.isnan(lc[n_far:]))
    err = np.abs(lc[:n_far] - want[:n_far])
    assert np.max(err[n_neg:]) < 1e-15
    assert np.max(err / np.maximum(np.abs(want[:n_far]), 1.0)) < 2e-15
    big = np.exp(arg) > 1e-300
    rel = np.abs(r[big] / np.exp(arg[big]) - 1.0)
    # to the rounding of the terms of the argument
    scale = 1.0 + np.abs(arg) + 0.5 * z * z + np.abs(want)
    assert np.all(rel <= 5e-16 * scale[big]), rel.max()
    assert np.all(r[~big] < 1e-290)
    # the general form everywhere gives the same log Phi and ratios
    lc_all, r_all = normal_row_array(t, psi, 0, psi.size)
    assert_allclose(lc_all[:n_far], lc[:n_far], rtol=2e-15, atol=1e-15)
    assert_allclose(r_all[big], r[big], rtol=1e-13)
    # without the ratio: the signed table, right in relative terms
    n_neg, n_under = _regions(z, 0.0, 40.0)
    lc, r = normal_row_array(t, psi, n_neg, n_under, with_ratio=False)
    assert np.all(np.isnan(r))
    err = np.abs(lc[:n_under] - want[:n_under]) / np.maximum(
        np.abs(want[:n_under]), 1.0
    )
    assert err.max() < 2e-15, err.max()
    # beyond 40, what the row drops is -0.0 in double anyway
    assert np.all(want[n_under:] > -1e-300)


@pytest.mark.parametrize("t", [-30.0, 0.0, 0.75, 40.0])
def test_logistic_row_against_numpy(t):
    """``sks_logistic_row`` on scores whose z spans every region (the
    series beyond |z| = 15, one division between): log sigma(z) and
    sigma(-z) to 2e-15 relative, the same whatever the regions (t and
    psi on a grid of 2^-40, so that z = t - psi is exact)."""
    eps = 2.0**-40
    z = np.sort(
        np.concatenate(
            [
                np.arange(-60 * 64, 60 * 64 + 1) / 64.0,
                [-15.0 - eps, -15.0 + eps, 15.0 - eps, 15.0 + eps],
            ]
        )
    )
    psi = t - z
    want_lc = -np.logaddexp(0.0, -z)
    e = np.exp(-np.abs(z))
    want_r = np.where(z < 0, 1.0, e) / (1.0 + e)
    n_lo = int(np.searchsorted(z, -15.0, side="right"))
    n_hi = int(np.searchsorted(z, 15.0))
    for lo, hi in [(n_lo, n_hi), (0, z.size)]:
        lc, r = logistic_row_array(t, psi, lo, hi)
        assert_allclose(lc, want_lc, rtol=2e-15, atol=0)
        assert_allclose(r, want_r, rtol=2e-15, atol=0)


@pytest.mark.parametrize("noise", NOISES)
def test_support_brackets_hold_the_ends(noise):
    """The per-row brackets of the support's ends (``_bracket_ends``,
    Jensen's inequality on log Phi) hold the reference's ends, for rows
    with every spread and with all scores equal."""
    rng = np.random.default_rng(8)
    for K in (2, 9, 300):
        psi = rng.normal(0.0, 1.0, (40, K)) * rng.choice(
            [0.0, 0.3, 3.0, 30.0], (40, 1)
        )
        psi -= psi.max(axis=1, keepdims=True)
        t_lo, t_hi = ref.support(psi, noise)
        a, b, c = quad._bracket_ends(noise, K)
        m = psi.mean(axis=1)
        tol = 1e-7  # the reference's bisection
        assert np.all(t_lo >= m + a - tol) and np.all(t_lo <= a + tol)
        assert np.all(t_hi >= np.maximum(b, m + c) - tol)
        assert np.all(t_hi <= c + tol)


def test_vectorised_log_sigmoid_against_numpy():
    t = 0.7
    psi = np.concatenate(
        [-np.geomspace(1e-3, 1e3, 5001), np.geomspace(1e-3, 1e3, 5001), [0.0]]
    )
    want = -np.logaddexp(0.0, -(t - psi))
    got = log_sigmoid_row_array(t, psi)
    # relative, down to the vectorised exp's underflow (0 below e^-708)
    assert_allclose(got, want, rtol=2e-15, atol=1e-300)
    assert log_sigmoid_row_array(t, [-np.inf]).tolist() == [0.0]


@pytest.mark.parametrize("Est", [ARProbitClassifier, ARLogisticClassifier])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_estimators_evaluate_through_the_kernel(Est, dtype):
    """predict_proba, predict_log_proba and log_loss of the two noise
    models: the reference's eq. 5 on the model's own scores, to rounding;
    the same numbers on one thread and two."""
    X, y = make_softmax_classification(
        n_samples=300, n_features=20, n_classes=9, random_state=0
    )
    X = X.astype(dtype)
    est = Est(max_iter=3, tol=None, random_state=0).fit(X, y)
    scores = est.decision_function(X[:40]).astype(np.float64)
    want = ref.noise_log_proba(scores, est._noise)
    logp = est.predict_log_proba(X[:40])
    assert logp.dtype == dtype
    rtol = 1e-12 if dtype == np.float64 else 1e-6
    _assert_log_proba_close(logp.astype(np.float64), want, rtol)
    est2 = Est(**{**est.get_params(), "n_jobs": 2})
    for attr in ("coef_", "intercept_", "classes_", "n_features_in_"):
        setattr(est2, attr, getattr(est, attr))
    assert_array_equal(est2.predict_proba(X[:40]), est.predict_proba(X[:40]))
    assert est2.log_loss(X, y) == est.log_loss(X, y)
    nll = -want[np.arange(40), np.searchsorted(est.classes_, y[:40])]
    assert est.log_loss(X[:40], y[:40]) == pytest.approx(
        nll.mean(), rel=rtol
    )


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="noise"):
        noise_log_proba(np.zeros((2, 3)), "cauchy")
    with pytest.raises(ValueError, match="NaN or infinite"):
        noise_log_proba(np.array([[0.0, np.inf]]), "normal")
    with pytest.raises(ValueError, match="n_nodes"):
        noise_log_proba(np.zeros((2, 3)), "normal", n_nodes=0)
    with pytest.raises(ValueError, match="panel_width"):
        noise_log_proba(np.zeros((2, 3)), "normal", panel_width=0.0)
    # the caller's array is not touched; no rows, one class
    psi = np.array([[1.0, 2.0, 3.0]])
    noise_log_proba(psi, "normal")
    assert_array_equal(psi, [[1.0, 2.0, 3.0]])
    assert noise_log_proba(np.empty((0, 4)), "normal").shape == (0, 4)
    assert_array_equal(noise_log_proba(np.ones((3, 1)), "logistic"), 0.0)
