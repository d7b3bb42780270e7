"""eta0='auto': the closed-form rules against a NumPy reference of the same
formula, and the pilot that refines them (_eta0_pilot.py)."""

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal

from sksoftmax import (
    ARLogisticClassifier,
    ARProbitClassifier,
    ARSoftmaxClassifier,
    ImplicitSGDClassifier,
    SampledSoftmaxClassifier,
    SCENTClassifier,
    StochasticBoundClassifier,
    UMaxSoftmaxClassifier,
    _eta0_pilot,
)
from sksoftmax.datasets import make_softmax_classification

PILOTED = [UMaxSoftmaxClassifier, ImplicitSGDClassifier]


def _data(n_samples, random_state=0):
    """Sparse rows, 30 classes with Zipfian frequencies, unequal norms."""
    X, y = make_softmax_classification(
        n_samples=n_samples,
        n_features=60,
        n_classes=30,
        density=0.1,
        class_exponent=1.0,
        random_state=random_state,
    )
    return X, y


def _reference_parts(X, y, fit_intercept=True):
    """c = mean ||x||^2 + [intercept], prior p, K, n of the 'auto' rules."""
    Xd = X.toarray() if sp.issparse(X) else X
    c = float(np.mean(np.sum(Xd**2, axis=1))) + float(fit_intercept)
    classes, y_enc = np.unique(y, return_inverse=True)
    K = len(classes)
    counts = np.bincount(y_enc, minlength=K).astype(float)
    p = (counts + 1.0 / K) / (counts.sum() + 1.0)
    return c, p, K, X.shape[0]


def _mean_l1(X, fit_intercept=True):
    """mean ||x||_1 + [intercept], dense NumPy."""
    Xd = X.toarray() if sp.issparse(X) else X
    return float(np.mean(np.abs(Xd).sum(axis=1))) + float(fit_intercept)


# below the pilot's 500 rows: eta0_ is the closed form
def _umax_rule(X, y, m=5, sampler="uniform"):
    c, p, K, _ = _reference_parts(X, y)
    if sampler == "uniform":
        q = np.full(K, 1.0 / (K - 1))
    else:
        counts = np.bincount(np.unique(y, return_inverse=True)[1], minlength=K)
        q = (counts + 1.0) / (counts + 1.0).sum()
    kappa = max(1.0, np.max(p / q) / m, 0.1 / (m * q.min()))
    return 1.0 / (c * kappa)


def _pilot_factor(n, K):
    # what the pilot's best trial is multiplied by: min(1, sqrt(50 / r))
    return min(1.0, np.sqrt(50.0 / max(n / K, 1.0)))


def _sampled_ove_rule(X, y, m=5, batch=100):
    c, _, K, n = _reference_parts(X, y)
    return min(batch, n) / (c * K / m)


def _scent_rule(X, y, batch=128):
    # 2 B / c, times sqrt(50 / rows per class) (rows per class >= 1)
    c, _, K, n = _reference_parts(X, y)
    return 2.0 * min(batch, n) / c * np.sqrt(50.0 / max(n / K, 1.0))


CLOSED_FORM = [
    (UMaxSoftmaxClassifier, {}, _umax_rule),
    (
        UMaxSoftmaxClassifier,
        {"sampler": "frequency"},
        lambda X, y: _umax_rule(X, y, sampler="frequency"),
    ),
    (ImplicitSGDClassifier, {}, lambda X, y: 1.0 / _reference_parts(X, y)[0]),
    (SCENTClassifier, {}, _scent_rule),
    (SampledSoftmaxClassifier, {}, _sampled_ove_rule),
    (
        SampledSoftmaxClassifier,
        {"loss": "nce"},
        lambda X, y: min(100, X.shape[0]) / _reference_parts(X, y)[0],
    ),
    (ARSoftmaxClassifier, {}, lambda X, y: 1.0),
    # 'kucukelbir' for the noise models: two noise standard deviations over
    # the mean ||x||_1 + 1
    (ARProbitClassifier, {}, lambda X, y: 2.0 / _mean_l1(X)),
    (
        ARLogisticClassifier,
        {},
        lambda X, y: 2.0 * np.pi / np.sqrt(3.0) / _mean_l1(X),
    ),
    (
        ARSoftmaxClassifier,
        {"learning_rate": "constant"},
        lambda X, y: 1.0 / _reference_parts(X, y)[0],
    ),
    (
        StochasticBoundClassifier,
        {"rank": 3, "variant": "surrogate"},
        lambda X, y: 1.0,
    ),
    # variant='auto' at low rank: the paper's update at 30 / n
    (StochasticBoundClassifier, {"rank": 3}, lambda X, y: 30.0 / len(y)),
    (
        StochasticBoundClassifier,
        {"rank": None, "variant": "paper"},
        lambda X, y: 1.0 / len(y),
    ),
]


