"""Persistence: a model saved and loaded with pickle, joblib or skops goes
on training exactly as the uninterrupted model, and the generator cannot be
restored into the all-zero state on which xoshiro256** never leaves zero
(the bounded-integer draw would then spin for ever)."""

import io
import pickle

import joblib
import numpy as np
import pytest
from _estimators import ALL_ESTIMATORS, four_class_problem
from numpy.testing import assert_array_equal

from sksoftmax import (
    UMaxSoftmaxClassifier,
)
from sksoftmax._shared._random import AliasTable, RandomState, _rebuild

# every public estimator with its defaults (the registry's list), and
# U-max with the alias-table sampler
ESTIMATORS = [Est(random_state=0) for Est in ALL_ESTIMATORS] + [
    UMaxSoftmaxClassifier(sampler="frequency", random_state=0),
]


def _pickle(est):
    return pickle.loads(pickle.dumps(est))


def _joblib(est):
    buffer = io.BytesIO()
    joblib.dump(est, buffer)
    buffer.seek(0)
    return joblib.load(buffer)


def _skops(est):
    sio = pytest.importorskip("skops.io")
    data = sio.dumps(est)
    return sio.loads(data, trusted=sio.get_untrusted_types(data=data))


@pytest.fixture(scope="module")
def data():
    return four_class_problem()


@pytest.mark.parametrize("round_trip", [_pickle, _joblib, _skops])
@pytest.mark.parametrize("est", ESTIMATORS, ids=repr)
def test_round_trip_then_partial_fit_matches_uninterrupted(
    data, est, round_trip
):
    X, y = data
    classes = np.unique(y)
    straight = est.__class__(**est.get_params())
    straight.partial_fit(X[:150], y[:150], classes=classes)
    saved = round_trip(straight)
    straight.partial_fit(X[150:], y[150:])
    saved.partial_fit(X[150:], y[150:])
    assert_array_equal(saved.coef_, straight.coef_)
    assert_array_equal(saved.intercept_, straight.intercept_)
    assert_array_equal(saved.predict_proba(X), straight.predict_proba(X))


@pytest.mark.parametrize("round_trip", [_pickle, _joblib, _skops])
def test_round_trip_then_warm_start_fit_matches(data, round_trip):
    X, y = data
    a = UMaxSoftmaxClassifier(
        max_iter=2, tol=None, warm_start=True, random_state=0
    ).fit(X, y)
    b = round_trip(a)
    a.fit(X, y)
    b.fit(X, y)
    assert_array_equal(a.coef_, b.coef_)


@pytest.mark.kernel
def test_generator_state_round_trips_and_continues():
    a = RandomState(7)
    a.randint(100, 13)
    b = RandomState.__new__(RandomState)
    b.__setstate__(a.__getstate__())
    assert_array_equal(a.randint(1000, 50), b.randint(1000, 50))
    # words of 64 bits survive (not cut to 63 or to a float)
    assert all(0 <= w < 2**64 for w in a.__getstate__()["state"])


@pytest.mark.kernel
def test_generator_made_without_init_is_seed_zero():
    """What a loader that skips __init__ gets is a working stream."""
    fresh = RandomState.__new__(RandomState)
    assert_array_equal(fresh.randint(10, 20), RandomState(0).randint(10, 20))


@pytest.mark.kernel
@pytest.mark.parametrize(
    "state, match",
    [
        ({"state": [0, 0, 0, 0]}, "all-zero"),
        ({"state": [1, 2, 3]}, "four 64-bit integers"),
        ({"state": [1, 2, 3, 2**64]}, r"\[0, 2\*\*64\)"),
        ({"state": [1, -2, 3, 4]}, r"\[0, 2\*\*64\)"),
        ({}, "four 64-bit integers"),
        ([1, 2, 3, 4], "four 64-bit integers"),
    ],
)
def test_generator_rejects_bad_states(state, match):
    r = RandomState(3)
    with pytest.raises(ValueError, match=match):
        r.__setstate__(state)
    # the generator is left as it was
    assert_array_equal(r.randint(50, 10), RandomState(3).randint(50, 10))
    with pytest.raises(ValueError, match="all-zero"):
        _rebuild(0, 0, 0, 0)


@pytest.mark.kernel
def test_alias_table_state_round_trips_and_is_checked():
    table = AliasTable([1.0, 2.0, 3.0, 0.0])
    again = AliasTable.__new__(AliasTable)
    again.__setstate__(table.__getstate__())
    assert_array_equal(
        RandomState(1).sample_alias(again, 100),
        RandomState(1).sample_alias(table, 100),
    )
    state = table.__getstate__()
    for key, bad in [
        ("alias", np.array([0, 1, 2, 4])),  # out of range
        ("prob", np.array([0.5, 1.5, 1.0, 0.0])),
        ("q", np.array([0.5, 0.5, 0.5, 0.0])),  # not a distribution
        ("alias", np.array([0, 1, 2])),  # wrong length
    ]:
        with pytest.raises(ValueError, match="AliasTable's state"):
            AliasTable.__new__(AliasTable).__setstate__({**state, key: bad})
