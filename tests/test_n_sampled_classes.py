"""One rule for n_sampled_classes in every estimator: samplers that draw
distinct classes lower a value above the classes they can draw to that
number, with a UserWarning, and the fit is then the same as with that
number; samplers that draw with replacement use any value as given."""

import warnings

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning

from sksoftmax import (
    ARLogisticClassifier,
    ARProbitClassifier,
    ARSoftmaxClassifier,
    ImplicitSGDClassifier,
    SampledSoftmaxClassifier,
    SCENTClassifier,
    StochasticBoundClassifier,
    UMaxSoftmaxClassifier,
)

K = 4
# (estimator, the most distinct classes a step can draw, or None: draws
# with replacement)
CASES = [
    (UMaxSoftmaxClassifier(), None),
    (UMaxSoftmaxClassifier(sampler="frequency"), None),
    (ImplicitSGDClassifier(sampler="uniform"), K - 1),
    (ImplicitSGDClassifier(sampler="frequency"), None),
    (SampledSoftmaxClassifier(), K),  # shared by the minibatch, from all K
    (SampledSoftmaxClassifier(loss="nce", sampler="frequency"), None),
    (ARSoftmaxClassifier(), K - 1),
    (ARProbitClassifier(), K - 1),
    (ARLogisticClassifier(), K - 1),
]


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(
        n_samples=200,
        n_features=6,
        n_informative=4,
        n_classes=K,
        random_state=0,
    )
    return X, y


def _make(est, m):
    return est.__class__(**est.get_params()).set_params(
        n_sampled_classes=m, max_iter=3, tol=None, random_state=0
    )


@pytest.mark.parametrize("est, limit", CASES, ids=lambda c: repr(c))
def test_one_rule_for_n_sampled_classes(data, est, limit):
    X, y = data
    m = 10
    if limit is None:
        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)
            # (a subclass of UserWarning; not what this test is about)
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf = _make(est, m).fit(X, y)
        assert clf.n_sampled_classes_ == m
        return
    with pytest.warns(
        UserWarning,
        match=f"n_sampled_classes={m} is more than the {limit} classes",
    ):
        clf = _make(est, m).fit(X, y)
    assert clf.n_sampled_classes_ == limit
    # the same model as asking for the limit itself, which does not warn
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        warnings.simplefilter("ignore", ConvergenceWarning)
        ref = _make(est, limit).fit(X, y)
    assert ref.n_sampled_classes_ == limit
    assert_array_equal(clf.coef_, ref.coef_)
    assert_array_equal(clf.intercept_, ref.intercept_)
    assert np.all(np.isfinite(clf.predict_proba(X)))
    # partial_fit follows the same rule
    with pytest.warns(UserWarning, match="n_sampled_classes"):
        _make(est, m).partial_fit(X, y, classes=np.unique(y))


@pytest.mark.parametrize("Est", [SCENTClassifier, StochasticBoundClassifier])
def test_estimators_without_class_sampling_have_no_such_parameter(Est):
    """SCENT's negatives come from the minibatch (or ``batch_size`` uniform
    draws) and the bound method sums over all classes: no n_sampled_classes
    to follow the rule."""
    assert "n_sampled_classes" not in Est().get_params()
