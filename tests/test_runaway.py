"""Runaway steps are reported: a fit whose model ends far worse than the
class prior on its training rows warns (ConvergenceWarning naming eta0_),
or raises DivergenceError naming eta0 where the numbers overflow."""

import warnings

import numpy as np
import pytest
from _estimators import ALL_ESTIMATORS as ALL
from _estimators import four_class_problem
from sklearn.exceptions import ConvergenceWarning

from sksoftmax import (
    SampledSoftmaxClassifier,
    SoftmaxClassifier,
    UMaxSoftmaxClassifier,
    _runaway,
)
from sksoftmax.exceptions import DivergenceError


@pytest.fixture(scope="module")
def data():
    return four_class_problem()


def _runaway_warnings(record):
    return [
        w
        for w in record
        if issubclass(w.category, ConvergenceWarning)
        and "class-prior model" in str(w.message)
    ]


@pytest.mark.parametrize("Est", ALL)
@pytest.mark.parametrize("how", ["fit", "partial_fit"])
def test_eta0_1e6_warns_or_raises_naming_eta0(data, Est, how):
    """Before: five estimators returned coef_ near 3e6 without a word."""
    X, y = data
    if how == "fit" and Est is SoftmaxClassifier:
        pytest.skip(
            "held-out stopping undoes a diverging epoch and halves the step "
            "(tests/test_softmax.py::test_a_runaway_step_is_undone)"
        )
    est = Est(eta0=1e6, max_iter=5, tol=None, random_state=0)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        try:
            if how == "fit":
                est.fit(X, y)
            else:
                est.partial_fit(X, y, classes=np.unique(y))
        except DivergenceError as exc:
            assert "eta0" in str(exc)
            return
    found = _runaway_warnings(record)
    assert len(found) == 1
    message = str(found[0].message)
    assert "eta0_=1e+06" in message and "smaller" in message


@pytest.mark.parametrize("Est", ALL)
def test_a_model_near_the_prior_does_not_warn(data, Est):
    """A tiny step leaves the model at (or near) the class prior: far
    below the threshold of twice the prior's log-loss plus one."""
    X, y = data
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        Est(eta0=1e-8, max_iter=2, tol=None, random_state=0).fit(X, y)
    assert not _runaway_warnings(record)


def test_runaway_check_threshold_and_rows(data, monkeypatch):
    """The check scores evenly spaced rows of positive weight and warns
    when their exact log-loss exceeds twice the prior's plus one nat: with
    the model's log-loss pinned to L, L just below the threshold
    does not warn and just above does."""
    X, y = data
    est = UMaxSoftmaxClassifier(eta0=1e-8, max_iter=1, tol=None).fit(X, y)
    w = np.ones(len(y))
    w[::3] = 0.0  # zero-weight rows are neither scored nor counted
    rows = np.flatnonzero(w > 0)
    assert rows.size < _runaway.RUNAWAY_ROWS  # all of them are scored
    prior = float(np.mean(-np.log(est._prior_frequencies()[y[rows]])))
    threshold = 2.0 * prior + 1.0
    seen = []
    for L, warns in [(threshold - 1e-6, False), (threshold + 1e-6, True)]:

        def pinned(X_rows, y_rows, w_rows, L=L):
            seen.append((X_rows.shape[0], y_rows.shape[0], w_rows.sum()))
            return L

        monkeypatch.setattr(est, "_log_loss", pinned)
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            est._warn_if_runaway(X, y, w)
        assert len(_runaway_warnings(record)) == int(warns)
    assert seen[0] == (rows.size, rows.size, rows.size)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_runaway_rows_count_the_cache_lines_a_sparse_row_reads(dtype):
    """At many classes the check's cost is W's cache lines, not its rows'
    nonzeros: a used column of a class-major W is read a whole line per
    class. The rows scored then read at most RUNAWAY_TERMS entries of W
    (or are the floor of 16); dense rows read whole rows of W as before."""
    import scipy.sparse as sp

    rng = np.random.RandomState(0)
    n, D = 400, 1000
    X = sp.random(n, D, density=0.004, format="csr", random_state=rng,
                  dtype=dtype)
    y = np.arange(n) % 4
    est = UMaxSoftmaxClassifier(random_state=0)
    # (partial_fit leaves W class-major, as the training calls that run
    # the check have it; fit ends feature-major)
    est.partial_fit(X, y, classes=np.arange(4))
    assert est.coef_.flags.c_contiguous
    per_line = 64 // est.coef_.itemsize
    nnz = X.nnz / n
    for n_classes in (1_000, 100_000):
        est.classes_ = np.arange(n_classes)
        rows = _runaway.runaway_n_rows(est, X)
        read = n_classes * (1 + min(nnz * per_line, D))
        assert rows == 16 or rows * read <= _runaway.RUNAWAY_TERMS
        # counted by nonzeros alone, it would score more rows
        if n_classes == 100_000:
            assert rows < _runaway.RUNAWAY_TERMS // (n_classes * (1 + nnz))
        else:
            assert rows == _runaway.RUNAWAY_ROWS
    dense = X.toarray()
    est.classes_ = np.arange(1_000)
    assert _runaway.runaway_n_rows(est, dense) == max(
        16, _runaway.RUNAWAY_TERMS // (1_000 * (1 + D))
    )


