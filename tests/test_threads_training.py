"""Training on n_jobs threads (Hogwild epochs, ``_hogwild.pxd``) of U-max,
Implicit SGD and the sampled baselines.

A threaded epoch runs its chunks of rows concurrently, so its result
depends on the timing of the writes; what can be checked exactly is one
chunk (one round of one chunk, run by one thread): it must be the serial
step of the NumPy references of tests/_reference.py, row for row, with the
chunk's own random stream and the L2 shrinkage deferred to the end of the
round through the pending factors. The rest is checked in distribution:
threaded fits reach the single-thread objective.
"""

import warnings

import numpy as np
import pytest
from _kernel_options import (
    implicit_options,
    sampled_options,
    umax_options,
)
from _reference import (
    implicit_epoch_reference,
    random_problem,
    sampled_epoch_reference,
    umax_epoch_reference,
)
from numpy.testing import assert_allclose, assert_array_equal

from sksoftmax import (
    ARLogisticClassifier,
    ARProbitClassifier,
    ARSoftmaxClassifier,
    ImplicitSGDClassifier,
    SampledSoftmaxClassifier,
    SCENTClassifier,
    UMaxSoftmaxClassifier,
    openmp_enabled,
)
from sksoftmax._implicit_fast import implicit_epoch32, implicit_epoch64
from sksoftmax._sampled_fast import LOSSES, sampled_epoch32, sampled_epoch64
from sksoftmax._shared._dataset import make_dataset
from sksoftmax._shared._random import RandomState
from sksoftmax._shared._weight_matrix import make_weight_matrix
from sksoftmax._umax_fast import umax_epoch32, umax_epoch64
from sksoftmax.datasets import make_softmax_classification
from sksoftmax.exceptions import DivergenceError

pytestmark = pytest.mark.kernel

FORMATS = ["dense", "csr"]
DTYPES = [np.float64, np.float32]
RTOL = {np.float64: 1e-9, np.float32: 2e-4}
K = 7
CHUNK = 64  # HOGWILD_CHUNK of _hogwild.pxd


def _start(X, dtype, seed=5):
    rng0 = np.random.default_rng(seed)
    W = (0.3 * rng0.standard_normal((K, X.shape[1]))).astype(dtype)
    b = (0.1 * rng0.standard_normal(K)).astype(dtype)
    u = np.abs(rng0.standard_normal(X.shape[0]))
    return W, b, u


def _reference_draws(seed, n):
    """The shuffled order and the first chunk's stream of a threaded epoch
    that starts from RandomState(seed) with order arange(n)."""
    rng = RandomState(seed)
    order = np.arange(n, dtype=np.intp)[rng.permutation(n)]
    return order, rng.chunk_streams(1)[0]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("alpha", [0.0, 0.05])
