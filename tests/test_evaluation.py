"""Exact evaluation (_evaluation.pyx.tp) against a NumPy reference.

Every estimator's decision_function, predict, predict_proba,
predict_log_proba, predict_topk, score_topk and log_loss go through the
same kernels; here they are checked on a model whose coef_ and intercept_
are set by hand (dense and CSR rows, float32 and float64, extreme scores,
blocks smaller than a row, one thread and two).
"""

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import logsumexp
from sklearn import config_context
from sklearn.metrics import top_k_accuracy_score

from sksoftmax import ARProbitClassifier, UMaxSoftmaxClassifier
from sksoftmax._shared._special import exp_nonpos_array as exp_nonpos

pytestmark = pytest.mark.kernel


def _model(W, b, cls=UMaxSoftmaxClassifier, **params):
    """An estimator holding W, b as if fitted (the kernels only read these)."""
    est = cls(**params)
    est.coef_ = np.ascontiguousarray(W)
    est.intercept_ = np.ascontiguousarray(b)
    est.classes_ = np.arange(W.shape[0]) * 3 + 1  # labels != indices
    est.n_features_in_ = W.shape[1]
    return est


def _problem(dtype, n=60, d=30, k=17, density=0.3, scale=1.0, seed=0):
    rng = np.random.RandomState(seed)
    X = sp.random(n, d, density=density, random_state=rng, format="csr")
    X.data = rng.randn(X.nnz)
    X = X.astype(dtype).tolil()
    X[3] = 0  # a row without nonzeros
    X = X.tocsr()
    X.eliminate_zeros()
    W = (scale * rng.randn(k, d)).astype(dtype)
    b = rng.randn(k).astype(dtype)
    y = rng.randint(k, size=n)
    return X, W, b, y


def _reference(X, W, b):
    """Scores and log-probabilities in float64 NumPy / SciPy."""
    S = np.asarray(X.astype(np.float64) @ W.T.astype(np.float64)) + b
    return S, S - logsumexp(S, axis=1, keepdims=True)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("sparse", [True, False])
@pytest.mark.parametrize("n_jobs", [None, 2])
@pytest.mark.parametrize("memory", [None, 1e-5])
def test_every_output_matches_numpy(dtype, sparse, n_jobs, memory):
    X, W, b, y = _problem(dtype)
    S, logp = _reference(X, W, b)
    est = _model(W, b, n_jobs=n_jobs)
    Xin = X if sparse else X.toarray()
    # 1e-5 MiB: fewer columns than one row uses, and one row per block
    rtol = 1e-12 if dtype == np.float64 else 2e-5
    with config_context(working_memory=memory or 1024):
        assert_allclose(est.decision_function(Xin), S, rtol=rtol, atol=rtol)
        assert_allclose(est.predict_log_proba(Xin), logp, rtol=rtol)
        P = est.predict_proba(Xin)
        assert P.dtype == dtype
        assert_allclose(P, np.exp(logp), rtol=rtol, atol=1e-300)
        assert_allclose(P.sum(1), 1.0, rtol=rtol)
        assert_array_equal(est.predict(Xin), est.classes_[S.argmax(1)])
        nll = -logp[np.arange(len(y)), y]
        labels = est.classes_[y]
        assert est.log_loss(Xin, labels) == pytest.approx(nll.mean(), rtol)
        sw = np.linspace(0.0, 2.0, len(y))
        assert est.log_loss(Xin, labels, sample_weight=sw) == pytest.approx(
            nll @ sw / sw.sum(), rtol
        )
        top, p_top = est.predict_topk(Xin, k=4)
        # sparse rows: the class-block kernel, to rounding of predict_proba
        order = np.argsort(-S, axis=1, kind="stable")[:, :4]
        assert_array_equal(top, est.classes_[order])
        assert_allclose(
            p_top, np.take_along_axis(P, order, axis=1), rtol=rtol
        )


@pytest.mark.parametrize("sparse", [True, False])
def test_threads_give_bitwise_the_same_results(sparse):
    X, W, b, y = _problem(np.float64, n=700, k=40)
    Xin = X if sparse else X.toarray()
    one, two = _model(W, b), _model(W, b, n_jobs=2)
    for method in ("decision_function", "predict_proba", "predict"):
        assert_array_equal(
            getattr(one, method)(Xin), getattr(two, method)(Xin)
        )
    labels = one.classes_[y]
    assert one.log_loss(Xin, labels) == two.log_loss(Xin, labels)
    for a, c in zip(one.predict_topk(Xin, 3), two.predict_topk(Xin, 3)):
        assert_array_equal(a, c)


