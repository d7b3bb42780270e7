"""Iterate averaging (``average``) of U-max, Implicit SGD and the sampled
baselines: the estimators' averaged coef_ / intercept_ against the explicit
mean of the iterates that the NumPy references of tests/_reference.py
record row by row, replaying the same random draws; and the weight
matrix's lazy average against an explicit one."""

import pickle

import numpy as np
import pytest
from _reference import (
    implicit_epoch_reference,
    random_problem,
    sampled_epoch_reference,
    umax_epoch_reference,
)
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.utils._param_validation import InvalidParameterError

from sksoftmax import (
    ImplicitSGDClassifier,
    SampledSoftmaxClassifier,
    UMaxSoftmaxClassifier,
)
from sksoftmax._shared._random import RandomState
from sksoftmax._shared._weight_matrix import make_weight_matrix

pytestmark = pytest.mark.kernel

FORMATS = ["dense", "csr"]
DTYPES = [np.float64, np.float32]
RTOL = {np.float64: 1e-8, np.float32: 1e-4}
K, D, N = 4, 6, 30  # the problem has N + 1 rows: one of them empty
KINDS = ["umax", "implicit", "sampled"]
# L2 penalties: none, mild, and strong enough that the lazy scale falls
# below the averaging floor (1e-6 float64, 1e-3 float32) and is folded
# inside the epochs
ALPHAS = {
    "none": {"umax": 0.0, "implicit": 0.0, "sampled": 0.0},
    "mild": {"umax": 0.05, "implicit": 0.05, "sampled": 0.05},
    "strong": {"umax": 2.0, "implicit": 3.0, "sampled": 1.5},
}
DECAY = 0.9


def _problem(fmt, dtype):
    # seed 2: every class among the first 17 rows (the first partial_fit
    # batch below); row 3 has weight zero, the last row is empty
    return random_problem(fmt, dtype, n=N, d=D, K=K, density=0.5, seed=2)


def _estimator(kind, **params):
    common = dict(
        learning_rate="exponential",
        decay=DECAY,
        tol=None,
        random_state=0,
    )
    common.update(params)
    if kind == "umax":
        return UMaxSoftmaxClassifier(n_sampled_classes=3, eta0=0.2, **common)
    if kind == "implicit":
        # the references replay the paper's uniform sampler
        return ImplicitSGDClassifier(eta0=0.5, sampler="uniform", **common)
    return SampledSoftmaxClassifier(
        loss="ove", batch_size=8, n_sampled_classes=2, eta0=0.5, **common
    )


class Replay:
    """An estimator's run, replayed row by row by the NumPy references.

    Follows the estimator's bookkeeping: the class-prior start, one visiting
    order per ``fit`` call shuffled again each epoch, the rows counted over
    the model's life, u carried over the epochs of one data set, eta0
    times DECAY per epoch (or per ``partial_fit`` call). ``iterates`` holds
    (W, b) after every row.
    """

    def __init__(self, kind, est):
        self.kind, self.est = kind, est
        self.rng = RandomState.from_random_state(est.random_state)
        self.iterates, self.t, self.epochs = [], 0, 0
        self.W = self.b = self.u = None

    def start_at_prior(self, y, sw, dtype):
        counts = np.bincount(y, weights=sw, minlength=K)
        w = sw.max()
        p = (counts + w / K) / (counts.sum() + w)
        self.W = np.zeros((K, D))
        # the estimator stores the prior in the data's dtype
        self.b = np.log(p).astype(dtype).astype(np.float64)

    def epoch(self, X, y, sw, order, init_u):
        est = self.est
        common = dict(
            eta_epoch=est.eta0 * DECAY**self.epochs,
            t=self.t,
            alpha=est.alpha,
            order=order,
            iterates=self.iterates,
        )
        if self.u is None or len(self.u) != X.shape[0]:
            self.u = np.zeros(X.shape[0])
        if self.kind == "umax":
            bound_w = weight_log_k = np.inf
            if est.alpha > 0:
                bound_w = np.sqrt(2 * np.log(K) / est.alpha)
                weight_log_k = sw.sum() * np.log(K)
            self.W, self.b, self.u, _, _, self.t = umax_epoch_reference(
                X, y, sw, self.W, self.b, self.u, self.rng,
                m=est.n_sampled_classes, delta=est.delta, vanilla=False,
                init_u=init_u, bound_w=bound_w, weight_log_k=weight_log_k,
                **common,
            )  # fmt: skip
        elif self.kind == "implicit":
            self.W, self.b, self.u, _, _, self.t = implicit_epoch_reference(
                X, y, sw, self.W, self.b, self.u, self.rng, init_u=init_u,
                raise_u=est.raise_u, **common,
            )  # fmt: skip
        else:
            self.W, self.b, _, _, self.t = sampled_epoch_reference(
                X, y, sw, self.W, self.b, self.rng, loss=est.loss,
                batch_size=est.batch_size, m=est.n_sampled_classes,
                **common,
            )  # fmt: skip
        self.epochs += 1

    def fit(self, X, y, sw, n_epochs, warm=False):
        if not warm:
            self.start_at_prior(y, sw, X.dtype)
        order = np.arange(X.shape[0])
        init_u = not warm or self.u is None or len(self.u) != X.shape[0]
        for e in range(n_epochs):
            self.epoch(X, y, sw, order, init_u and e == 0)

    def partial_fit(self, X, y, sw):
        if self.W is None:
            self.start_at_prior(y, sw, X.dtype)
        self.u = None  # a batch's rows are new
        self.epoch(X, y, sw, np.arange(X.shape[0]), True)

    def mean(self, start=1):
        """The mean of the iterates after rows start, start + 1, ..."""
        kept = self.iterates[start - 1 :]
        return (
            np.mean([W for W, _ in kept], axis=0),
            np.mean([b for _, b in kept], axis=0),
        )