@pytest.mark.parametrize("schedule", ["constant", "invscaling"])
def test_umax_one_chunk_matches_reference(fmt, dtype, alpha, schedule):
    X, y, sw = random_problem(fmt, dtype, n=60, K=K)
    W, b, u = _start(X, dtype)
    coef, intercept, u_k = W.copy(), b.copy(), u.copy()
    wm = make_weight_matrix(coef, intercept)
    kernel = umax_epoch64 if dtype == np.float64 else umax_epoch32
    order = np.arange(X.shape[0], dtype=np.intp)
    code = 2 if schedule == "invscaling" else 0
    status, obj, wsum, t, _, _ = kernel(
        make_dataset(X, sw),
        wm,
        y,
        u_k,
        RandomState(11),
        order,
        7,
        umax_options(
            n_sampled=3,
            delta=1.0,
            vanilla=False,
            raman=False,
            init_u=True,
            schedule=code,
            eta_epoch=0.05,
            eta0=0.5,
            power_t=0.5,
            alpha=alpha,
            bound_w=np.inf,
            bound_u=np.inf,
            weight_log_k=np.inf,
            fit_intercept=True,
            shuffle=True,
            n_threads=2,
        ),
        sampler=None,
        adagrad=None,
    )
    assert status == 0
    ref_order, stream = _reference_draws(11, X.shape[0])
    assert_array_equal(order, ref_order)
    W, b, u, obj_ref, wsum_ref, t_ref = umax_epoch_reference(
        X,
        y,
        sw,
        W,
        b,
        u,
        stream,
        m=3,
        delta=1.0,
        vanilla=False,
        init_u=True,
        eta_epoch=0.05,
        eta0=0.5,
        schedule=schedule,
        t=7,
        alpha=alpha,
        shuffle=False,
        order=ref_order,
    )
    assert_allclose(wm.true_coef(), W, rtol=RTOL[dtype], atol=RTOL[dtype])
    assert_allclose(intercept, b, rtol=RTOL[dtype], atol=RTOL[dtype])
    assert_allclose(u_k, u, rtol=RTOL[dtype], atol=RTOL[dtype])
    assert_allclose(obj, obj_ref, rtol=RTOL[dtype])
    assert_allclose(wm.sq_norm, (W**2).sum(), rtol=RTOL[dtype] * 10)
    assert wsum == pytest.approx(wsum_ref) and t == t_ref


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("alpha", [0.0, 0.05])
def test_implicit_one_chunk_matches_reference(fmt, dtype, alpha):
    X, y, sw = random_problem(fmt, dtype, n=60, K=K)
    W, b, u = _start(X, dtype)
    coef, intercept, u_k = W.copy(), b.copy(), u.copy()
    wm = make_weight_matrix(coef, intercept)
    kernel = implicit_epoch64 if dtype == np.float64 else implicit_epoch32
    order = np.arange(X.shape[0], dtype=np.intp)
    status, obj, wsum, t, *_ = kernel(
        make_dataset(X, sw),
        wm,
        y,
        u_k,
        RandomState(3),
        order,
        0,
        implicit_options(
            n_sampled=1,
            init_u=True,
            schedule=0,
            eta_epoch=0.5,
            eta0=0.5,
            power_t=0.5,
            alpha=alpha,
            fit_intercept=True,
            shuffle=True,
            raise_u=False,
            n_threads=2,
        ),
        sampler=None,
        adagrad=None,
    )
    assert status == 0
    ref_order, stream = _reference_draws(3, X.shape[0])
    W, b, u, obj_ref, wsum_ref, t_ref = implicit_epoch_reference(
        X,
        y,
        sw,
        W,
        b,
        u,
        stream,
        init_u=True,
        eta_epoch=0.5,
        alpha=alpha,
        shuffle=False,
        order=ref_order,
    )
    rtol = RTOL[dtype] * (10 if dtype == np.float64 else 1)
    assert_allclose(wm.true_coef(), W, rtol=rtol, atol=rtol)
    assert_allclose(intercept, b, rtol=rtol, atol=rtol)
    assert_allclose(u_k, u, rtol=rtol, atol=rtol)
    assert_allclose(obj, obj_ref, rtol=rtol)
    assert wsum == pytest.approx(wsum_ref) and t == t_ref


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("loss", sorted(LOSSES))
@pytest.mark.parametrize("alpha", [0.0, 0.05])
def test_sampled_one_minibatch_matches_reference(fmt, dtype, loss, alpha):
    # one minibatch per epoch: a round of one step, run by one thread
    X, y, sw = random_problem(fmt, dtype, n=60, K=K)
    W, b, _ = _start(X, dtype)
    coef, intercept = W.copy(), b.copy()
    wm = make_weight_matrix(coef, intercept)
    kernel = sampled_epoch64 if dtype == np.float64 else sampled_epoch32
    order = np.arange(X.shape[0], dtype=np.intp)
    status, obj, wsum, t, _, _ = kernel(
        make_dataset(X, sw),
        wm,
        y,
        RandomState(8),
        order,
        0,
        sampled_options(
            loss=LOSSES[loss],
            batch_size=X.shape[0],
            n_sampled=4,
            schedule=0,
            eta_epoch=0.3,
            eta0=0.3,
            power_t=0.5,
            alpha=alpha,
            fit_intercept=True,
            shuffle=True,
            n_threads=2,
        ),
        sampler=None,
    )
    assert status == 0
    ref_order, stream = _reference_draws(8, X.shape[0])
    W, b, obj_ref, wsum_ref, t_ref = sampled_epoch_reference(
        X,
        y,
        sw,
        W,
        b,
        stream,
        loss=loss,
        batch_size=X.shape[0],
        m=4,
        eta_epoch=0.3,
        alpha=alpha,
        shuffle=False,
        order=ref_order,
    )
    assert_allclose(wm.true_coef(), W, rtol=RTOL[dtype], atol=RTOL[dtype])
    assert_allclose(intercept, b, rtol=RTOL[dtype], atol=RTOL[dtype])
    assert_allclose(obj, obj_ref, rtol=RTOL[dtype])
    assert wsum == pytest.approx(wsum_ref) and t == t_ref