@pytest.mark.parametrize("scale", [1e2, 1e10, 1e100, 1e300])
def test_extreme_scores_stay_finite_and_exact(scale):
    # gaps of `scale` between the scores: one class takes all the mass
    X, W, b, y = _problem(np.float64, n=20, d=5, k=6, density=1.0)
    X = sp.csr_matrix(np.sign(X.toarray()))
    W = np.sign(W) * scale / 10
    b = np.zeros(6)
    est = _model(W, b)
    S_ref, _ = _reference(X, W, b)
    S = est.decision_function(X)
    assert np.isfinite(S).all()
    assert_allclose(S, S_ref, rtol=1e-12)
    # the reduction against SciPy on the kernel's own scores: at gaps of
    # 1e10 and more, one ulp of a score is a visible change of the tied
    # classes' probabilities, whatever the summation order
    logp = S - logsumexp(S, axis=1, keepdims=True)
    assert_allclose(est.predict_log_proba(X), logp, rtol=1e-12)
    P = est.predict_proba(X)
    assert np.isfinite(P).all()
    assert_allclose(P.sum(1), 1.0)
    # exp(logp) would not do: at a gap of 1e100, lse = max + log 2 rounds
    # to max and two tied classes would get 1 each
    E = np.exp(S - S.max(1, keepdims=True))
    assert_allclose(P, E / E.sum(1, keepdims=True), rtol=1e-12, atol=1e-300)
    nll = -logp[np.arange(len(y)), y]
    loss = est.log_loss(X, est.classes_[y])
    assert loss == pytest.approx(nll.mean(), rel=1e-12)


def test_mixed_dtypes_follow_numpy_result_type():
    X, W, b, y = _problem(np.float32)
    est = _model(W, b)  # float32 model
    X64 = X.astype(np.float64)
    S, logp = _reference(X64, W, b)
    out = est.predict_log_proba(X64)
    assert out.dtype == np.float64
    assert_allclose(out, logp, rtol=1e-12)
    est64 = _model(W.astype(np.float64), b.astype(np.float64))
    out = est64.predict_proba(X)  # float32 rows, float64 model
    assert out.dtype == np.float64
    assert_allclose(out, np.exp(logp), rtol=1e-12)


def test_topk_ties_go_to_the_earlier_class():
    rng = np.random.RandomState(0)
    X = sp.csr_matrix(rng.randn(50, 4))
    W = rng.randn(3, 4)
    W = np.vstack([W, W, W[:1]])  # classes 0 = 3 = 6, 1 = 4, 2 = 5
    est = _model(W, np.zeros(7))
    top, p = est.predict_topk(X, k=7)
    P = est.predict_proba(X)
    order = np.argsort(-P, axis=1, kind="stable")
    assert_array_equal(top, est.classes_[order])
    assert_allclose(p, np.take_along_axis(P, order, axis=1), rtol=1e-12)
    # and the tied classes come in class order
    best = int(np.argmax(X[0] @ W[:3].T))
    first = {0: [0, 3, 6], 1: [1, 4], 2: [2, 5]}[best]
    assert_array_equal(top[0, : len(first)], est.classes_[first])


def test_score_topk_is_top_k_accuracy():
    X, W, b, y = _problem(np.float64, n=200, k=12)
    est = _model(W, b)
    labels = est.classes_[y]
    P = est.predict_proba(X)
    sw = np.linspace(0.5, 1.5, len(y))
    for k in (1, 3, 5):
        expected = top_k_accuracy_score(
            labels, P, k=k, labels=est.classes_, sample_weight=sw
        )
        assert est.score_topk(X, labels, k=k, sample_weight=sw) == (
            pytest.approx(expected)
        )
    assert est.score_topk(X, labels, k=1) == pytest.approx(
        est.score(X, labels)
    )
    # an unknown label is a miss
    assert est.score_topk(X, np.full(len(y), -7), k=3) == 0.0
    with pytest.warns(UserWarning, match="every label"):
        assert est.score_topk(X, labels, k=50) == 1.0


@pytest.mark.parametrize("k", [0, -1, 13])
def test_predict_topk_rejects_bad_k(k):
    X, W, b, y = _problem(np.float64, k=12)
    with pytest.raises(ValueError, match="k"):
        _model(W, b).predict_topk(X, k=k)


@pytest.mark.parametrize("k", [2.0, "3", True])
def test_predict_topk_rejects_non_int_k(k):
    X, W, b, y = _problem(np.float64, k=12)
    with pytest.raises(TypeError, match="k must be an int"):
        _model(W, b).predict_topk(X, k=k)


def test_n_jobs_zero_is_refused_at_predict():
    X, W, b, y = _problem(np.float64)
    with pytest.raises(ValueError, match="n_jobs"):
        _model(W, b, n_jobs=0).predict(X)


def test_noise_model_topk_matches_its_predict_proba():
    # A&R probit: probabilities through the per-block hook (eq. 5)
    X, W, b, y = _problem(np.float64, n=40, k=7)
    est = _model(W, b, cls=ARProbitClassifier)
    P = est.predict_proba(X)
    assert_allclose(P.sum(1), 1.0)
    top, p = est.predict_topk(X, k=3)
    order = np.argsort(-P, axis=1, kind="stable")[:, :3]
    assert_array_equal(top, est.classes_[order])
    assert_array_equal(p, np.take_along_axis(P, order, axis=1))
    assert_array_equal(est.predict(X), est.classes_[P.argmax(1)])


def test_vectorised_exp_is_within_an_ulp_of_libm():
    x = -np.concatenate(
        [np.linspace(0, 708, 200_001), np.geomspace(1e-300, 1, 1000)]
    )
    rel = np.abs(exp_nonpos(x) / np.exp(x) - 1)
    assert rel.max() < 5e-16
    assert exp_nonpos(np.array([-709.0, -1e300, -np.inf])).tolist() == [0] * 3
    assert np.isnan(exp_nonpos(np.array([np.nan]))).all()