def _close(actual, desired, dtype):
    tol = RTOL[dtype]
    scale = max(1.0, float(np.abs(desired).max()))
    assert_allclose(actual, desired, rtol=tol, atol=tol * scale)


def _check(clf, replay, dtype, start=1):
    """coef_ / intercept_ the mean from row ``start``, the iterate apart."""
    W, b = replay.mean(start)
    assert clf.coef_.dtype == dtype and clf.intercept_.dtype == dtype
    _close(clf.coef_, W, dtype)
    _close(clf.intercept_, b, dtype)
    _close(clf._state.coef, replay.W, dtype)
    _close(clf._state.intercept, replay.b, dtype)
    assert clf._state.averaging.count == len(replay.iterates) - start + 1
    assert clf.t_ == replay.t == len(replay.iterates)


# ------------------------------------------------------- the running mean
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("alpha", sorted(ALPHAS))
def test_average_is_the_running_mean_of_the_iterates(kind, fmt, dtype, alpha):
    X, y, sw = _problem(fmt, dtype)
    clf = _estimator(kind, average=True, max_iter=2, alpha=ALPHAS[alpha][kind])
    clf.fit(X, y, sample_weight=sw)
    replay = Replay(kind, clf)
    replay.fit(X, y, sw, 2)
    _check(clf, replay, dtype)
    assert clf.coef_ is clf._state.averaging.coef
    assert clf.intercept_ is clf._state.averaging.intercept
    # the mean is not the last iterate: the test can tell them apart
    assert not np.allclose(replay.mean()[0], replay.W, rtol=1e-2)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_average_int_starts_at_that_row(kind, dtype):
    X, y, sw = _problem("csr", dtype)
    n_rows = 2 * X.shape[0]
    # from row 43 (the sampled baselines: in the middle of a minibatch,
    # rows 40-47 of the second epoch), from the last row, from never
    for start in (43, n_rows, n_rows + 1):
        clf = _estimator(kind, average=start, max_iter=2, alpha=0.05)
        clf.fit(X, y, sample_weight=sw)
        replay = Replay(kind, clf)
        replay.fit(X, y, sw, 2)
        if start <= n_rows:
            _check(clf, replay, dtype, start=start)
            assert clf.coef_ is clf._state.averaging.coef
        else:
            # averaging has not begun: coef_ is the iterate itself
            assert clf._state.averaging.count == 0
            assert clf.coef_ is clf._state.coef
            assert clf.intercept_ is clf._state.intercept
            _close(clf.coef_, replay.W, dtype)
            _close(clf.intercept_, replay.b, dtype)
    # from the last row: the mean of one iterate is that iterate
    clf = _estimator(kind, average=n_rows, max_iter=2, alpha=0.05)
    clf.fit(X, y, sample_weight=sw)
    _close(clf.coef_, clf._state.coef, dtype)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("average", [True, 12, 20, 40])