@pytest.mark.parametrize(
    "Est,params,reference",
    CLOSED_FORM,
    ids=[f"{e.__name__}-{p}" for e, p, _ in CLOSED_FORM],
)
def test_closed_form_auto_matches_reference(Est, params, reference):
    X, y = _data(300)
    clf = Est(max_iter=1, tol=None, random_state=0, **params).fit(X, y)
    assert_allclose(clf.eta0_, reference(X, y), rtol=1e-10)
    if getattr(Est, "_eta0_pilot", False):
        assert clf.eta0_trials_ is None  # too few rows for a pilot


def test_closed_form_follows_partial_fit_rows():
    """Below the pilot's size, 'auto' follows every row seen so far."""
    X, y = _data(300)
    clf = ImplicitSGDClassifier(random_state=0)
    clf.partial_fit(X[:100], y[:100], classes=np.unique(y))
    assert_allclose(clf.eta0_, 1.0 / _reference_parts(X[:100], y[:100])[0])
    clf.partial_fit(X[100:], y[100:])
    assert_allclose(clf.eta0_, 1.0 / _reference_parts(X, y)[0])


@pytest.mark.parametrize("Est", PILOTED)
def test_pilot_search_follows_its_rule(Est):
    """Trials are the rule times powers of 3, walked while the held-out
    loss falls; eta0_ is the best trial and a local minimum of the walk."""
    X, y = _data(1500)
    clf = Est(max_iter=1, tol=None, random_state=0).fit(X, y)
    trials = clf.eta0_trials_
    assert trials.ndim == 2 and trials.shape[1] == 3
    # 1,125 pool rows, an eighth of 1,500 rows below a second stage
    assert_array_equal(trials[:, 2], 1125)
    rule = trials[0, 0]
    ratios = np.log(trials[:, 0] / rule) / np.log(_eta0_pilot.FACTOR)
    assert_allclose(ratios, np.round(ratios), atol=1e-9)
    best = int(np.argmin(trials[:, 1]))
    assert_allclose(clf.eta0_, trials[best, 0] * _pilot_factor(1500, 30))
    # the walk stopped at a trial no better than the best, on each side
    # it explored (or after MAX_STEPS moves)
    j = np.round(ratios).astype(int)
    jb = j[best]
    for side in (jb - 1, jb + 1):
        if side in j:
            assert trials[list(j).index(side), 1] >= trials[best, 1]
    assert len(trials) <= 2 * _eta0_pilot.MAX_STEPS + 1


def _with_rule_scaled(monkeypatch, Est, factor):
    original = Est._auto_eta0
    monkeypatch.setattr(
        Est, "_auto_eta0", lambda self, c: factor * original(self, c)
    )


@pytest.mark.parametrize("Est", PILOTED)
@pytest.mark.parametrize("factor", [1e-3, 81.0])
def test_pilot_recovers_from_a_bad_rule(monkeypatch, Est, factor):
    """Starting 1000x too small or 81x too large, the pilot walks back and
    the fit beats the one at the bad starting step on held-out rows."""
    X, y = _data(3000)
    X_test, y_test = X[2000:], y[2000:]
    X, y = X[:2000], y[:2000]
    est = Est(max_iter=1, tol=None, random_state=0).fit(X, y)
    rule = est.eta0_trials_[0, 0]  # the pilot starts at the rule
    _with_rule_scaled(monkeypatch, Est, factor)
    clf = Est(max_iter=5, tol=None, random_state=0).fit(X, y)
    start = clf.eta0_trials_[0, 0]
    assert_allclose(start, factor * rule)
    moved = clf.eta0_ / start
    assert (moved > 1.0) if factor < 1 else (moved < 1.0)
    assert 0.1 < clf.eta0_ / rule < 10.0
    bad = Est(eta0=start, max_iter=5, tol=None, random_state=0)
    try:
        bad_loss = bad.fit(X, y).log_loss(X_test, y_test)
    except Exception:  # the too-large step may diverge outright
        bad_loss = np.inf
    assert clf.log_loss(X_test, y_test) < bad_loss


def test_pilot_column_restriction_is_exact(monkeypatch):
    """A trial on the columns its rows use equals one on all columns."""
    X, y = _data(1500)
    a = UMaxSoftmaxClassifier(max_iter=1, tol=None, random_state=0).fit(X, y)
    monkeypatch.setattr(_eta0_pilot, "_used_columns", lambda A, B: (A, B))
    b = UMaxSoftmaxClassifier(max_iter=1, tol=None, random_state=0).fit(X, y)
    assert_allclose(a.eta0_trials_, b.eta0_trials_, rtol=1e-9)
    assert_array_equal(a.coef_, b.coef_)


