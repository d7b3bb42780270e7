"""Streams that meet new classes: ``allow_new_classes=True`` (issue 35,
item 3).

A model that adds classes as they arrive ends, in held-out log-loss, within
the seeds' noise of the same estimator told every class up front; pickling
mid-stream changes nothing; predict_proba's columns follow ``classes_``
(known classes sorted, new ones appended in order of arrival); a new class
starts at the class-prior intercept with its row of W at zero; the growth
is amortised (a buffer reallocated O(log K) times, not per class); without
the option a new label is the error it was.
"""

import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from sksoftmax import (
    ARLogisticClassifier,
    ARProbitClassifier,
    ARSoftmaxClassifier,
    ImplicitSGDClassifier,
    SampledSoftmaxClassifier,
    SCENTClassifier,
    SoftmaxClassifier,
    StochasticBoundClassifier,
    UMaxSoftmaxClassifier,
)
from sksoftmax._new_classes import grow_rows
from sksoftmax.datasets import make_softmax_classification

# every estimator with partial_fit whose state grows (the bound method
# refuses the option), with the options that give each its per-class state
# (iterate averaging, the frequency sampler, momentum, per-coordinate
# steps)
FACTORIES = {
    "umax": lambda **kw: UMaxSoftmaxClassifier(
        sampler="frequency", **kw
    ),
    "umax-avg": lambda **kw: UMaxSoftmaxClassifier(average=1, **kw),
    "implicit": lambda **kw: ImplicitSGDClassifier(**kw),
    "implicit-adagrad": lambda **kw: ImplicitSGDClassifier(
        learning_rate="adagrad", **kw
    ),
    "sampled": lambda **kw: SampledSoftmaxClassifier(average=True, **kw),
    "scent": lambda **kw: SCENTClassifier(batch_size=16, **kw),
    "scent-momentum": lambda **kw: SCENTClassifier(
        batch_size=16, momentum=0.9, **kw
    ),
    "ar-softmax": lambda **kw: ARSoftmaxClassifier(**kw),
    "ar-probit": lambda **kw: ARProbitClassifier(**kw),
    "ar-logistic": lambda **kw: ARLogisticClassifier(**kw),
    "softmax-exact": lambda **kw: SoftmaxClassifier(solver="exact", **kw),
    "softmax-scent": lambda **kw: SoftmaxClassifier(solver="scent", **kw),
}

N_CLASSES = 16
BATCH = 100


@pytest.fixture(scope="module")
def problem():
    """Sparse rows of 16 classes; a stream whose first half holds classes
    0..7 only, then all; held-out rows of every class."""
    X, y = make_softmax_classification(
        n_samples=4000,
        n_features=100,
        n_classes=N_CLASSES,
        density=0.1,
        random_state=0,
    )
    X_test, y_test = X[3000:], y[3000:]
    X, y = X[:3000], y[:3000]
    return X, y, X_test, y_test, _batches(y, 0)


