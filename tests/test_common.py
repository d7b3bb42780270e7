"""scikit-learn's estimator checks on every public sksoftmax estimator."""

from _estimators import ALL_ESTIMATORS
from sklearn.utils.estimator_checks import parametrize_with_checks

from sksoftmax import (
    ARSoftmaxClassifier,
    ImplicitSGDClassifier,
    SampledSoftmaxClassifier,
    SCENTClassifier,
    SoftmaxClassifier,
    StochasticBoundClassifier,
    UMaxSoftmaxClassifier,
)

# every public estimator with its defaults (the registry's list), then
# configurations that take other code paths
ESTIMATORS = [Est(random_state=0) for Est in ALL_ESTIMATORS] + [
    # the front door without held-out rows, with a penalty, and a sampled
    # solver behind it
    SoftmaxClassifier(early_stopping=False, alpha=1e-3, random_state=0),
    SoftmaxClassifier(solver="scent", random_state=0),
    UMaxSoftmaxClassifier(alpha=1e-3, fit_intercept=False, random_state=0),
    SampledSoftmaxClassifier(loss="ove", random_state=0),
    SampledSoftmaxClassifier(loss="nce", random_state=0),
    SampledSoftmaxClassifier(loss="importance", random_state=0),
    UMaxSoftmaxClassifier(sampler="frequency", random_state=0),
    ImplicitSGDClassifier(
        n_sampled_classes=2, sampler="frequency", random_state=0
    ),
    SampledSoftmaxClassifier(
        loss="nce", sampler="frequency", sampler_power=0.5, random_state=0
    ),
    # iterate averaging: coef_ the mean, the iterate kept apart
    UMaxSoftmaxClassifier(average=True, alpha=1e-3, random_state=0),
    ImplicitSGDClassifier(average=10, random_state=0),
    SampledSoftmaxClassifier(average=True, random_state=0),
    # per-feature steps: alone, with a penalty (lazy column decay and the
    # end-of-epoch projection), with averaging, with m > 1
    UMaxSoftmaxClassifier(learning_rate="adagrad", random_state=0),
    UMaxSoftmaxClassifier(
        learning_rate="adagrad",
        alpha=1e-3,
        fit_intercept=False,
        random_state=0,
    ),
    UMaxSoftmaxClassifier(
        learning_rate="adagrad", average=True, random_state=0
    ),
    ImplicitSGDClassifier(learning_rate="adagrad", random_state=0),
    ImplicitSGDClassifier(
        learning_rate="adagrad",
        n_sampled_classes=2,
        alpha=1e-3,
        random_state=0,
    ),
    SCENTClassifier(variant="scent", random_state=0),
    SCENTClassifier(
        variant="bsgd",
        negatives="uniform",
        momentum=1.0,
        alpha=1e-3,
        random_state=0,
    ),
    SCENTClassifier(batch_size=8, random_state=0),
    ARSoftmaxClassifier(learning_rate="constant", eta0=0.1, random_state=0),
    StochasticBoundClassifier(
        variant="paper", eta0=0.01, fit_intercept=False, random_state=0
    ),
    StochasticBoundClassifier(
        rank=2, variant="paper", eta0=0.05, random_state=0
    ),
]

# Each entry: check name -> one-line reason it is expected to fail.
_STOCHASTIC = (
    "stochastic solver: a row of weight 2 and the same row twice "
    "are visited in different random orders, so the fits agree "
    "only in expectation (SGDClassifier fails it too)"
)
_HELD_OUT = (
    "the held-out rows are drawn by row: a row of weight 2 and the same "
    "row twice fall differently into held-out and training rows"
)
EXPECTED_FAILED = {
    "check_sample_weight_equivalence_on_dense_data": _STOCHASTIC,
    "check_sample_weight_equivalence_on_sparse_data": _STOCHASTIC,
}


# check_class_weight_classifiers (weights 1000 and 1e-4, noisy blobs
# around the origin, at least 87% of the test rows predicted as class 0):
# the configurations that cannot pass it, by estimator parameters
_CLASS_WEIGHT = "check_class_weight_classifiers"
_CLASS_WEIGHT_FAILS = [
    (
        dict(fit_intercept=False),
        "without intercepts the weighted optimum itself (LogisticRegression("
        "fit_intercept=False, same weights) predicts class 0 on 64% of rows",
    ),
    (
        dict(learning_rate="adagrad", _cls="ImplicitSGDClassifier"),
        "Implicit SGD under 'adagrad' with row weights above 1 moves the "
        "heavy class's intercept down at its large eta0 (also with "
        "sample_weight; at alpha=1e-3 too, over 50+ epochs)",
    ),
    (
        dict(variant="auto", rank="auto", _cls="StochasticBoundClassifier"),
        "the bound's steps stall at weighted objective 1e-2 (optimum 3e-6, "
        "LogisticRegression) when the row weights span a factor 1e7",
    ),
]


def _expected_failed_checks(estimator):
    failed = dict(EXPECTED_FAILED)
    params = estimator.get_params()
    if type(estimator).__name__ == "SoftmaxClassifier" and params.get(
        "solver"
    ) in ("auto", "lbfgs"):
        # the checks' data are small: 'auto' takes the full-batch 'lbfgs',
        # deterministic, for which a row of weight 2 and the row twice give
        # the same fit (must pass) unless held-out rows are drawn
        failed = {
            k: _HELD_OUT for k in EXPECTED_FAILED
        } if params.get("early_stopping") else {}
    for match, reason in _CLASS_WEIGHT_FAILS:
        match = dict(match)
        cls = match.pop("_cls", type(estimator).__name__)
        if cls == type(estimator).__name__ and all(
            params.get(k) == v for k, v in match.items()
        ):
            failed[_CLASS_WEIGHT] = reason
    return failed


@parametrize_with_checks(
    ESTIMATORS, expected_failed_checks=_expected_failed_checks
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