def test_pilot_held_out_loss_is_exact():
    """A trial's figure is the exact log-loss of its held-out rows: replay
    the trial with the package's pieces and score it with NumPy."""
    from scipy.special import logsumexp

    X, y = _data(1500)
    clf = UMaxSoftmaxClassifier(max_iter=1, tol=None, random_state=0)
    clf.fit(X, y)
    train, val = _eta0_pilot.pilot_rows(
        X.shape[0], np.ones(X.shape[0]), clf.random_state
    )
    assert len(val) == min(_eta0_pilot.PILOT_VAL_ROWS, 1500 // 4)
    assert len(np.intersect1d(train, val)) == 0
    y_enc = np.searchsorted(clf.classes_, y)
    # the first stage: the pool's first PILOT_ROWS rows, in memory order
    train = np.sort(train[: _eta0_pilot.PILOT_ROWS])
    X_train, X_val = _eta0_pilot._used_columns(X[train], X[val])
    eta = clf.eta0_trials_[0, 0]
    # replay the first trial on the fitted estimator's counts and classes
    est = UMaxSoftmaxClassifier(max_iter=1, tol=None, random_state=0)
    est.fit(X, y)
    original = _eta0_pilot._trial
    value = original(
        est,
        eta,
        X_train,
        y_enc[train],
        np.ones(len(train)),
        X_val,
        y_enc[val],
        np.ones(len(val)),
    )
    assert_allclose(value, clf.eta0_trials_[0, 1], rtol=1e-10)
    # the same model by a plain NumPy softmax: the prior-start model at a
    # tiny step is the class-prior log-loss of the held-out rows
    tiny = original(
        est,
        1e-12,
        X_train,
        y_enc[train],
        np.ones(len(train)),
        X_val,
        y_enc[val],
        np.ones(len(val)),
    )
    log_p = np.log(est._prior_frequencies())
    scores = np.tile(log_p, (len(val), 1))
    expected = np.mean(logsumexp(scores, axis=1) - log_p[y_enc[val]])
    assert_allclose(tiny, expected, rtol=1e-6)


@pytest.mark.parametrize("Est", PILOTED)
def test_pilot_is_reproducible_and_kept(Est):
    X, y = _data(1500)
    a = Est(max_iter=1, tol=None, random_state=0).fit(X, y)
    b = Est(max_iter=1, tol=None, random_state=0).fit(X, y)
    assert_array_equal(a.eta0_trials_, b.eta0_trials_)
    assert a.eta0_ == b.eta0_
    # a warm start keeps the pilot's step (no trials from a trained model)
    trials = a.eta0_trials_
    a.set_params(warm_start=True).fit(X, y)
    assert a.eta0_ == b.eta0_ and a.eta0_trials_ is trials
    # partial_fit: the first call with enough rows pilots, later ones keep
    c = Est(random_state=0)
    c.partial_fit(X[:1000], y[:1000], classes=np.unique(y))
    assert c.eta0_trials_ is not None
    kept = c.eta0_
    c.partial_fit(X[1000:], y[1000:])
    assert c.eta0_ == kept
    # a float eta0 is used as given, without trials
    d = Est(eta0=0.01, max_iter=1, tol=None, random_state=0).fit(X, y)
    assert d.eta0_ == 0.01 and not hasattr(d, "eta0_trials_")


def _small_stages(monkeypatch, rows=128):
    monkeypatch.setattr(_eta0_pilot, "PILOT_ROWS", rows)
    monkeypatch.setattr(_eta0_pilot, "PILOT_VAL_ROWS", 256)


@pytest.mark.parametrize("Est", PILOTED)
def test_pilot_stages_grow_and_only_lower_the_step(monkeypatch, Est):
    """Stages of 128 and 512 rows (5,000 rows: an eighth is 625): stage 1
    is the two-way walk; stage 2 starts at stage 1's best and tries only
    smaller steps, walking down while the held-out loss falls; eta0_ is
    stage 2's best."""
    _small_stages(monkeypatch)
    X, y = _data(5000)
    assert _eta0_pilot.stage_sizes(4744, 5000) == [128, 512]
    clf = Est(max_iter=1, tol=None, random_state=0).fit(X, y)
    trials = clf.eta0_trials_
    rows = trials[:, 2]
    assert set(rows) == {128, 512} and np.all(np.diff(rows) >= 0)
    first, second = trials[rows == 128], trials[rows == 512]
    best1 = first[np.argmin(first[:, 1]), 0]
    assert second[0, 0] == best1
    assert np.all(second[1:, 0] < best1)
    steps = np.log(second[:, 0] / best1) / np.log(_eta0_pilot.FACTOR)
    assert_allclose(steps, -np.arange(len(second)), atol=1e-9)
    # the walk went on only while the loss fell
    assert np.all(np.diff(second[:-1, 1]) < 0)
    if len(second) < _eta0_pilot.MAX_STEPS + 1:
        assert len(second) == 1 or second[-1, 1] >= second[-2, 1]
    best = second[np.argmin(second[:, 1]), 0]
    # 5,000 rows of 30 classes: 167 rows per class, factor 0.55
    assert_allclose(clf.eta0_, best * _pilot_factor(5000, 30))
    assert clf.eta0_ < best


@pytest.mark.parametrize("Est", PILOTED)
@pytest.mark.parametrize("n_classes", [12, 60])
def test_pilot_step_shrinks_with_rows_per_class(Est, n_classes):
    """eta0_ is the best trial times min(1, sqrt(50 / r)), r the rows per
    class of the fit (fit) or of the rows seen (the partial_fit call that
    pilots): 1,500 rows of 12 classes (r = 125) shrink it by 0.63, of 60
    classes (r = 25) not at all."""
    X, y = make_softmax_classification(
        n_samples=1500,
        n_features=60,
        n_classes=n_classes,
        density=0.1,
        class_exponent=0.5,
        random_state=0,
    )
    K = len(np.unique(y))
    clf = Est(max_iter=1, tol=None, random_state=0).fit(X, y)
    trials = clf.eta0_trials_
    best = trials[np.argmin(trials[:, 1]), 0]
    assert_allclose(clf.eta0_, best * _pilot_factor(1500, K))
    pf = Est(random_state=0).partial_fit(X[:1000], y[:1000], classes=y)
    trials = pf.eta0_trials_
    best = trials[np.argmin(trials[:, 1]), 0]
    assert_allclose(pf.eta0_, best * _pilot_factor(1000, K))


def test_pilot_stages_respect_the_rows_and_memory_caps(monkeypatch):
    _small_stages(monkeypatch)
    assert _eta0_pilot.stage_sizes(100, 10**6) == [100]
    assert _eta0_pilot.stage_sizes(10**6, 1100) == [128]
    assert _eta0_pilot.stage_sizes(10**6, 10**6) == [
        128,
        512,
        2048,
        8192,
        32768,
    ]
    X, y = _data(5000)
    # 30 classes x 60 columns x 8 bytes: a later stage over 1,000 bytes
    # is not run
    monkeypatch.setattr(_eta0_pilot, "PILOT_MAX_BYTES", 1000)
    clf = UMaxSoftmaxClassifier(max_iter=1, tol=None, random_state=0)
    assert_array_equal(clf.fit(X, y).eta0_trials_[:, 2], 128)


def test_pilot_reports_with_verbose(capsys):
    X, y = _data(1500)
    UMaxSoftmaxClassifier(max_iter=1, tol=None, verbose=1).fit(X, y)
    out = capsys.readouterr().out
    assert "eta0='auto': closed-form rule" in out and "using eta0_=" in out


def test_pilot_skips_zero_weight_rows():
    """Rows of zero weight are neither trained on nor scored."""
    X, y = _data(1500)
    w = np.ones(X.shape[0])
    w[::3] = 0.0
    train, val = _eta0_pilot.pilot_rows(X.shape[0], w, 0)
    assert np.all(w[train] > 0) and np.all(w[val] > 0)
    w[:] = 0.0
    w[:400] = 1.0
    assert _eta0_pilot.pilot_rows(X.shape[0], w, 0) is None


def test_noise_model_rule_follows_the_rows_seen_by_partial_fit():
    # the rule's mean ||x||_1 is over every row seen, also of weighted
    # rows, and a batch of another scale moves it
    X, y = _data(300)
    X2 = 3.0 * X[:100]
    w = np.linspace(0.5, 2.0, 300)
    clf = ARProbitClassifier(random_state=0)
    clf.partial_fit(X, y, classes=np.unique(y), sample_weight=w)
    l1 = np.abs(X.toarray()).sum(axis=1)
    assert_allclose(clf.eta0_, 2.0 / (np.average(l1, weights=w) + 1.0))
    clf.partial_fit(X2, y[:100])
    l1_all = np.r_[l1, 3.0 * l1[:100]]
    w_all = np.r_[w, np.ones(100)]
    assert_allclose(clf.eta0_, 2.0 / (np.average(l1_all, weights=w_all) + 1.0))
