"""Nothing a user passes is modified, and a non-canonical CSR matrix means
what scipy says it means.

A CSR matrix may hold its column indices unsorted within a row, or the same
column more than once (scipy: duplicates mean their sum). scipy sorts and
sums such a matrix in place, not only in ``sum_duplicates`` but in
operations that look read-only (``abs(X)``, ``X.max()``, comparisons):
before, every estimator's fit and partial_fit returned the caller's
matrix sorted and summed (through ``abs(X)`` in ``_base._row_l1_norms``).
Here, for every estimator and the front door: the caller's ``data``,
``indices`` and ``indptr`` (and dense X, y and sample_weight) are bitwise
unchanged by fit, partial_fit and every prediction method; the model
fitted on a malformed matrix equals the one fitted on its canonical form;
and a canonical matrix reaches the kernels without a copy.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _estimators import ALL_ESTIMATORS
from numpy.testing import assert_allclose, assert_array_equal

import sksoftmax._base
import sksoftmax._exact
from sksoftmax import SoftmaxClassifier
from sksoftmax._base import _canonical_csr

N_CLASSES = 3

# every estimator, plus the front door with a sampled solver behind it (its
# passes reach the expert's partial_fit; the default is the exact solver)
CASES = [(Est, {}) for Est in ALL_ESTIMATORS] + [
    (SoftmaxClassifier, {"solver": "umax"})
]
CASE_IDS = [Est.__name__ for Est in ALL_ESTIMATORS] + [
    "SoftmaxClassifier-umax"
]

PREDICTION_METHODS = [
    "predict",
    "predict_proba",
    "predict_log_proba",
    "decision_function",
    "predict_topk",
    "score",
    "score_topk",
    "log_loss",
    "objective",
]


def _make(Est, params):
    """A small, fast, deterministic estimator (one thread, a few epochs)."""
    est = Est(**params)
    given = {"random_state": 0, "n_jobs": 1, "max_iter": 3, "tol": None}
    return est.set_params(
        **{k: v for k, v in given.items() if k in est.get_params()}
    )


@pytest.fixture(scope="module")
def problem():
    """(X canonical CSR float64, y, sample_weight), 160 rows x 12 features.

    The values are multiples of 1/8, so halving an entry into a duplicate
    pair and summing the pair back is exact: the canonical form of the
    duplicated matrix is this matrix, bit for bit.
    """
    rng = np.random.RandomState(0)
    n, d = 160, 12
    dense = rng.randint(1, 17, size=(n, d)) / 8.0
    dense *= rng.rand(n, d) < 0.4
    dense[:, 0] = 1.0  # every row holds entries, most rows several
    scores = dense @ rng.randn(d, N_CLASSES)
    y = np.argmax(scores + rng.gumbel(size=scores.shape), axis=1)
    X = sp.csr_matrix(dense)
    assert X.has_canonical_format and X.indices.dtype == np.int32
    sample_weight = rng.uniform(0.5, 2.0, size=n)
    return X, y, sample_weight


def _unsorted(X):
    """X with each row's entries stored in reverse column order."""
    data, indices = X.data.copy(), X.indices.copy()
    for i in range(X.shape[0]):
        lo, hi = X.indptr[i], X.indptr[i + 1]
        data[lo:hi] = data[lo:hi][::-1]
        indices[lo:hi] = indices[lo:hi][::-1]
    out = sp.csr_matrix(
        (data, indices, X.indptr.copy()), shape=X.shape, copy=False
    )
    assert not out.has_sorted_indices
    return out


def _duplicated(X):
    """X with every entry stored twice, as two halves (columns sorted, so
    only the duplicates make it non-canonical)."""
    counts = np.diff(X.indptr)
    indptr = np.concatenate([[0], np.cumsum(2 * counts)]).astype(np.int32)
    indices = np.repeat(X.indices, 2)
    data = np.repeat(X.data / 2.0, 2)
    out = sp.csr_matrix((data, indices, indptr), shape=X.shape, copy=False)
    assert out.has_sorted_indices and not out.has_canonical_format
    return out


MALFORM = {"unsorted": _unsorted, "duplicates": _duplicated}


def _canonical_form(X):
    """scipy's canonical form of X, on a copy."""
    C = X.copy()
    C.sum_duplicates()
    return C


def _snapshot(*arrays):
    return [np.array(a, copy=True) for a in arrays]


def _assert_unchanged(before, arrays):
    for old, new in zip(before, arrays):
        assert new.dtype == old.dtype and new.shape == old.shape
        # bitwise: the same bytes, not merely equal values
        assert old.tobytes() == new.tobytes()


