"""Extreme and degenerate inputs, for every estimator: each gives a clear
error (ValueError, TypeError or DivergenceError, with a message) or a
finite model whose predict_proba rows sum to one; none modifies its input
(issue 15, item 6: the fuzz cases as tests)."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _estimators import ALL_ESTIMATORS as ALL

from sksoftmax.exceptions import DivergenceError


def _base(n=60, d=5, k=3, seed=0):
    rng = np.random.RandomState(seed)
    return rng.randn(n, d), np.arange(n) % k


def _case(name):
    X, y = _base()
    w = None
    if name == "huge_features":
        X = X * 1e150
    elif name == "tiny_features":
        X = X * 1e-300
    elif name == "zero_features":
        X = np.zeros_like(X)
    elif name == "constant_features":
        X = np.ones_like(X)
    elif name == "one_row_per_class":
        X, y = X[:3], y[:3]
    elif name == "huge_weights":
        w = np.full(len(y), 1e300)
    elif name == "tiny_weights":
        w = np.full(len(y), 1e-300)
    elif name == "mixed_weights":
        w = np.where(np.arange(len(y)) % 2 == 0, 1e-8, 1e8)
    elif name == "float32_large":
        X = (X * 1e30).astype(np.float32)
    elif name == "sparse_empty_rows":
        X = sp.csr_matrix(np.where(np.arange(len(y))[:, None] % 2 == 0, X, 0))
    elif name == "many_classes_few_rows":
        X, y = _base(n=40, k=40)
    elif name == "string_labels":
        y = np.array(["a", "b", "c"])[y]
    elif name == "duplicate_rows":
        X = np.repeat(X[:1], len(y), axis=0)
    return X, y, w


CASES = [
    "huge_features",
    "tiny_features",
    "zero_features",
    "constant_features",
    "one_row_per_class",
    "huge_weights",
    "tiny_weights",
    "mixed_weights",
    "float32_large",
    "sparse_empty_rows",
    "many_classes_few_rows",
    "string_labels",
    "duplicate_rows",
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("Est", ALL)
def test_extreme_inputs_error_clearly_or_fit_finitely(Est, case):
    X, y, w = _case(case)
    X_before = X.copy()
    y_before = y.copy()
    w_before = None if w is None else w.copy()
    est = Est(max_iter=3, tol=None, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            est.fit(X, y, sample_weight=w)
        except (ValueError, TypeError, DivergenceError) as exc:
            assert str(exc)  # a message that names the problem
            return
        finally:
            # nothing the user passed is modified
            if sp.issparse(X):
                assert (X != X_before).nnz == 0
            else:
                np.testing.assert_array_equal(X, X_before)
            np.testing.assert_array_equal(y, y_before)
            if w is not None:
                np.testing.assert_array_equal(w, w_before)
        P = est.predict_proba(X)
    assert np.all(np.isfinite(est.coef_)) and np.all(
        np.isfinite(est.intercept_)
    )
    assert np.all(np.isfinite(P)) and np.all(P >= 0)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-6)
    assert set(est.predict(X)) <= set(np.unique(y))


@pytest.mark.parametrize("Est", ALL)
@pytest.mark.parametrize("bad", ["nan", "inf", "negative_weight", "1d_X"])
def test_invalid_inputs_raise_value_errors(Est, bad):
    X, y = _base()
    w = None
    if bad == "nan":
        X[0, 0] = np.nan
    elif bad == "inf":
        X[0, 0] = np.inf
    elif bad == "negative_weight":
        w = np.ones(len(y))
        w[0] = -1.0
    else:
        X = X[:, 0]
    with pytest.raises(ValueError):
        Est(max_iter=1, random_state=0).fit(X, y, sample_weight=w)