def test_chunk_streams_differ_and_repeat():
    a = RandomState(4).chunk_streams(3)
    b = RandomState(4).chunk_streams(3)
    draws = [r.randint(2**40, 4) for r in a]
    assert all((d == r.randint(2**40, 4)).all() for d, r in zip(draws, b))
    assert len({tuple(d) for d in draws}) == 3


# ------------------------------------------------- threaded fits as a whole
needs_openmp = pytest.mark.skipif(
    not openmp_enabled(), reason="built without OpenMP: one thread only"
)


@pytest.fixture(scope="module")
def problem():
    # 8,000 rows: 125 chunks, four rounds on two threads; 200 classes and
    # 20 nonzeros per row, so that the threads' writes rarely collide
    X, y = make_softmax_classification(
        8000, 2000, 200, density=0.01, topic_weight=0.12, random_state=0
    )
    return X, y


def _train_loss(est, X, y):
    return est.log_loss(X, y)


@needs_openmp
@pytest.mark.parametrize(
    "make",
    [
        lambda **kw: UMaxSoftmaxClassifier(**kw),
        lambda **kw: ImplicitSGDClassifier(**kw),
        lambda **kw: SampledSoftmaxClassifier(batch_size=16, **kw),
    ],
    ids=["umax", "implicit", "sampled"],
)
@pytest.mark.parametrize("alpha", [0.0, 1e-3])
@pytest.mark.parametrize("average", [False, True])
def test_threaded_fit_reaches_single_thread_objective(
    problem, make, alpha, average
):
    X, y = problem
    kw = dict(max_iter=8, tol=None, alpha=alpha, average=average)
    serial = [
        _train_loss(make(random_state=s, **kw).fit(X, y), X, y)
        for s in range(3)
    ]
    threaded = [
        _train_loss(make(random_state=s, n_jobs=2, **kw).fit(X, y), X, y)
        for s in range(3)
    ]
    prior = np.log(np.bincount(y).size)
    assert max(serial) < 0.8 * prior
    # Within the seeds' spread plus 1.5% (measured: 0.2% at most): the
    # threads' lost and stale updates cost no more. The average weighs the
    # rows of a round at the round's last iterate, a mean tilted to later
    # iterates, measured 0.8-2.0% below the serial average's loss here.
    spread = max(serial) - min(serial)
    tol = 0.04 if average else 0.015
    assert abs(np.mean(threaded) - np.mean(serial)) <= (
        spread + tol * np.mean(serial)
    )


@needs_openmp
def test_threaded_fit_is_not_the_serial_one_but_keeps_eta0(problem):
    X, y = problem
    one = UMaxSoftmaxClassifier(max_iter=2, tol=None, random_state=0)
    two = UMaxSoftmaxClassifier(max_iter=2, tol=None, random_state=0, n_jobs=2)
    one.fit(X, y)
    two.fit(X, y)
    # the pilot of eta0='auto' runs on one thread: the same step
    assert two.eta0_ == one.eta0_
    assert not np.array_equal(one.coef_, two.coef_)


