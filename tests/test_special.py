"""The special functions of _special.pxd against SciPy and NumPy."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import logsumexp, wrightomega

from sksoftmax._shared._special import (
    log1pexp_array,
    logsumexp_rows,
    wright_omega_array,
)

pytestmark = pytest.mark.kernel


def _grid():
    return np.concatenate(
        [
            np.linspace(-700.0, 50.0, 150001),
            np.logspace(np.log10(50.0), 6.0, 50000),
        ]
    )


def test_wright_omega_matches_scipy_to_1e_12():
    x = _grid()
    ours = wright_omega_array(x)
    ref = wrightomega(x).real
    assert np.max(np.abs(ours - ref) / ref) <= 1e-12


def test_wright_omega_solves_its_equation():
    x = np.array([-30.0, -2.0, 0.0, 1.0, 3.0, 700.0, 710.0, 1e4, 1e6, 1e12])
    with np.errstate(all="raise"):
        w = wright_omega_array(x)
    assert np.all(w > 0)
    assert_allclose(w + np.log(w), x, rtol=1e-14, atol=1e-14)


def test_wright_omega_special_values():
    with np.errstate(all="raise"):
        w = wright_omega_array([np.inf, -np.inf, -800.0, -745.5, -40.0])
    assert w[0] == np.inf and w[1] == 0.0 and w[2] == 0.0
    assert w[3] == np.exp(-745.5)  # subnormal, still e^x
    assert_allclose(w[4], np.exp(-40.0), rtol=1e-15)
    assert np.isnan(wright_omega_array(np.nan))


def test_log1pexp_matches_numpy_without_overflow():
    x = np.concatenate(
        [np.linspace(-800, 800, 40001), [-1e308, -1e5, 1e5, 1e308]]
    )
    with np.errstate(all="raise"):
        ours = log1pexp_array(x)
    with np.errstate(over="ignore", under="ignore"):
        ref = np.logaddexp(0.0, x)
    assert_allclose(ours, ref, rtol=1e-15, atol=0)
    assert log1pexp_array(np.inf) == np.inf and log1pexp_array(-np.inf) == 0


def test_logsumexp_rows_matches_scipy():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(6, 7)) * 50
    a[1] = [1e4, -1e4, 0, 1, 2, 3, 1e4]
    a[2] = -np.inf
    a[3, 2] = np.inf
    with np.errstate(all="raise"):
        ours = logsumexp_rows(a)
    with np.errstate(divide="ignore", invalid="ignore"):
        ref = logsumexp(a, axis=1)
    assert_allclose(ours, ref, rtol=1e-15)
    assert_array_equal(logsumexp_rows(np.zeros((2, 0))), [-np.inf, -np.inf])
