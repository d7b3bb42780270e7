"""The full-batch solver ('lbfgs', sksoftmax/_full_batch.py): its objective
against a plain NumPy reference, its optimum against scikit-learn's
LogisticRegression, the penalty path and the front door's use of it."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_iris, load_wine
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

from sksoftmax import SoftmaxClassifier
from sksoftmax._full_batch import (
    PATH_RATIO,
    _extrapolate,
    _moments,
    _Problem,
    _vertex,
    lbfgs_fit,
)


def _reference_objective(W, b, X, y, w, pen):
    """sum_i w_i (logsumexp(s_i) - s_iy) + 1/2 sum_j pen_j ||W[:, j]||^2,
    row by row."""
    total = 0.0
    for i in range(X.shape[0]):
        s = W @ X[i] + b
        top = s.max()
        total += w[i] * (top + np.log(np.exp(s - top).sum()) - s[y[i]])
    return total + 0.5 * float(((W * W).sum(axis=0) * pen).sum())


def _problem(X, y, w, K, pen, fit_intercept=True):
    m, var = _moments(X, w, fit_intercept)
    q = np.sqrt(0.1 * var + pen)
    q[~(q > 0)] = 1.0
    return _Problem(X, y, w, K, pen, m, q, fit_intercept)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_objective_and_gradient_match_the_reference(sparse, fit_intercept):
    rng = np.random.RandomState(0)
    n, D, K = 30, 6, 4
    X = rng.randn(n, D) * rng.lognormal(0, 1, D)
    X[rng.rand(n, D) < 0.4] = 0.0
    y = rng.randint(K, size=n)
    w = rng.rand(n)
    w /= w.sum()
    pen = rng.rand(D)
    Xin = sp.csr_matrix(X) if sparse else X
    problem = _problem(Xin, y, w, K, pen, fit_intercept)
    W = rng.randn(K, D) * 0.3
    b = rng.randn(K) if fit_intercept else np.zeros(K)
    u = problem.to_u(W, b)
    W2, b2 = problem.from_u(u)
    np.testing.assert_allclose(W2, W, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(b2, b, rtol=1e-12, atol=1e-12)
    loss, grad = problem(u)
    assert loss == pytest.approx(
        _reference_objective(W, b, X, y, w, pen), rel=1e-10)
    # the gradient in u: central differences of the reference objective
    eps = 1e-6
    numeric = np.empty_like(u)
    for k in range(u.shape[0]):
        up, down = u.copy(), u.copy()
        up[k] += eps
        down[k] -= eps
        numeric[k] = (
            _reference_objective(*problem.from_u(up), X, y, w, pen)
            - _reference_objective(*problem.from_u(down), X, y, w, pen)
        ) / (2 * eps)
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-8)


def test_optimum_is_logistic_regressions():
    """At pen = 1 / (C n) on every feature, the minimiser is
    LogisticRegression(C)'s (the same objective), also from unscaled
    features."""
    X, y = load_wine(return_X_y=True)
    n, D = X.shape
    C = 1.0
    ref = LogisticRegression(C=C, tol=1e-10, max_iter=100_000).fit(
        (X - X.mean(0)) / X.std(0), y)
    # the same problem in unscaled coordinates: W = W_std / s, so the
    # penalty on W_std is the penalty s_j^2 on W
    s = X.std(0)
    pen = 1.0 / (C * n) * s**2
    w = np.full(n, 1.0 / n)
    W, b, n_iter, ok = lbfgs_fit(
        X, y, w, 3, pen, np.zeros((3, D)), np.zeros(3),
        fit_intercept=True, tol=1e-10, max_iter=10_000)
    assert ok
    np.testing.assert_allclose(W * s, ref.coef_, atol=2e-4)
    proba_ref = ref.predict_proba((X - X.mean(0)) / X.std(0))
    S = X @ W.T + b
    P = np.exp(S - S.max(1, keepdims=True))
    P /= P.sum(1, keepdims=True)
    np.testing.assert_allclose(P, proba_ref, atol=5e-5)


def test_front_door_takes_lbfgs_for_small_dense_problems():
    X, y = load_iris(return_X_y=True)
    clf = SoftmaxClassifier(random_state=0).fit(X, y)
    assert clf.solver_ == "lbfgs"
    assert clf.alpha_.shape == (X.shape[1],) and np.all(clf.alpha_ > 0)
    # the same rows as CSR: the same solver and, to L-BFGS's tolerance,
    # the same model
    sparse = SoftmaxClassifier(random_state=0).fit(sp.csr_matrix(X), y)
    assert sparse.solver_ == "lbfgs"
    np.testing.assert_allclose(
        sparse.predict_proba(X), clf.predict_proba(X), atol=1e-3)
    # too many multiply-adds for the path: the stochastic exact solver
    rng = np.random.RandomState(0)
    big = sp.random(3000, 200, density=0.5, random_state=rng, format="csr")
    clf = SoftmaxClassifier(random_state=0, max_iter=1).fit(
        big, rng.randint(50, size=3000))
    assert clf.solver_ == "exact"
    # a stream: one pass a call, never 'lbfgs'
    clf = SoftmaxClassifier(random_state=0).partial_fit(
        X, y, classes=np.unique(y))
    assert clf.solver_ == "exact"


def test_partial_fit_with_lbfgs_is_refused_and_continues_a_fit():
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="partial_fit needs a stochastic"):
        SoftmaxClassifier(solver="lbfgs").partial_fit(
            X, y, classes=np.unique(y))
    clf = SoftmaxClassifier(solver="lbfgs", random_state=0).fit(X, y)
    before = clf.coef_.copy()
    clf.partial_fit(X[:20], y[:20])
    assert np.all(np.isfinite(clf.coef_))
    assert not np.array_equal(before, clf.coef_)


def test_penalty_path_beats_the_class_prior_on_separable_rows():
    """Iris's held-out folds are nearly separable: the path must still
    stop at a finite penalty and a model far better than the prior."""
    X, y = load_iris(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(
        X, y, test_size=0.25, stratify=y, random_state=0)
    clf = SoftmaxClassifier(random_state=0).fit(Xtr, ytr)
    assert np.all(np.isfinite(clf.coef_))
    assert clf.log_loss(Xte, yte) < 0.1 * np.log(3)
    assert clf.validation_loss_ and min(clf.validation_loss_) < 0.2


def test_unscaled_features_reach_the_scaled_fit():
    """The penalty path chooses the profile and the penalty from held-out
    rows: multiplying features by constants changes the test loss little
    (wine: a feature in the thousands beside ones below 1)."""
    X, y = load_wine(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(
        X, y, test_size=0.25, stratify=y, random_state=0)
    s = Xtr.std(0)
    raw = SoftmaxClassifier(random_state=0).fit(Xtr, ytr)
    scaled = SoftmaxClassifier(random_state=0).fit(Xtr / s, ytr)
    assert raw.log_loss(Xte, yte) < 0.2
    assert scaled.log_loss(Xte / s, yte) < 0.2


def test_integer_weights_are_repeated_rows_without_a_path():
    rng = np.random.RandomState(0)
    X = rng.randn(40, 5)
    y = rng.randint(3, size=40)
    sw = rng.randint(1, 4, size=40)
    kw = dict(solver="lbfgs", early_stopping=False, alpha=0.01, tol=1e-10,
              max_iter=5000)
    a = SoftmaxClassifier(**kw).fit(X, y, sample_weight=sw)
    b = SoftmaxClassifier(**kw).fit(np.repeat(X, sw, 0), np.repeat(y, sw))
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-6)
    np.testing.assert_allclose(a.intercept_, b.intercept_, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtype_and_no_intercept(dtype):
    X, y = load_iris(return_X_y=True)
    X = X.astype(dtype)
    clf = SoftmaxClassifier(solver="lbfgs", fit_intercept=False,
                            random_state=0).fit(X, y)
    assert clf.coef_.dtype == dtype
    np.testing.assert_array_equal(clf.intercept_, 0)
    assert clf.score(X, y) > 0.9


def test_warm_start_refits_at_the_kept_penalty():
    """A warm fit skips the path: one fit at the previous ``alpha_`` from
    the previous model, which is already its optimum."""
    X, y = load_wine(return_X_y=True)
    clf = SoftmaxClassifier(random_state=0, warm_start=True).fit(X, y)
    penalty, coef = clf.alpha_.copy(), clf.coef_.copy()
    clf.fit(X, y)
    np.testing.assert_array_equal(clf.alpha_, penalty)
    assert clf.n_iter_ <= 5
    np.testing.assert_allclose(clf.coef_, coef, rtol=1e-3, atol=1e-4)


def test_no_penalty_on_separable_rows_stays_finite():
    """Without a penalty the separable optimum is at infinity: L-BFGS
    stops once the gradient is below ``tol`` (or at ``max_iter``, with a
    ConvergenceWarning), with finite weights that separate the rows."""
    X, y = load_iris(return_X_y=True)
    keep = y < 2  # linearly separable
    clf = SoftmaxClassifier(solver="lbfgs", early_stopping=False,
                            max_iter=20)
    clf.fit(X[keep], y[keep])
    assert np.all(np.isfinite(clf.coef_))
    assert clf.score(X[keep], y[keep]) == 1.0
    assert np.all(clf.alpha_ == 0.0)


def test_blas_runs_on_n_jobs_threads(monkeypatch):
    """The path's small products run on n_jobs BLAS threads (one by
    default): OpenBLAS's own threads spinning on them cost several times
    the CPU."""
    from threadpoolctl import threadpool_info

    from sksoftmax._full_batch import FullBatchSolver

    seen = []
    fit = FullBatchSolver._fit

    def spy(self, *args, **kwargs):
        seen.extend(
            info["num_threads"] for info in threadpool_info()
            if info["user_api"] == "blas"
        )
        return fit(self, *args, **kwargs)

    monkeypatch.setattr(FullBatchSolver, "_fit", spy)
    X, y = load_iris(return_X_y=True)
    SoftmaxClassifier(random_state=0, validation_fraction=0.5).fit(X, y)
    assert seen and set(seen) == {1}


def test_vertex_is_the_parabolas_minimum_within_half_a_step():
    # held-out losses on an exact parabola in log lam, minimum at x0
    lams = [1.0 / PATH_RATIO**i for i in range(6)]
    for x0 in (np.log(lams[2]) + 0.3, np.log(lams[3]) - 0.2):
        trail = [(lam, 0.7 + (np.log(lam) - x0) ** 2) for lam in lams]
        best = min(trail, key=lambda t: t[1])[0]
        assert _vertex(trail, best) == pytest.approx(np.exp(x0), rel=1e-9)
    # a neighbour (almost) as low as the best: half-way between them
    trail = [(lams[0], 1.0), (lams[1], 0.5), (lams[2], 0.5 + 1e-9)]
    half = np.sqrt(PATH_RATIO)
    assert _vertex(trail, lams[1]) == pytest.approx(lams[1] / half)
    # at an end of the path, or where the points do not curve upwards,
    # the best point itself
    assert _vertex(trail[:2], lams[1]) == lams[1]
    flat = [(lams[0], 1.0), (lams[1], 0.5), (lams[2], 0.0)]
    assert _vertex(flat, lams[1]) == lams[1]


def test_extrapolated_start_is_nearer_the_next_solution():
    """The path's warm start, the last two solutions extrapolated, is
    nearer the next penalty's optimum than the last solution is."""
    X, y = load_wine(return_X_y=True)
    n, K = X.shape[0], 3
    w = np.full(n, 1.0 / n)
    var = X.var(axis=0)
    sols = []
    for lam in (1e-2, 1e-2 / PATH_RATIO, 1e-2 / PATH_RATIO**2):
        W, b, _, ok = lbfgs_fit(
            X, y, w, K, lam * var, np.zeros((K, X.shape[1])), np.zeros(K),
            fit_intercept=True, tol=1e-10, max_iter=5000)
        sols.append((W, b))
    start = _extrapolate(sols[1], sols[0])
    assert _extrapolate(sols[1], None) is sols[1]

    def gap(a):
        return np.sqrt(sum(np.sum((u - v) ** 2) for u, v in zip(a, sols[2])))

    assert gap(start) < 0.5 * gap(sols[1])


def test_a_constant_column_has_zero_variance_dense_or_sparse():
    """sq - mean^2 rounds to +-1e-16 for a constant column, by the order
    of the sums; a positive rounding left the column unpenalised under
    the 'std' profile on sparse rows only."""
    rng = np.random.RandomState(0)
    X = rng.randint(1, 17, size=(160, 5)) / 8.0
    X *= rng.rand(160, 5) < 0.4
    X[:, 0] = 1.0
    w = rng.uniform(0.5, 2.0, 160)
    w /= w.sum()
    for Xin in (X, sp.csr_matrix(X)):
        mean, var = _moments(Xin, w, True)
        assert var[0] == 0.0 and np.all(var[1:] > 0)
        assert mean[0] == pytest.approx(1.0)