def test_partial_fit_checks_calls_1_2_4_8(data, monkeypatch):
    """A stream pays the check O(log calls) times, not on every batch."""
    X, y = data
    est = UMaxSoftmaxClassifier(random_state=0)
    checked = []
    monkeypatch.setattr(
        est, "_warn_if_runaway", lambda *a: checked.append(est._n_epochs)
    )
    for call in range(10):
        rows = slice(30 * call, 30 * call + 30)
        est.partial_fit(X[rows], y[rows], classes=np.unique(y))
    assert checked == [1, 2, 4, 8]


@pytest.mark.filterwarnings("ignore:.*n_sampled_classes")
@pytest.mark.parametrize("Est", [UMaxSoftmaxClassifier, SampledSoftmaxClassifier])
def test_warm_fit_loop_checks_epochs_1_2_4_8_and_new_steps(data, monkeypatch, Est):
    """A loop of warm one-epoch fits pays the check when the epoch total
    crosses a power of two, and again whenever its step or its rows change:
    a runaway eta0 set between calls is still reported. (The sampled
    baseline keeps no per-row state: its rows are told apart by their
    shape, nonzeros and weight.)"""
    X, y = data
    est = Est(eta0=0.05, max_iter=1, tol=None, warm_start=True, random_state=0)
    checked = []
    monkeypatch.setattr(
        est, "_warn_if_runaway", lambda *a: checked.append(est._n_epochs)
    )
    for _ in range(9):
        est.fit(X, y)
    assert checked == [1, 2, 4, 8]
    est.set_params(eta0=0.01)
    est.fit(X, y)  # epoch 10: a new step
    est.fit(X, y)  # epoch 11: the same step, no power of two
    est.fit(X[:100], y[:100])  # epoch 12: rows new to the state
    assert checked == [1, 2, 4, 8, 10, 12]
    est.set_params(max_iter=5)
    est.fit(X[:100], y[:100])  # epochs 13-17 cross 16
    assert checked[-1] == 17
    est.set_params(warm_start=False, max_iter=1)
    est.fit(X, y)  # a cold fit
    assert checked[-1] == 1


def test_runaway_step_set_between_warm_fits_warns(data):
    """Epoch 5 is not a power of two: the check runs because the step
    changed, and reports it."""
    X, y = data
    est = UMaxSoftmaxClassifier(
        eta0=0.05, max_iter=1, tol=None, warm_start=True, random_state=0
    )
    for _ in range(4):
        est.fit(X, y)
    est.set_params(eta0=1e6)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        est.fit(X, y)
    assert est._n_epochs == 5
    assert len(_runaway_warnings(record)) == 1


def _many_class_model(n_classes=300, scale=1.0):
    """A U-max model of many classes with weights set by hand (its exact
    log-loss is the reference of the sampled estimate)."""
    import scipy.sparse as sp

    rng = np.random.RandomState(0)
    X = sp.random(200, 40, density=0.2, format="csr", random_state=rng)
    y = rng.randint(0, n_classes, size=200)
    est = UMaxSoftmaxClassifier(max_iter=1, tol=None, random_state=0)
    est.partial_fit(X, y, classes=np.arange(n_classes))
    est.coef_[...] = scale * rng.randn(*est.coef_.shape)
    est.intercept_[...] = rng.randn(n_classes)
    return est, X, y


def test_the_sampled_log_loss_over_every_class_is_the_exact_one():
    est, X, y = _many_class_model()
    w = np.linspace(0.5, 2.0, y.size)
    exact = est._log_loss(X, y, w)
    assert np.isclose(
        _runaway.sampled_log_loss(est, X, y, w, est.classes_.size), exact, rtol=1e-10
    )


def test_the_sampled_normaliser_is_unbiased():
    """Over draws of m of K classes, the mean of the estimated normaliser
    of each row is its exact value (Horvitz-Thompson), and the estimated
    log-loss (a log of it) is at most the exact one on average (Jensen),
    close to it here."""
    est, X, y = _many_class_model()
    w = np.ones(y.size)
    exact = est._log_loss(X, y, w)
    estimates = [
        _runaway.sampled_log_loss(est, X, y, w, 60, seed=s) for s in range(300)
    ]
    assert np.mean(estimates) <= exact + 1e-9
    assert abs(np.mean(estimates) - exact) < 0.05 * exact
    # one row, its normaliser: exp of its log-loss plus its own score
    row, k = X[:1], y[:1]
    s = np.asarray(row @ est.coef_.T).ravel() + est.intercept_
    z = np.exp(s).sum()
    z_hat = [
        np.exp(_runaway.sampled_log_loss(est, row, k, np.ones(1), 60, seed=t) + s[k[0]])
        for t in range(4000)
    ]
    assert abs(np.mean(z_hat) / z - 1) < 0.05


def test_a_runaway_model_at_many_classes_warns_on_sampled_classes(monkeypatch):
    """When the exact check over every class would exceed RUNAWAY_TERMS,
    the check scores sampled classes; a runaway model (huge weights) still
    warns, a model near the prior does not."""
    est, X, y = _many_class_model(scale=1e4)
    # about 50 classes' worth
    monkeypatch.setattr(_runaway, "RUNAWAY_TERMS", 16 * 41 * 50)
    assert _runaway.runaway_n_classes(est, X) < est.classes_.size
    w = np.ones(y.size)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        est._warn_if_runaway(X, y, w)
    assert len(_runaway_warnings(record)) == 1
    est.coef_[...] = 0.0
    est.intercept_[...] = np.log(est._prior_frequencies())
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        est._warn_if_runaway(X, y, w)
    assert not _runaway_warnings(record)
