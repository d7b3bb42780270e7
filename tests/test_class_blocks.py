"""The class-block kernel (``_shared/_class_blocks.pyx.tp``) behind
``predict_topk``, ``predict``, ``log_loss`` and ``score_topk`` on sparse
rows, against plain NumPy references.

Integer-valued problems make every score exact in float32 and float64
whatever the order of the sums or fused multiply-adds: there the top k
must equal a stable argsort of the NumPy scores bit for bit, ties
included (to the lower class), on any CPU and instruction set. Real-valued
problems are checked to the stated tolerances. Layouts (class-major,
feature-major with spare columns), several chunks of classes, blocks cut
short, row passes and threads must give bitwise the same results.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import logsumexp
from sklearn import config_context

from sksoftmax import UMaxSoftmaxClassifier
from sksoftmax._prediction import CLASS_CHUNK

pytestmark = pytest.mark.kernel


def _model(W, b, layout="C", n_jobs=None, spare=0):
    """An estimator holding W (K, D), b as if fitted, W stored
    class-major ("C") or as the transpose of a (D, K + spare) array."""
    est = UMaxSoftmaxClassifier(n_jobs=n_jobs)
    if layout == "C":
        est.coef_ = np.ascontiguousarray(W)
    else:
        Wt = np.zeros((W.shape[1], W.shape[0] + spare), dtype=W.dtype)
        Wt[:, : W.shape[0]] = W.T
        est.coef_ = Wt[:, : W.shape[0]].T
    est.intercept_ = np.ascontiguousarray(b)
    est.classes_ = np.arange(W.shape[0]) * 2 + 5  # labels != indices
    est.n_features_in_ = W.shape[1]
    return est


def _integer_problem(dtype, n=50, d=40, k=150, nnz=5, seed=0):
    """Small integers: every score exact, many exact ties."""
    rng = np.random.RandomState(seed)
    cols = np.concatenate(
        [np.sort(rng.choice(d, nnz, replace=False)) for _ in range(n)]
    )
    data = rng.randint(-3, 4, size=n * nnz).astype(dtype)
    X = sp.csr_matrix(
        (data, cols, np.arange(0, n * nnz + 1, nnz)), shape=(n, d)
    )
    W = rng.randint(-4, 5, size=(k, d)).astype(dtype)
    b = rng.randint(-2, 3, size=k).astype(dtype)
    y = rng.randint(k, size=n)
    return X, W, b, y


def _reference_topk(S, k):
    """A stable argsort of -S: ties to the lower class."""
    return np.argsort(-S, axis=1, kind="stable")[:, :k]


def _reference_scores(X, W, b):
    return np.asarray(X.astype(np.float64) @ W.T.astype(np.float64)) + b


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["C", "F"])
@pytest.mark.parametrize("k_classes", [3, 64, 150, CLASS_CHUNK + 70])
def test_integer_topk_argmax_nll_equal_numpy_bit_for_bit(
    dtype, layout, k_classes
):
    X, W, b, y = _integer_problem(dtype, k=k_classes, d=8 if k_classes
                                  > 1000 else 40)
    est = _model(W, b, layout, spare=5)
    S = _reference_scores(X, W, b)
    for k in (1, 3, min(7, k_classes)):
        labels, proba = est.predict_topk(X, k=k)
        order = _reference_topk(S, k)
        assert_array_equal(labels, est.classes_[order])
        logp = S - logsumexp(S, axis=1, keepdims=True)
        rtol = 1e-12 if dtype == np.float64 else 1e-5
        assert proba.dtype == dtype
        assert_allclose(
            proba, np.exp(np.take_along_axis(logp, order, axis=1)),
            rtol=rtol, atol=1e-30,
        )
    assert_array_equal(est.predict(X), est.classes_[S.argmax(axis=1)])
    nll = -logp[np.arange(len(y)), y]
    rtol = 1e-12 if dtype == np.float64 else 1e-6
    assert est.log_loss(X, est.classes_[y]) == pytest.approx(
        nll.mean(), rel=rtol
    )
    assert est.score_topk(X, est.classes_[y], k=3) == pytest.approx(
        np.mean(np.any(_reference_topk(S, 3) == y[:, None], axis=1))
    )


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layouts_threads_passes_give_bitwise_the_same_results(dtype):
    X, W, b, y = _integer_problem(dtype, n=300, k=CLASS_CHUNK + 130, d=30)
    # real-valued: the sums round, so only the order of operations makes
    # the results equal
    rng = np.random.RandomState(1)
    X.data = (X.data + rng.rand(X.nnz)).astype(dtype)
    W = (W + rng.rand(*W.shape)).astype(dtype)
    ref = None
    for layout in ("C", "F"):
        for n_jobs in (None, 2):
            for memory in (None, 0.05):
                est = _model(W, b, layout, n_jobs=n_jobs, spare=3)
                with config_context(working_memory=memory or 1024):
                    got = (
                        *est.predict_topk(X, k=4),
                        est.predict(X),
                        est.log_loss(X, est.classes_[y]),
                        est._evaluate(X, "stats", y_enc=y)[0],
                    )
                if ref is None:
                    ref = got
                for a, c in zip(got, ref):
                    assert_array_equal(a, c)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_real_valued_scores_match_numpy_to_tolerance(dtype):
    rng = np.random.RandomState(3)
    n, d, k = 80, 50, 700
    X = sp.random(n, d, density=0.15, random_state=rng, format="csr")
    X.data = rng.randn(X.nnz)
    X = X.astype(dtype)
    W = (2 * rng.randn(k, d)).astype(dtype)
    b = rng.randn(k).astype(dtype)
    y = rng.randint(k, size=n)
    S = _reference_scores(X, W, b)
    srt = -np.sort(-S, axis=1)
    # the precondition of comparing indices: no near-tie among the top 6
    assert np.diff(srt[:, :6], axis=1).min() < -1e-3
    logp = S - logsumexp(S, axis=1, keepdims=True)
    rtol = 1e-12 if dtype == np.float64 else 2e-5
    for layout in ("C", "F"):
        est = _model(W, b, layout)
        labels, proba = est.predict_topk(X, k=5)
        order = _reference_topk(S, 5)
        assert_array_equal(labels, est.classes_[order])
        assert_allclose(
            proba, np.exp(np.take_along_axis(logp, order, axis=1)), rtol=rtol
        )
        nll = -logp[np.arange(n), y]
        assert est.log_loss(X, est.classes_[y]) == pytest.approx(
            nll.mean(), rel=rtol
        )
        stats, arg = est._evaluate(X, "stats", y_enc=y)
        assert_array_equal(arg, S.argmax(axis=1))
        assert_allclose(stats[:, 0], S.max(axis=1), rtol=rtol)
        assert_allclose(
            stats[:, 0] + np.log(stats[:, 1]), logsumexp(S, axis=1),
            rtol=rtol,
        )
        assert_allclose(stats[:, 2], S[np.arange(n), y], rtol=rtol,
                        atol=rtol)


def test_rows_without_nonzeros_and_empty_input():
    X, W, b, y = _integer_problem(np.float64, n=6, k=80)
    X = X.tolil()
    X[2] = 0
    X = X.tocsr()
    X.eliminate_zeros()
    est = _model(W, b)
    labels, proba = est.predict_topk(X, k=4)
    # an empty row scores the intercepts alone
    order = _reference_topk(b[None, :], 4)[0]
    assert_array_equal(labels[2], est.classes_[order])
    with pytest.raises(ValueError, match="0 sample"):
        est.predict_topk(X[:0], k=2)


def test_extreme_and_non_finite_scores():
    # a score of +-1e300 (float64): the others' exps underflow to 0
    W = np.zeros((70, 3))
    W[5, 0] = 1e300
    W[6, 0] = -1e300
    est = _model(W, np.zeros(70))
    X = sp.csr_matrix(np.array([[1.0, 0, 0], [0, 1.0, 0]]))
    labels, proba = est.predict_topk(X, k=2)
    assert labels[0, 0] == est.classes_[5] and proba[0, 0] == 1.0
    assert proba[0, 1] == 0.0
    # a row of equal scores: the first k classes, 1/K each
    assert_array_equal(labels[1], est.classes_[:2])
    assert_allclose(proba[1], 1 / 70)
    # -inf intercepts: those classes have probability 0, the rest rank
    b = np.zeros(70)
    b[:60] = -np.inf
    est = _model(np.zeros((70, 3)), b)
    labels, proba = est.predict_topk(X, k=12)
    assert_array_equal(labels[0, :10], est.classes_[60:])
    assert_allclose(proba[0, :10], 0.1)
    assert_array_equal(labels[0, 10:], est.classes_[:2])
    assert_array_equal(proba[0, 10:], 0.0)


@pytest.mark.parametrize("k", [0, 13, 2.0, None])
def test_bad_k_and_bad_input_are_refused(k):
    X, W, b, y = _integer_problem(np.float64, k=12)
    est = _model(W, b)
    with pytest.raises((ValueError, TypeError), match="k"):
        est.predict_topk(X, k=k)
    with pytest.raises(ValueError, match="features"):
        est.predict_topk(X[:, :-1], k=2)
    bad = X.copy()
    bad.data[0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        est.predict_topk(bad, k=2)
    with pytest.raises(ValueError, match="not in classes_"):
        est.log_loss(X, np.full(X.shape[0], -1))