def test_one_thread_is_bitwise_reproducible(problem):
    X, y = problem
    fits = [
        ImplicitSGDClassifier(
            max_iter=2, tol=None, random_state=1, n_jobs=n
        ).fit(X, y)
        for n in (None, 1)
    ]
    assert_array_equal(fits[0].coef_, fits[1].coef_)
    assert_array_equal(fits[0].intercept_, fits[1].intercept_)


@needs_openmp
def test_adagrad_trains_on_one_thread_with_a_warning(problem):
    X, y = problem
    kw = dict(learning_rate="adagrad", max_iter=2, tol=None, random_state=0)
    one = UMaxSoftmaxClassifier(**kw).fit(X, y)
    with pytest.warns(UserWarning, match="adagrad.*one thread") as record:
        two = UMaxSoftmaxClassifier(n_jobs=2, **kw).fit(X, y)
    assert sum("one thread" in str(w.message) for w in record) == 1
    assert_array_equal(one.coef_, two.coef_)


def _outcome(est, X, y):
    """How a fit ended: 'diverged' (DivergenceError naming eta0), 'warned'
    (a warning naming eta0) or 'silent'."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        try:
            est.fit(X, y)
        except DivergenceError as exc:
            assert "eta0" in str(exc)
            return "diverged"
    if any("eta0" in str(w.message) for w in record):
        return "warned"
    return "silent"


@needs_openmp
@pytest.mark.parametrize(
    "cls", [UMaxSoftmaxClassifier, SampledSoftmaxClassifier]
)
def test_threaded_runaway_step_is_reported(problem, cls):
    # the explicit methods at a step far too large (Implicit SGD's
    # proximal step does not run away)
    X, y = problem
    kw = dict(
        eta0=1e6,
        learning_rate="constant",
        max_iter=3,
        tol=None,
        random_state=0,
    )
    serial = _outcome(cls(**kw), X, y)
    threaded = _outcome(cls(n_jobs=2, **kw), X, y)
    assert serial != "silent" and threaded != "silent"


# ----------------------------------------------- augment and reduce threads
@needs_openmp
@pytest.mark.parametrize(
    "cls", [ARSoftmaxClassifier, ARProbitClassifier, ARLogisticClassifier]
)
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "params",
    [{}, {"alpha": 1e-3}, {"learning_rate": "kucukelbir"}],
    ids=["default", "alpha", "kucukelbir"],
)
def test_ar_threads_give_the_one_thread_model(cls, fmt, dtype, params):
    # the local steps run on the threads from pre-drawn noise and every sum
    # is taken in row or class order: the same model, bit for bit
    X, y = make_softmax_classification(
        600, 300, 40, density=0.03, random_state=1
    )
    X = X.astype(dtype)
    if fmt == "dense":
        X = X.toarray()
    kw = dict(max_iter=2, tol=None, random_state=0, batch_size=100, **params)
    one = cls(**kw).fit(X, y)
    two = cls(n_jobs=2, **kw).fit(X, y)
    assert_array_equal(one.coef_, two.coef_)
    assert_array_equal(one.intercept_, two.intercept_)
    assert_array_equal(one.loss_curve_, two.loss_curve_)


# ------------------------------------------------------------ SCENT threads
@needs_openmp
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "params",
    [
        {},
        {"negatives": "uniform"},
        {"momentum": 1.0},
        {"variant": "bsgd", "alpha": 1e-3},
    ],
    ids=["default", "uniform", "no-momentum", "bsgd"],
)
def test_scent_threads_give_the_one_thread_model(fmt, dtype, params):
    # scores and gradient class by class, each in row order: the same
    # model, bit for bit
    X, y = make_softmax_classification(
        600, 300, 40, density=0.03, random_state=1
    )
    X = X.astype(dtype)
    if fmt == "dense":
        X = X.toarray()
    kw = dict(max_iter=2, tol=None, random_state=0, batch_size=64, **params)
    one = SCENTClassifier(**kw).fit(X, y)
    two = SCENTClassifier(n_jobs=2, **kw).fit(X, y)
    assert_array_equal(one.coef_, two.coef_)
    assert_array_equal(one.intercept_, two.intercept_)
    assert_array_equal(one.loss_curve_, two.loss_curve_)
