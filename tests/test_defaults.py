"""What every estimator does before it is tuned: the class-prior start and
the 'auto' step size."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from sksoftmax import (
    ARSoftmaxClassifier,
    ImplicitSGDClassifier,
    SampledSoftmaxClassifier,
    SCENTClassifier,
    StochasticBoundClassifier,
    UMaxSoftmaxClassifier,
)
from sksoftmax.datasets import make_softmax_classification

# the softmax models: with coef_ = 0 and intercept_ = log prior, each is
# exactly the class-prior model
SOFTMAX_ESTIMATORS = [
    UMaxSoftmaxClassifier,
    ImplicitSGDClassifier,
    SampledSoftmaxClassifier,
    SCENTClassifier,
    ARSoftmaxClassifier,
]


@pytest.fixture(scope="module")
def skewed():
    """Sparse rows, 40 classes with Zipfian frequencies."""
    X, y = make_softmax_classification(
        n_samples=600,
        n_features=50,
        n_classes=40,
        density=0.1,
        class_exponent=1.0,
        random_state=0,
    )
    return X, y


def _prior_log_loss(y, sample_weight=None):
    """Log-loss of the model p_k = (c_k + w/K) / (C + w), w the top weight."""
    classes, y_enc = np.unique(y, return_inverse=True)
    sw = np.ones(len(y)) if sample_weight is None else sample_weight
    counts = np.bincount(y_enc, weights=sw, minlength=len(classes))
    p = (counts + sw.max() / len(classes)) / (counts.sum() + sw.max())
    return float(-(sw * np.log(p[y_enc])).sum() / sw.sum()), np.log(p)


@pytest.mark.parametrize("Est", SOFTMAX_ESTIMATORS)
def test_one_tiny_epoch_is_the_class_prior_model(Est, skewed):
    X, y = skewed
    clf = Est(eta0=1e-12, max_iter=1, tol=None, random_state=0).fit(X, y)
    expected, log_p = _prior_log_loss(y)
    assert_allclose(clf.log_loss(X, y), expected, rtol=1e-6)
    # far better than the uniform start at skewed frequencies
    assert expected < np.log(len(np.unique(y))) - 0.3


def test_prior_start_weighs_rows():
    X, y = make_softmax_classification(
        n_samples=300, n_features=20, n_classes=5, random_state=1
    )
    sw = np.random.RandomState(0).uniform(0.0, 3.0, size=len(y))
    sw[:10] = 0.0
    clf = UMaxSoftmaxClassifier(eta0=1e-12, max_iter=1, tol=None)
    clf.fit(X, y, sample_weight=sw)
    expected, log_p = _prior_log_loss(y, sw)
    assert_allclose(clf.intercept_, log_p, rtol=1e-10)
    assert_allclose(
        clf.class_count_,
        np.bincount(np.unique(y, return_inverse=True)[1], weights=sw),
    )


def test_no_prior_without_intercept(skewed):
    X, y = skewed
    clf = UMaxSoftmaxClassifier(
        eta0=1e-12, max_iter=1, tol=None, fit_intercept=False
    ).fit(X, y)
    assert_allclose(clf.intercept_, 0.0)


def test_partial_fit_prior_from_running_counts():
    rng = np.random.RandomState(0)
    X = rng.rand(40, 3)
    classes = np.arange(4)
    y1 = np.array([0] * 15 + [1] * 5)
    clf = UMaxSoftmaxClassifier(eta0=1e-12)
    clf.partial_fit(X[:20], y1, classes=classes)
    # first call: every class from the first batch's counts; unseen classes
    # share one pseudo-row
    p = (np.array([15, 5, 0, 0]) + 0.25) / 21.0
    assert_allclose(clf.intercept_, np.log(p), rtol=1e-6)
    b_trained = clf.intercept_[:2].copy()
    y2 = np.array([2] * 10 + [0] * 10)
    clf.partial_fit(X[20:], y2, classes=classes)
    # class 2 is new: its prior from the running counts (10 of 40 rows);
    # the trained classes 0 and 1 and the unseen class 3 keep their state
    assert_allclose(clf.intercept_[2], np.log(10.25 / 41.0), rtol=1e-6)
    assert_allclose(clf.intercept_[:2], b_trained, atol=1e-9)
    assert_allclose(clf.intercept_[3], np.log(0.25 / 21.0), atol=1e-9)
    assert_allclose(clf.class_count_, [25, 5, 10, 0])


def test_warm_start_keeps_intercepts(skewed):
    X, y = skewed
    clf = UMaxSoftmaxClassifier(max_iter=2, tol=None, random_state=0)
    clf.fit(X, y)
    b = clf.intercept_.copy()
    clf.set_params(warm_start=True, eta0=1e-12, max_iter=1)
    clf.fit(X, y)
    assert_allclose(clf.intercept_, b, atol=1e-9)


def test_bound_method_starts_at_prior(skewed):
    X, y = skewed
    clf = StochasticBoundClassifier(max_iter=1, tol=None, random_state=0)
    clf.fit(X, y)
    # one pass of the bound method improves on its start, the prior model
    expected, _ = _prior_log_loss(y)
    assert clf.log_loss(X, y) < expected