def _csr_arrays(X):
    return X.data, X.indices, X.indptr


def _assert_same_model(est, ref):
    # Exact in practice: the estimators canonicalise a non-canonical matrix
    # on a copy before anything reads it, so their kernels see the same
    # bytes as for the canonical matrix, and with one thread and a fixed
    # random_state they run the same arithmetic.
    #
    # SoftmaxClassifier's full-batch solver ('lbfgs') runs other arithmetic
    # for dense and sparse rows (a dense product, or a sparse one centred
    # implicitly): the two reach the same optimum to L-BFGS's tolerance.
    tol = 1e-4 if getattr(est, "solver_", None) == "lbfgs" else 1e-12
    assert_allclose(est.coef_, ref.coef_, rtol=tol, atol=tol)
    assert_allclose(est.intercept_, ref.intercept_, rtol=tol, atol=tol)


@pytest.fixture(autouse=True)
def _quiet():
    # a few epochs of max_iter stop before any convergence rule would
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.mark.parametrize("kind", list(MALFORM))
def test_malformed_csr_canonical_form_is_the_problem(problem, kind):
    """The two malformed matrices mean the canonical one exactly."""
    X = problem[0]
    C = _canonical_form(MALFORM[kind](X))
    for a, b in zip(_csr_arrays(C), _csr_arrays(X)):
        assert_array_equal(a, b)


@pytest.mark.parametrize("kind", list(MALFORM))
@pytest.mark.parametrize("Est, params", CASES, ids=CASE_IDS)
def test_fit_leaves_csr_unchanged_and_fits_the_canonical_model(
    problem, Est, params, kind
):
    X, y, sw = problem
    X_bad = MALFORM[kind](X)
    before = _snapshot(*_csr_arrays(X_bad), y, sw)
    est = _make(Est, params).fit(X_bad, y, sample_weight=sw)
    _assert_unchanged(before, [*_csr_arrays(X_bad), y, sw])
    assert not X_bad.has_canonical_format
    ref = _make(Est, params).fit(X, y, sample_weight=sw)
    _assert_same_model(est, ref)


@pytest.mark.parametrize("kind", list(MALFORM))
@pytest.mark.parametrize("Est, params", CASES, ids=CASE_IDS)
def test_partial_fit_leaves_csr_unchanged_and_fits_the_canonical_model(
    problem, Est, params, kind
):
    X, y, sw = problem
    classes = np.arange(N_CLASSES)
    halves = [slice(0, 80), slice(80, None)]
    est, ref = _make(Est, params), _make(Est, params)
    for rows in halves:
        X_bad = MALFORM[kind](X[rows])
        y_rows, sw_rows = y[rows].copy(), sw[rows].copy()
        before = _snapshot(*_csr_arrays(X_bad), y_rows, sw_rows)
        est.partial_fit(X_bad, y_rows, classes=classes, sample_weight=sw_rows)
        _assert_unchanged(before, [*_csr_arrays(X_bad), y_rows, sw_rows])
        ref.partial_fit(X[rows], y_rows, classes=classes, sample_weight=sw_rows)
        _assert_same_model(est, ref)


@pytest.fixture(scope="module")
def fitted(problem):
    """One model per case, fitted on the canonical matrix."""
    X, y, sw = problem
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            name: _make(Est, params).fit(X, y, sample_weight=sw)
            for name, (Est, params) in zip(CASE_IDS, CASES)
        }


def _call(est, method, X, y, sw):
    f = getattr(est, method)
    if method in ("predict_topk",):
        return f(X, k=2)
    if method in ("score", "score_topk", "log_loss", "objective"):
        return f(X, y, sample_weight=sw)
    return f(X)


@pytest.mark.parametrize("kind", list(MALFORM))
@pytest.mark.parametrize("Est, params", CASES, ids=CASE_IDS)
def test_prediction_leaves_csr_unchanged_and_reads_it_right(
    problem, fitted, Est, params, kind
):
    X, y, sw = problem
    est = fitted[CASE_IDS[CASES.index((Est, params))]]
    X_bad = MALFORM[kind](X)
    for method in PREDICTION_METHODS:
        if not hasattr(est, method):
            continue
        before = _snapshot(*_csr_arrays(X_bad), y, sw)
        got = _call(est, method, X_bad, y, sw)
        _assert_unchanged(before, [*_csr_arrays(X_bad), y, sw])
        want = _call(est, method, X, y, sw)
        # The evaluation reads rows as stored (no canonical copy): a row's
        # score sums its entries in stored order, so reversed entries can
        # round differently in the last bits; labels and ranks agree.
        if method == "predict_topk":
            assert_array_equal(got[0], want[0])
            assert_allclose(got[1], want[1], rtol=1e-12, atol=1e-14)
        elif method == "predict":
            assert_array_equal(got, want)
        else:
            assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("Est, params", CASES, ids=CASE_IDS)
