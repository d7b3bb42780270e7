"""sksoftmax.datasets: the papers' protocol and the planted generator."""

import gzip

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import logsumexp

from sksoftmax.datasets import (
    load_bibtex,
    load_svmlight_first_label,
    make_softmax_classification,
    shared_data_dir,
)


def test_protocol_on_a_small_file(tmp_path):
    path = tmp_path / "tiny.svm"
    path.write_text(
        "3,5 0:1 2:3\n"  # first label 3
        " 1:1\n"  # no label: dropped
        "2,4 \n"  # no feature: dropped
        "4 1:0\n"  # only an explicit zero: dropped
        "1 0:1 1:2\n"
    )
    X, y = load_svmlight_first_label(path, n_features=3)
    assert_array_equal(y, [3, 1])
    assert_array_equal(X.toarray(), [[1, 0, 3], [1, 2, 0]])
    assert X.indices.dtype == np.int32 and X.has_canonical_format
    Xn, _ = load_svmlight_first_label(
        path, n_features=3, normalize=True, dtype=np.float32
    )
    assert Xn.dtype == np.float32
    assert_allclose(sp.linalg.norm(Xn, axis=1), 1.0, rtol=1e-6)


@pytest.fixture(scope="module")
def bibtex_dir():
    d = shared_data_dir()
    if d is None or not (d / "bibtex_train.svm.gz").is_file():
        pytest.skip("../shared/data is absent")
    return d


def test_bibtex_protocol(bibtex_dir):
    X, y, Xt, yt = load_bibtex(normalize=True)
    assert X.shape[1] == Xt.shape[1] == 1836
    assert X.shape[0] <= 4880 and Xt.shape[0] <= 2515
    assert np.unique(y).shape[0] == 146
    assert_allclose(sp.linalg.norm(X, axis=1), 1.0, rtol=1e-12)
    assert (np.diff(X.indptr) > 0).all()
    # compare the first rows with a hand parse of the raw file
    with gzip.open(bibtex_dir / "bibtex_train.svm.gz", "rt") as f:
        raw = [f.readline() for _ in range(40)]
    kept = [
        line for line in raw if line.split(" ")[0] and len(line.split()) > 1
    ]
    Xr, yr, _, _ = load_bibtex(normalize=False)
    for i, line in enumerate(kept[:20]):
        head, *feats = line.split()
        assert yr[i] == min(int(v) for v in head.split(","))
        cols = sorted(int(f.split(":")[0]) for f in feats)
        assert_array_equal(Xr[i].indices, cols)


def test_generator_shapes_and_reproducibility():
    X, y = make_softmax_classification(
        500, 300, 40, density=0.05, random_state=3, dtype=np.float32
    )
    assert X.shape == (500, 300) and X.dtype == np.float32
    assert y.dtype == np.int64 and y.min() >= 0 and y.max() < 40
    assert X.has_canonical_format and X.indices.dtype == np.int32
    assert (np.diff(X.indptr) > 0).all()
    assert abs(X.sum() / 500 - 15) < 1.5  # ~ density * n_features
    X2, y2 = make_softmax_classification(
        500, 300, 40, density=0.05, random_state=3, dtype=np.float32
    )
    assert_array_equal(y, y2)
    assert (X != X2).nnz == 0


def test_planted_posterior_is_the_bayes_posterior():
    K, D, lam, n_inf = 5, 30, 0.4, 3
    X, y, coef, intercept = make_softmax_classification(
        20000,
        D,
        K,
        density=0.2,
        n_informative=n_inf,
        topic_weight=lam,
        class_exponent=1.0,
        random_state=0,
        return_coef=True,
    )
    # the model's own parameters, rebuilt from coef: theta from Bayes' rule
    bg = np.arange(1, D + 1, dtype=float) ** -1.0
    bg /= bg.sum()
    theta = (1 - lam) * bg * np.exp(coef.toarray())
    assert_allclose(theta.sum(axis=1), 1.0, rtol=1e-12)  # proper multinomials
    prior = np.exp(intercept)
    assert_allclose(prior.sum(), 1.0)
    Xd = X.toarray()
    log_joint = np.log(prior) + Xd @ np.log(theta).T
    bayes = np.exp(log_joint - logsumexp(log_joint, axis=1, keepdims=True))
    S = (X @ coef.T).toarray() + intercept
    softmax = np.exp(S - logsumexp(S, axis=1, keepdims=True))
    assert_allclose(softmax, bayes, rtol=1e-10, atol=1e-12)
    # and the labels were drawn from it: calibration of p(y_i | x_i)
    p_obs = softmax[np.arange(len(y)), y]
    assert abs(p_obs.mean() - (softmax**2).sum(axis=1).mean()) < 0.01
    # class frequencies follow the Zipf prior
    assert_allclose(np.bincount(y, minlength=K) / len(y), prior, atol=0.015)


def test_generator_scales_to_a_million_classes():
    X, y, coef, b = make_softmax_classification(
        2000, 5000, 1_000_000, density=0.004, random_state=0, return_coef=True
    )
    assert X.shape == (2000, 5000) and coef.shape == (1_000_000, 5000)
    assert coef.nnz <= 5 * 1_000_000 and b.shape == (1_000_000,)