def _batches(y, seed):
    """Batches of a stream whose first half holds half the rows of classes
    0..7 only, in an order drawn from ``seed``."""
    rng = np.random.RandomState(seed)
    low = np.flatnonzero(y < N_CLASSES // 2)
    rest = np.setdiff1d(np.arange(y.shape[0]), low[: low.shape[0] // 2])
    first = rng.permutation(low[: low.shape[0] // 2])
    second = rng.permutation(rest)
    order = np.concatenate([first, second])
    return [order[i : i + BATCH] for i in range(0, order.shape[0], BATCH)]


def _stream(est, X, y, batches, classes=None, n_passes=2):
    for _ in range(n_passes):
        for i, rows in enumerate(batches):
            est.partial_fit(X[rows], y[rows], classes=classes)
    return est


def _seeded(name, seed, **kw):
    return FACTORIES[name](random_state=seed, **kw)


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_stream_matches_all_classes_up_front(problem, name):
    """Held-out log-loss of the growing model no worse, beyond the seeds'
    noise, than the model told all classes on the first call (same
    batches; the seed draws the rows' order and the estimator's
    generator): the mean difference over seeds at most three times the
    standard error of the paired differences plus the seeds' spread.
    (Growing is often better: the model told every class pushes the
    classes it has no rows of yet down for half the stream.)"""
    X, y, X_test, y_test, _ = problem
    seeds = range(4)
    grown, told = [], []
    for seed in seeds:
        batches = _batches(y, seed)
        est = _stream(
            _seeded(name, seed, allow_new_classes=True), X, y, batches
        )
        # the classes of the first half, then the others as they came
        assert_array_equal(np.sort(est.classes_[:8]), est.classes_[:8])
        assert set(est.classes_) == set(range(N_CLASSES))
        grown.append(est.log_loss(X_test, y_test))
        ref = _stream(
            _seeded(name, seed), X, y, batches, classes=np.arange(N_CLASSES)
        )
        told.append(ref.log_loss(X_test, y_test))
    grown, told = np.array(grown), np.array(told)
    assert np.all(np.isfinite(grown))
    diff = grown - told
    spread = max(grown.std(ddof=1), told.std(ddof=1))
    noise = 3.0 * (diff.std(ddof=1) / np.sqrt(len(diff)) + spread)
    # the stream's model must also have learnt: well below the uniform
    # model's log K
    assert grown.mean() < np.log(N_CLASSES) - 0.2
    assert diff.mean() <= noise, (grown, told)


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_pickle_mid_stream_is_bitwise_equal(problem, name):
    """Pickled and loaded between batches (before and after classes are
    added), the model goes on exactly as the uninterrupted one."""
    X, y, _, _, batches = problem
    batches = batches[:4] + batches[-8:]
    kw = dict(allow_new_classes=True, n_jobs=1)
    a = _stream(_seeded(name, 0, **kw), X, y, batches, n_passes=1)
    b = _seeded(name, 0, **kw)
    for i, rows in enumerate(batches):
        if i in (3, 5, 9):
            b = pickle.loads(pickle.dumps(b))
        b.partial_fit(X[rows], y[rows])
    assert_array_equal(a.classes_, b.classes_)
    assert_array_equal(a.coef_, b.coef_)
    assert_array_equal(a.intercept_, b.intercept_)
    assert_array_equal(a.predict_proba(X[:50]), b.predict_proba(X[:50]))


@pytest.mark.parametrize("name", ["umax", "scent", "softmax-exact"])
def test_string_labels_columns_follow_classes(problem, name):
    """String labels arriving out of order: classes_ is the first call's
    labels sorted, then the new ones; predict_proba's columns, predict and
    log_loss follow classes_."""
    X, y, X_test, y_test, batches = problem
    names = np.array(
        ["m%02d" % k if k < 8 else "a%02d" % (40 - k) for k in range(16)]
    )
    est = _stream(
        _seeded(name, 0, allow_new_classes=True),
        X,
        names[y],
        batches,
        n_passes=1,
    )
    first = est.classes_[:8]
    assert_array_equal(first, np.sort(names[:8]))
    assert set(est.classes_[8:]) == set(names[8:])
    assert not np.all(est.classes_[:-1] <= est.classes_[1:])  # unsorted
    proba = est.predict_proba(X_test)
    assert proba.shape == (X_test.shape[0], N_CLASSES)
    assert_array_equal(est.classes_[proba.argmax(axis=1)], est.predict(X_test))
    column = {label: k for k, label in enumerate(est.classes_)}
    idx = np.array([column[label] for label in names[y_test]])
    expected = -np.mean(np.log(proba[np.arange(idx.shape[0]), idx]))
    assert_allclose(est.log_loss(X_test, names[y_test]), expected, rtol=1e-6)
    # the twin whose labels are the codes est gave: integer labels that
    # arrive in increasing order keep classes_ sorted, and the model is
    # the same
    codes = np.array([column[label] for label in names])
    twin = _stream(
        _seeded(name, 0, allow_new_classes=True),
        X,
        codes[y],
        batches,
        n_passes=1,
    )
    assert_array_equal(twin.classes_, np.arange(N_CLASSES))
    assert twin.__dict__.get("_class_lookup") is None
    assert_allclose(proba, twin.predict_proba(X_test), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_new_class_starts_at_prior(problem, name):
    """A class added by a batch of zero weight: its row of W zero, its
    intercept the class-prior start's from the counts so far (the
    exposed mean as well when iterates are averaged)."""
    X, y, _, _, batches = problem
    est = _stream(
        _seeded(name, 0, allow_new_classes=True),
        X,
        y,
        batches[:6],
        n_passes=1,
    )
    n_old = est.classes_.shape[0]
    assert n_old == 8
    rows = batches[0][:5]
    labels = np.array([0, 1, 2, 90, 91])
    est.partial_fit(X[rows], labels, sample_weight=np.zeros(5))
    assert_array_equal(est.classes_[n_old:], [90, 91])
    assert_array_equal(est.coef_[n_old:], 0)
    K = n_old + 2
    if name.startswith("softmax"):
        if name == "softmax-exact":
            counts = np.bincount(
                y[np.concatenate(batches[:6])], minlength=K
            ).astype(float)
            w, total = 1.0, counts.sum()
        else:
            inner = est._solver.estimator
            counts, w = inner.class_count_, inner._max_row_weight
            total = counts.sum()
    else:
        counts, w, total = (
            est.class_count_,
            est._max_row_weight,
            est.class_count_.sum(),
        )
        assert_array_equal(counts[n_old:], 0)
    expected = np.log((0.0 + w / K) / (total + w))
    assert_allclose(est.intercept_[n_old:], expected, rtol=1e-6)


def test_without_the_option_a_new_label_still_raises(problem):
    X, y, _, _, batches = problem
    for est in (UMaxSoftmaxClassifier(), SoftmaxClassifier(), SCENTClassifier()):
        rows = batches[0]
        est.partial_fit(X[rows], y[rows], classes=np.arange(8))
        rows = batches[-1]
        with pytest.raises(ValueError, match="labels not in classes"):
            est.partial_fit(X[rows], y[rows])


@pytest.mark.parametrize(
    "est", [UMaxSoftmaxClassifier(allow_new_classes=True),
            SoftmaxClassifier(allow_new_classes=True)]
)
def test_mixed_label_types_raise(problem, est):
    X, y, _, _, batches = problem
    rows = batches[0]
    est.partial_fit(X[rows], y[rows])
    with pytest.raises(ValueError, match="one type"):
        est.partial_fit(X[rows[:3]], np.array(["a", "b", "c"]))
    with pytest.raises(ValueError, match="one type"):
        est.partial_fit(X[rows[:3]], np.array([0, 1, "c"], dtype=object))
    # a float label: scikit-learn's target check already names it
    with pytest.raises(ValueError, match="one type|continuous"):
        est.partial_fit(X[rows[:3]], np.array([0.0, 1.0, 2.5]))
    # integral floats are the integer classes: no new class
    est.partial_fit(X[rows[:3]], np.array([0.0, 1.0, 2.0]))
    assert est.classes_.dtype == y.dtype
    assert est.classes_.shape[0] == 8


def test_bound_method_refuses(problem):
    X, y, _, _, batches = problem
    rows = batches[0]
    for est in (
        StochasticBoundClassifier(allow_new_classes=True),
        SoftmaxClassifier(solver="bound", allow_new_classes=True),
    ):
        with pytest.raises(ValueError, match="allow_new_classes"):
            est.partial_fit(X[rows], y[rows], classes=np.arange(16))
        with pytest.raises(ValueError, match="allow_new_classes"):
            est.fit(X[rows], y[rows])


def test_later_classes_argument_adds_labels(problem):
    """With the option, ``classes`` on a later call lists labels to add
    (none of the known ones may be missing from the model afterwards)."""
    X, y, _, _, batches = problem
    est = UMaxSoftmaxClassifier(allow_new_classes=True, random_state=0)
    rows = batches[0]
    est.partial_fit(X[rows], y[rows])
    est.partial_fit(X[rows], y[rows], classes=[3, 100, 101])
    assert_array_equal(est.classes_, list(range(8)) + [100, 101])
    assert est.coef_.shape[0] == 10


def test_growth_is_amortised():
    """Adding classes one call at a time reallocates the weights O(log K)
    times (a buffer twice as large each time), and the view in use is
    C-contiguous."""
    rng = np.random.RandomState(0)
    X = rng.rand(2, 5)
    est = SCENTClassifier(
        allow_new_classes=True, momentum=0.9, batch_size=2, eta0=0.01,
        random_state=0,
    )
    est.partial_fit(X, [0, 1])
    n_moves = 0
    where = est.coef_.__array_interface__["data"][0]
    for k in range(2, 300):
        est.partial_fit(X, [0, k])
        # a reallocation copies row 0 into a new buffer (allocated
        # before the old one is freed: a new address)
        now = est.coef_.__array_interface__["data"][0]
        n_moves += now != where
        where = now
        assert est.coef_.flags.c_contiguous
        assert est._state.velocity.shape == est.coef_.shape  # all moved
        assert est._state.velocity_slot.shape == (k + 1,)
        assert est.class_count_.shape == (k + 1,)
    assert 0 < n_moves <= int(np.log2(300)) + 1


def test_grow_rows_reference():
    """grow_rows against a plain concatenation."""
    a = np.arange(6.0).reshape(3, 2)
    b = grow_rows(a, 5, fill=-1)
    assert_array_equal(b, np.vstack([a, -np.ones((2, 2))]))
    assert b.flags.c_contiguous
    c = grow_rows(b, 6, fill=7)  # room left: the same buffer
    assert c.base is b.base
    assert_array_equal(c[:5], b)
    assert_array_equal(c[5], [7, 7])
    with pytest.raises(ValueError):
        grow_rows(c, 2)


def test_grow_rows_with_room_for_every_class_keeps_one_zero_buffer():
    """A large capacity (SCENT's momentum rows: room for every class, on a
    mapping backed as rows are written) starts at zero, grows in place
    until full and pickles as an ordinary array."""
    a = np.empty((0, 1000))
    b = grow_rows(a, 3, capacity=10_000)  # 80 MB of room
    assert b.base.shape == (10_000, 1000) and b.flags.writeable
    assert_array_equal(b, 0.0)
    b[:] = 1.0
    c = grow_rows(b, 9_000, capacity=10_000)
    assert c.base is b.base and c.flags.c_contiguous
    assert_array_equal(c[:3], 1.0)
    assert_array_equal(c[3:], 0.0)
    d = pickle.loads(pickle.dumps(c))
    assert_array_equal(d, c)


@pytest.mark.parametrize("name", ["umax-avg", "sampled", "softmax-exact"])
def test_skops_round_trip_then_grow(problem, name):
    """Loaded by skops (which need not keep coef_ and the running mean the
    same object), a model still grows consistently, even on a batch of
    zero weight."""
    sio = pytest.importorskip("skops.io")
    X, y, X_test, _, batches = problem
    est = _stream(
        _seeded(name, 0, allow_new_classes=True), X, y, batches[:3],
        n_passes=1,
    )
    data = sio.dumps(est)
    est = sio.loads(data, trusted=sio.get_untrusted_types(data=data))
    rows = batches[0][:3]
    est.partial_fit(X[rows], np.array([0, 1, 50]), sample_weight=np.zeros(3))
    K = est.classes_.shape[0]
    assert est.coef_.shape[0] == K and est.intercept_.shape == (K,)
    assert est.predict_proba(X_test[:5]).shape == (5, K)
    est.partial_fit(X[batches[-1]], y[batches[-1]])
    assert est.predict_proba(X_test[:5]).shape == (5, est.classes_.shape[0])


@pytest.mark.parametrize("alpha", [0.0, 0.01])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_exact_kernel_with_spare_columns(alpha, dtype):
    """The exact solver grown into a buffer with spare columns (the kernel
    then steps through Wt by its row stride) gives bit for bit the
    solver that had those classes from the start; the spare columns stay
    zero."""
    from sksoftmax._exact import ExactSolver

    rng = np.random.RandomState(0)
    X = rng.randn(60, 6).astype(dtype)
    X[X < 0.3] = 0
    y = rng.randint(0, 7, 60)
    w = rng.rand(60)
    b0 = rng.randn(7)
    grown = ExactSolver(eta=0.3, alpha=alpha)
    grown.setup(5, 6, dtype, b0[:5])
    grown.grow(7, b0[5:])
    assert grown.Wt.shape[1] > 7  # spare columns
    fresh = ExactSolver(eta=0.3, alpha=alpha)
    fresh.setup(7, 6, dtype, b0)
    for solver in (grown, fresh):
        for _ in range(3):
            solver.epoch(X, y, w, np.arange(60))
        solver.finalize()
    assert_array_equal(grown.coef_view(), fresh.coef_view())
    assert_array_equal(grown.b, fresh.b)
    assert_array_equal(grown.G, fresh.G)
    assert_array_equal(grown.Wt[:, 7:], 0)


def test_strided_coef_predicts_as_contiguous(problem):
    """A grown exact solver's coef_ (the first K columns of W^T, strided)
    predicts on sparse and dense rows as its contiguous copy does."""
    X, y, X_test, _, batches = problem
    est = _stream(
        _seeded("softmax-exact", 0, allow_new_classes=True), X, y,
        batches[:20], n_passes=1,
    )
    # one more class: spare columns beyond the K in use
    est.partial_fit(X[:2], np.array([0, 99]), sample_weight=np.zeros(2))
    assert est._solver.Wt.shape[1] > est.classes_.shape[0]
    assert not est.coef_.flags.c_contiguous
    assert not est.coef_.flags.f_contiguous
    ref = UMaxSoftmaxClassifier().fit(X[:40], y[:40] % 2)
    ref.coef_ = np.ascontiguousarray(est.coef_)
    ref.intercept_ = est.intercept_.copy()
    ref.classes_ = est.classes_
    for rows in (X_test[:30], X_test[:30].toarray()):
        assert_allclose(
            est.predict_proba(rows), ref.predict_proba(rows), rtol=1e-12
        )


def _growing_stream(seed=0):
    """Batches whose labels reach 0..5 in order, classes 3..5 arriving
    late, unsorted (5 before 4)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(400, 5))
    y = np.concatenate(
        [rng.integers(0, 3, 200), rng.choice([0, 1, 2, 5], 100),
         rng.integers(0, 6, 100)]
    )
    return X, y, [np.arange(k, k + 50) for k in range(0, 400, 50)]


@pytest.mark.parametrize(
    "make",
    [
        lambda **kw: UMaxSoftmaxClassifier(eta0=0.05, **kw),
        lambda **kw: SoftmaxClassifier(solver="exact", eta0=0.5, **kw),
    ],
    ids=["umax", "softmax-exact"],
)
@pytest.mark.parametrize("class_weight", ["balanced", "dict"])
def test_class_weight_follows_classes_that_arrive(make, class_weight):
    """class_weight with allow_new_classes: a dict may name classes not
    seen yet (they get their weight once they arrive), 'balanced' keeps
    the counts of the classes seen before the new ones; the stream is
    bitwise the one given the same weights as sample_weight."""
    X, y, batches = _growing_stream()
    weights = {0: 1.0, 1: 2.0, 2: 0.5, 4: 3.0, 5: 0.25}
    cw = weights if class_weight == "dict" else "balanced"
    a = make(class_weight=cw, allow_new_classes=True, random_state=0)
    b = make(allow_new_classes=True, random_state=0)
    sums, total = {}, 0.0
    for rows in batches:
        yb = y[rows]
        if class_weight == "dict":
            sw = np.array([weights.get(int(c), 1.0) for c in yb])
        else:
            # n / (n_seen n_k) over every call so far, this one included
            for c in yb:
                sums[int(c)] = sums.get(int(c), 0.0) + 1.0
            total += float(yb.shape[0])
            sw = np.array([total / (len(sums) * sums[int(c)]) for c in yb])
        a.partial_fit(X[rows], yb)
        b.partial_fit(X[rows], yb, sample_weight=sw)
    assert_array_equal(a.classes_, [0, 1, 2, 5, 3, 4])
    assert_array_equal(a.classes_, b.classes_)
    assert_allclose(a.coef_, b.coef_, rtol=1e-12, atol=1e-14)
    assert_allclose(a.intercept_, b.intercept_, rtol=1e-12, atol=1e-14)


def test_class_weight_dict_key_not_a_class_without_the_option():
    """Without allow_new_classes a dict key that is not a class is still
    scikit-learn's error."""
    X, y, batches = _growing_stream()
    est = UMaxSoftmaxClassifier(class_weight={0: 1.0, 9: 2.0})
    with pytest.raises(ValueError, match="not classes"):
        est.partial_fit(X[:50], y[:50], classes=np.arange(6))