def test_partial_fit_batches_equal_the_stream(kind, fmt, dtype, average):
    # 12: averaging begins inside the first batch, 20 inside the second,
    # 40 after both (coef_ the iterate)
    X, y, sw = _problem(fmt, dtype)
    alpha = ALPHAS["mild"][kind]
    clf = _estimator(kind, average=average, alpha=alpha)
    replay = Replay(kind, clf)
    for rows in (slice(0, 17), slice(17, None)):
        clf.partial_fit(X[rows], y[rows], classes=np.arange(K),
                        sample_weight=sw[rows])  # fmt: skip
        replay.partial_fit(X[rows], y[rows], sw[rows])
    start = int(average)
    if start <= X.shape[0]:
        _check(clf, replay, dtype, start=start)
    else:
        assert clf._state.averaging.count == 0 and clf.coef_ is clf._state.coef
        _close(clf.coef_, replay.W, dtype)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_warm_start_continues_from_the_iterate(kind, dtype):
    X, y, sw = _problem("dense", dtype)
    clf = _estimator(kind, average=True, max_iter=1, alpha=0.05)
    clf.fit(X, y, sample_weight=sw)
    raw = clf._state.coef.copy()
    assert not np.allclose(clf.coef_, raw)
    clf.set_params(warm_start=True)
    clf.fit(X, y, sample_weight=sw)
    replay = Replay(kind, clf)
    replay.fit(X, y, sw, 1)
    _close(raw, replay.W, dtype)
    # the second fit goes on from the iterate, and the mean over both
    replay.fit(X, y, sw, 1, warm=True)
    _check(clf, replay, dtype)
    # a fresh fit starts the iterate and the mean over
    clf.set_params(warm_start=False, max_iter=2)
    clf.fit(X, y, sample_weight=sw)
    replay = Replay(kind, clf)
    replay.fit(X, y, sw, 2)
    _check(clf, replay, dtype)


@pytest.mark.parametrize("kind", KINDS)
def test_average_false_is_unchanged(kind):
    X, y, sw = _problem("csr", np.float64)
    for alpha in (0.0, 0.05):
        off = _estimator(kind, max_iter=3, alpha=alpha)
        off.fit(X, y, sample_weight=sw)
        on = _estimator(kind, max_iter=3, alpha=alpha, average=True)
        on.fit(X, y, sample_weight=sw)
        # no averaging state: coef_ is the iterate itself
        assert off._state.averaging is None
        assert off.coef_ is off._state.coef
        if alpha == 0.0:
            # the iterate's arithmetic is the same, bit for bit
            assert_array_equal(off.coef_, on._state.coef)
            assert_array_equal(off.intercept_, on._state.intercept)
        else:
            # the averaging floor folds the lazy scale at other times
            assert_allclose(off.coef_, on._state.coef, rtol=1e-12)
        # and the replay of the iterate, which averaging does not change
        replay = Replay(kind, off)
        replay.fit(X, y, sw, 3)
        _close(off.coef_, replay.W, np.float64)


def test_switching_average_on_and_off_between_warm_starts():
    X, y, sw = _problem("dense", np.float64)
    clf = _estimator("umax", max_iter=1, warm_start=True)
    clf.fit(X, y, sample_weight=sw)
    raw = clf.coef_.copy()
    # on: only the rows of the fits from now on are averaged
    clf.set_params(average=True).fit(X, y, sample_weight=sw)
    replay = Replay("umax", clf)
    replay.fit(X, y, sw, 1)
    _close(raw, replay.W, np.float64)
    replay.fit(X, y, sw, 1, warm=True)
    _check(clf, replay, np.float64, start=X.shape[0] + 1)
    # off: coef_ is the iterate again, the averaging state is dropped
    clf.set_params(average=False).fit(X, y, sample_weight=sw)
    replay.fit(X, y, sw, 1, warm=True)
    assert clf._state.averaging is None
    _close(clf.coef_, replay.W, np.float64)


# ------------------------------------------------------ the estimator API
@pytest.mark.parametrize("value", [0, -1, 1.5, "yes", None])
def test_average_must_be_a_bool_or_a_positive_int(value):
    X, y, _ = _problem("dense", np.float64)
    # as SGDClassifier: InvalidParameterError is a ValueError and TypeError
    with pytest.raises(InvalidParameterError, match="'average' parameter"):
        _estimator("umax", average=value, max_iter=1).fit(X, y)
    for ok in (True, False, np.True_, np.int64(3), 1):
        _estimator("umax", average=ok, max_iter=1).fit(X, y)


@pytest.mark.parametrize("kind", KINDS)
def test_clone_and_pickle_keep_the_average(kind):
    X, y, sw = _problem("csr", np.float32)
    clf = _estimator(kind, average=10, max_iter=1)
    clf.fit(X, y, sample_weight=sw)
    assert clone(clf).get_params()["average"] == 10
    copy = pickle.loads(pickle.dumps(clf))
    assert copy.coef_ is copy._state.averaging.coef  # still one array, not two
    assert_array_equal(copy.predict_proba(X), clf.predict_proba(X))
    # both go on from the same iterate and the same mean
    clf.partial_fit(X, y, sample_weight=sw)
    copy.partial_fit(X, y, sample_weight=sw)
    assert_array_equal(copy.coef_, clf.coef_)
    assert_array_equal(copy._state.coef, clf._state.coef)
    counts = copy._state.averaging.count, clf._state.averaging.count
    assert counts == (2 * X.shape[0] - 9,) * 2


