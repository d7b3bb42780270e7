"""class_weight on every estimator (issue 35, item 2).

A class's weight multiplies the sample weights of its rows, and nothing
else: a fit with ``class_weight`` is, bit for bit, the fit with
``sample_weight`` times the weight of each row's class (fit and
partial_fit, n_jobs=1, fixed random_state). 'balanced' is scikit-learn's
``compute_class_weight('balanced', ..., sample_weight=...)``, in
partial_fit over the rows of every call so far.
"""

import warnings

import numpy as np
import pytest
from _estimators import ALL_ESTIMATORS, four_class_problem
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.metrics import recall_score
from sklearn.utils.class_weight import compute_class_weight

from sksoftmax import (
    SCENTClassifier,
    SoftmaxClassifier,
    UMaxSoftmaxClassifier,
)
from sksoftmax._class_weight import class_weight_vector, weigh_stream_rows
from sksoftmax.datasets import make_softmax_classification

ids = [Est.__name__ for Est in ALL_ESTIMATORS]


def _make(Est, **params):
    return Est(random_state=0, n_jobs=1, max_iter=3, tol=None, **params)


def _fit(est, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(*args, **kwargs)


def _partial_fit(est, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.partial_fit(*args, **kwargs)


def _same_model(a, b):
    assert a.coef_.tobytes() == b.coef_.tobytes()
    assert a.intercept_.tobytes() == b.intercept_.tobytes()


@pytest.fixture(scope="module")
def problem():
    X, y = four_class_problem(200)
    labels = np.array(["ant", "bee", "cat", "dog"])[y]
    sw = np.random.RandomState(1).uniform(0.2, 2.0, size=len(y))
    return X, labels, sw


@pytest.mark.parametrize("Est", ALL_ESTIMATORS, ids=ids)
@pytest.mark.parametrize("class_weight", ["dict", "balanced"])
def test_fit_is_the_sample_weighted_fit(Est, class_weight, problem):
    X, y, sw = problem
    classes = np.unique(y)
    if class_weight == "dict":
        # a missing label weighs 1
        class_weight = {"ant": 3.0, "cat": 0.25, "dog": 1.5}
        per_class = np.array([3.0, 1.0, 0.25, 1.5])
    else:
        per_class = compute_class_weight(
            "balanced", classes=classes, y=y, sample_weight=sw
        )
    explicit = per_class[np.searchsorted(classes, y)] * sw
    sw_given = sw.copy()
    a = _fit(_make(Est, class_weight=class_weight), X, y, sample_weight=sw)
    b = _fit(_make(Est), X, y, sample_weight=explicit)
    _same_model(a, b)
    # stored unchanged, the caller's weights untouched
    assert a.class_weight is class_weight
    assert_array_equal(sw, sw_given)
    # and without sample_weight: the class weights alone
    a = _fit(_make(Est, class_weight=class_weight), X, y)
    if class_weight == "balanced":
        per_class = compute_class_weight("balanced", classes=classes, y=y)
    b = _fit(_make(Est), X, y, sample_weight=per_class[np.searchsorted(classes, y)])
    _same_model(a, b)


@pytest.mark.parametrize("Est", ALL_ESTIMATORS, ids=ids)
@pytest.mark.parametrize("class_weight", ["dict", "balanced"])
def test_partial_fit_is_the_sample_weighted_partial_fit(
    Est, class_weight, problem
):
    """Three calls, the first without class 'dog': 'balanced' weighs each
    call's rows by the label weights of every call so far, over the
    classes seen so far. Integer sample weights: their sums are exact in
    any order, so the running total the estimator keeps is
    compute_class_weight's, bit for bit."""
    X, y, _ = problem
    sw = np.random.RandomState(2).randint(1, 4, size=len(y)).astype(float)
    classes = np.unique(y)
    first = np.flatnonzero(y != "dog")[:60]
    rest = np.setdiff1d(np.arange(len(y)), first)
    batches = [first, rest[:70], rest[70:]]
    a = _make(Est, class_weight={"ant": 3.0, "cat": 0.25}
              if class_weight == "dict" else "balanced")  # fmt: skip
    b = _make(Est)
    seen = []
    for rows in batches:
        seen.extend(rows)
        if class_weight == "dict":
            per_class = np.array([3.0, 1.0, 0.25, 1.0])
            weight = per_class[np.searchsorted(classes, y[rows])]
        else:
            so_far = np.unique(y[seen])
            per_class = compute_class_weight(
                "balanced", classes=so_far, y=y[seen], sample_weight=sw[seen]
            )
            weight = per_class[np.searchsorted(so_far, y[rows])]
        _partial_fit(a, X[rows], y[rows], classes=classes, sample_weight=sw[rows])
        _partial_fit(
            b, X[rows], y[rows], classes=classes, sample_weight=weight * sw[rows]
        )
        _same_model(a, b)


def test_balanced_is_compute_class_weight():
    rng = np.random.RandomState(0)
    y = rng.choice(7, size=500, p=[0.4, 0.2, 0.15, 0.1, 0.1, 0.04, 0.01])
    sw = rng.uniform(0.0, 3.0, size=500)
    classes = np.unique(y)
    for weights in (None, sw):
        counts = np.bincount(y, weights=weights, minlength=classes.shape[0])
        assert_array_equal(
            class_weight_vector("balanced", classes, counts),
            compute_class_weight(
                "balanced", classes=classes, y=y, sample_weight=weights
            ),
        )
    # the classes without weight so far: weight 1, and no part in n_classes
    counts = np.array([4.0, 0.0, 2.0, 0.0])
    assert_array_equal(
        class_weight_vector("balanced", np.arange(4), counts),
        [6.0 / (2 * 4.0), 1.0, 6.0 / (2 * 2.0), 1.0],
    )


def test_stream_weights_with_fractional_sample_weights():
    """Any sample weights: the streamed 'balanced' weights are
    compute_class_weight's over the rows so far, to rounding."""
    rng = np.random.RandomState(0)
    y = rng.choice(6, size=900, p=[0.5, 0.2, 0.15, 0.1, 0.04, 0.01])
    sw = rng.uniform(0.0, 3.0, size=900)
    sw[y == 5] = 0.0  # a class whose rows all weigh nothing
    sw[::11] = 0.0

    class Stream:
        classes_ = np.arange(6)
        class_weight = "balanced"

    est = Stream()
    for k, rows in enumerate(np.array_split(np.arange(900), 7)):
        out = weigh_stream_rows(est, y[rows], sw[rows], k == 0)
        live = sw[: rows[-1] + 1] > 0
        so_far = np.unique(y[: rows[-1] + 1][live])
        # the classes seen so far: those with a row of positive weight
        assert est._label_weight_seen[1] == so_far.shape[0]
        per_class = np.ones(6)  # (a class not seen: rows of weight 0)
        per_class[so_far] = compute_class_weight(
            "balanced", classes=so_far, y=y[: rows[-1] + 1][live],
            sample_weight=sw[: rows[-1] + 1][live],
        )
        expected = per_class[y[rows]] * sw[rows]
        assert_allclose(out, expected, rtol=1e-14)


def test_dict_keys_and_label_types():
    # numbers: numpy and Python scalars alike, float keys of integer labels
    classes = np.array([-1, 3, 7])
    assert_array_equal(
        class_weight_vector({np.int64(3): 2.0, 7.0: 0.5}, classes, None),
        [1.0, 2.0, 0.5],
    )
    # strings, and object labels
    classes = np.array(["a", "b", "c"])
    assert_array_equal(
        class_weight_vector({"c": 4}, classes, None), [1.0, 1.0, 4.0]
    )
    assert_array_equal(
        class_weight_vector({"b": 2}, classes.astype(object), None),
        [1.0, 2.0, 1.0],
    )
    # keys of absent classes are allowed when every class has a key
    # (scikit-learn's rule: one dict for every cross-validation split)
    assert_array_equal(
        class_weight_vector({"a": 1, "b": 2, "c": 3, "z": 9}, classes, None),
        [1.0, 2.0, 3.0],
    )


@pytest.mark.parametrize("Est", ALL_ESTIMATORS, ids=ids)
def test_bad_class_weights_are_refused(Est, problem):
    X, y, _ = problem
    cases = [
        ("balance", "class_weight"),
        (["ant", 2.0], "class_weight"),
        ({"ant": 2.0, "emu": 3.0}, r"not classes: \['emu'\]"),
        ({0: 2.0}, r"not classes: \[0\]"),
        ({"ant": -1.0}, "non-negative"),
        ({"ant": np.nan}, "finite"),
        ({"ant": "heavy"}, "must be numbers"),
        ({c: 0.0 for c in np.unique(y)}, "zero weight"),
    ]
    for class_weight, message in cases:
        with pytest.raises(ValueError, match=message):
            _fit(_make(Est, class_weight=class_weight), X, y)
    with pytest.raises(ValueError, match=r"not classes: \['emu'\]"):
        _partial_fit(
            _make(Est, class_weight={"emu": 2.0}), X, y, classes=np.unique(y)
        )


def test_prior_start_and_counts_follow_the_class_weights(problem):
    """The intercepts start at the weighted objective's optimum with W = 0,
    log of the class-weighted frequencies (one pseudo-row of the largest
    row weight, at most the smallest class total, spread over the
    classes), and class_count_, which the
    frequency samplers draw from, holds the class-weighted counts."""
    X, y, sw = problem
    classes, y_enc = np.unique(y, return_inverse=True)
    per_class = np.array([1000.0, 1e-4, 0.25, 1e-3])
    clf = UMaxSoftmaxClassifier(
        class_weight=dict(zip(classes, per_class)),
        sampler="frequency",
        eta0=1e-12,
        max_iter=1,
        tol=None,
        random_state=0,
    )
    _fit(clf, X, y, sample_weight=sw)
    s = per_class[y_enc] * sw
    counts = np.bincount(y_enc, weights=s)
    w = min(s.max(), counts.min())  # the pseudo-row, capped
    assert_allclose(clf.class_count_, counts, rtol=1e-14)
    assert_allclose(
        clf.intercept_,
        np.log((counts + w / 4) / (counts.sum() + w)),
        rtol=1e-7,
        atol=1e-8,  # one epoch of steps of 1e-12
    )
    # within a factor 2 of the weighted optimum with W = 0, log(c_k / C)
    # (a pseudo-row of the largest weight, 2,000, gave the 1e-4 class a
    # prior 2e4 times its optimum)
    assert np.all(np.abs(clf.intercept_ - np.log(counts / counts.sum())) < np.log(2))
    q = (counts + 1.0) / (counts + 1.0).sum()
    assert_allclose(clf._sampler_table().q, q, rtol=1e-12)


@pytest.mark.parametrize("Est", [UMaxSoftmaxClassifier, SCENTClassifier])
def test_auto_step_follows_the_mean_row_weight(Est, problem):
    """A row's step is eta s_i: scaling every weight by c divides the
    'auto' step by c, so the steps themselves do not change."""
    X, y, sw = problem
    a = _fit(Est(max_iter=1, tol=None, random_state=0), X, y, sample_weight=sw)
    b = _fit(
        Est(max_iter=1, tol=None, random_state=0), X, y, sample_weight=8.0 * sw
    )
    assert_allclose(8.0 * b.eta0_, a.eta0_, rtol=1e-12)


def test_balanced_lifts_the_recall_of_rare_classes():
    """The issue's target: a Zipfian 1,000-class set (12,000 training
    rows; the rare half of the classes has at most 4 training rows each):
    class_weight='balanced' gives the rare half of the classes (by
    training count) a mean per-class recall at least that of the
    unweighted model."""
    X, y = make_softmax_classification(
        20000, 2000, 1000, density=0.005, class_exponent=1.0, random_state=0
    )
    X_train, y_train, X_test, y_test = X[:12000], y[:12000], X[12000:], y[12000:]
    seen, counts = np.unique(y_train, return_counts=True)
    rare = seen[np.argsort(counts, kind="stable")[: seen.shape[0] // 2]]
    tested = rare[np.isin(rare, y_test)]
    recalls = {}
    for class_weight in (None, "balanced"):
        clf = SoftmaxClassifier(
            solver="umax", max_iter=10, tol=None, class_weight=class_weight,
            random_state=0,
        )  # fmt: skip
        _fit(clf, X_train, y_train)
        recalls[class_weight] = recall_score(
            y_test, clf.predict(X_test), labels=tested, average="macro",
            zero_division=0,
        )  # fmt: skip
    print(
        f"rare half ({tested.shape[0]} classes with test rows): mean recall "
        f"{recalls[None]:.4f} unweighted, {recalls['balanced']:.4f} balanced"
    )
    assert recalls["balanced"] >= recalls[None]