def test_dense_inputs_and_weights_unchanged(problem, Est, params, order):
    X, y, sw = problem
    dense = np.asarray(X.toarray(), order=order)
    classes = np.arange(N_CLASSES)
    before = _snapshot(dense, y, sw)
    est = _make(Est, params).fit(dense, y, sample_weight=sw)
    _assert_unchanged(before, [dense, y, sw])
    assert dense.flags.c_contiguous == (order == "C")
    _assert_same_model(est, _make(Est, params).fit(X, y, sample_weight=sw))
    part = _make(Est, params)
    part.partial_fit(dense, y, classes=classes, sample_weight=sw)
    part.partial_fit(dense, y, sample_weight=sw)
    _assert_unchanged(before, [dense, y, sw])
    for method in PREDICTION_METHODS:
        if hasattr(est, method):
            _call(est, method, dense, y, sw)
    _assert_unchanged(before, [dense, y, sw])


# ------------------------------------------------------ no needless copy
def test_canonical_csr_helper_copies_only_when_needed(problem):
    X = problem[0]
    assert _canonical_csr(X) is X
    dense = X.toarray()
    assert _canonical_csr(dense) is dense
    for make in MALFORM.values():
        bad = make(X)
        before = _snapshot(*_csr_arrays(bad))
        fixed = _canonical_csr(bad)
        assert fixed is not bad and fixed.has_canonical_format
        assert not np.shares_memory(fixed.data, bad.data)
        assert not np.shares_memory(fixed.indices, bad.indices)
        _assert_unchanged(before, _csr_arrays(bad))
        for a, b in zip(_csr_arrays(fixed), _csr_arrays(X)):
            assert_array_equal(a, b)


@pytest.fixture
def seen_by_kernels(monkeypatch):
    """Every X handed to make_dataset (the kernels' view of the rows)."""
    seen = []
    for module in (sksoftmax._base, sksoftmax._exact):
        original = module.make_dataset

        def record(X, *args, _original=original, **kwargs):
            seen.append(X)
            return _original(X, *args, **kwargs)

        monkeypatch.setattr(module, "make_dataset", record)
    return seen


# The front door's sampled solvers are left out: each pass hands the expert
# the rows in the pass's order, X[order], a fresh matrix by design.
DIRECT = [(Est, {}) for Est in ALL_ESTIMATORS]
DIRECT_IDS = [Est.__name__ for Est in ALL_ESTIMATORS]


@pytest.mark.parametrize("how", ["fit", "partial_fit"])
@pytest.mark.parametrize("Est, params", DIRECT, ids=DIRECT_IDS)
def test_canonical_csr_reaches_the_kernels_uncopied(
    problem, seen_by_kernels, Est, params, how
):
    X, y, sw = problem
    est = _make(Est, params)
    if Est is SoftmaxClassifier:
        # the exact solver's kernels (this small problem would take the
        # full-batch 'lbfgs', which runs no kernel), no held-out rows: the
        # epochs then run on all of X
        est.set_params(early_stopping=False)
        if est.solver == "auto":
            est.set_params(solver="exact")
    if how == "fit":
        est.fit(X, y, sample_weight=sw)
    else:
        est.partial_fit(X, y, classes=np.arange(N_CLASSES), sample_weight=sw)
    assert seen_by_kernels
    for Z in seen_by_kernels:
        assert np.shares_memory(Z.data, X.data)
        assert np.shares_memory(Z.indices, X.indices)


@pytest.mark.parametrize("kind", list(MALFORM))
@pytest.mark.parametrize("Est, params", DIRECT, ids=DIRECT_IDS)
def test_malformed_csr_is_copied_once_per_call(
    problem, seen_by_kernels, Est, params, kind
):
    X, y, sw = problem
    X_bad = MALFORM[kind](X)
    est = _make(Est, params)
    if Est is SoftmaxClassifier:
        est.set_params(early_stopping=False)
        if est.solver == "auto":
            # the exact solver's kernels ('auto' takes 'lbfgs' here)
            est.set_params(solver="exact")
    est.fit(X_bad, y, sample_weight=sw)
    assert seen_by_kernels
    first = seen_by_kernels[0]
    assert first.has_canonical_format
    assert not np.shares_memory(first.data, X_bad.data)
    for Z in seen_by_kernels[1:]:
        # the exact solver's epochs all read the one canonical copy
        assert np.shares_memory(Z.data, first.data)