def test_early_stopping_monitors_the_mean():
    X, y, sw = _problem("dense", np.float64)
    X, y, sw = np.vstack([X] * 4), np.tile(y, 4), np.tile(sw, 4)
    clf = _estimator(
        "umax",
        average=True,
        max_iter=3,
        early_stopping=True,
        validation_fraction=0.25,
    ).fit(X, y, sample_weight=sw)
    _, val = clf._validation_split(y, sw)
    assert clf.validation_loss_[-1] == pytest.approx(
        clf._log_loss(X[val], y[val], sw[val]), rel=1e-12
    )
    assert clf.coef_ is clf._state.averaging.coef


def test_a_warm_start_in_float32_converts_every_array():
    X, y, sw = _problem("dense", np.float64)
    clf = _estimator("implicit", average=True, max_iter=1, warm_start=True)
    clf.fit(X, y, sample_weight=sw)
    clf.fit(X.astype(np.float32), y, sample_weight=sw)
    state = clf._state
    for array in (clf.coef_, clf.intercept_, state.coef, state.averaging.coef):
        assert array.dtype == np.float32
    assert clf.coef_ is clf._state.averaging.coef


# ------------------------------------------------- the weight-matrix layer
@pytest.mark.parametrize("dtype", DTYPES)
def test_weight_matrix_keeps_the_mean_through_scales_and_folds(dtype):
    """Random sparse steps, shrinkages (down to folds below the floor and
    a factor of zero) and rows ending, against the explicit mean."""
    rng = np.random.default_rng(0)
    n_cls, n_feat = 5, 7
    coef = np.zeros((n_cls, n_feat), dtype=dtype)
    intercept = np.zeros(n_cls, dtype=dtype)
    avg_coef = np.full_like(coef, np.nan)  # zeroed: no iterate yet
    avg_intercept = np.full_like(intercept, np.nan)
    start = 4
    wm = make_weight_matrix(
        coef, intercept, average_coef=avg_coef,
        average_intercept=avg_intercept, average_start=start,
    )  # fmt: skip
    W, b = np.zeros((n_cls, n_feat)), np.zeros(n_cls)
    iterates = []
    for t in range(1, 201):
        for _ in range(rng.integers(0, 3)):
            k = int(rng.integers(n_cls))
            ind = np.sort(rng.choice(n_feat, 3, replace=False)).astype(np.intc)
            x = rng.standard_normal(3).astype(dtype)
            c = float(rng.standard_normal())
            wm.py_add(k, x, ind, c)
            wm.py_add_intercept(k, c)
            W[k, ind] += c * x
            b[k] = b[k] + np.float64(dtype(c))
        u = rng.uniform()
        factor = 0.0 if t == 150 else (0.5 if u < 0.3 else 1.0)
        if factor < 1.0:
            wm.py_scale_by(factor)
            W *= factor
        wm.py_average_rows(t)
        iterates.append((W.copy(), b.copy()))
        if t >= start:
            lazy_W, lazy_b = wm.averaged()
            mean_W = np.mean([w for w, _ in iterates[start - 1 :]], axis=0)
            mean_b = np.mean([v for _, v in iterates[start - 1 :]], axis=0)
            _close(lazy_W, mean_W, dtype)
            _close(lazy_b, mean_b, dtype)
        else:
            assert wm.averaged() is None
    assert wm.average_count == 200 - start + 1
    wm.fold_scale()
    _close(avg_coef, mean_W, dtype)
    _close(avg_intercept, mean_b, dtype)
    _close(coef, W, dtype)
    # continued by a new object from the stored mean and count
    wm2 = make_weight_matrix(
        coef, intercept, average_coef=avg_coef,
        average_intercept=avg_intercept, average_start=start,
        average_count=wm.average_count,
    )  # fmt: skip
    wm2.py_scale_by(0.25)
    wm2.py_average_rows(201, 3)
    iterates += [(W * 0.25, b)] * 3
    wm2.fold_scale()
    _close(avg_coef, np.mean([w for w, _ in iterates[start - 1 :]], 0), dtype)


def test_minibatch_rows_before_the_start_do_not_count():
    coef, intercept = np.ones((2, 3)), np.ones(2)
    avg, avg_b = np.empty((2, 3)), np.empty(2)
    wm = make_weight_matrix(
        coef, intercept, average_coef=avg, average_intercept=avg_b,
        average_start=6,
    )  # fmt: skip
    wm.py_average_rows(4, 4)  # rows 1-4: none counts
    assert wm.average_count == 0 and wm.averaged() is None
    wm.py_average_rows(8, 4)  # rows 5-8: 6, 7 and 8 count
    assert wm.average_count == 3
