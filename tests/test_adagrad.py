"""Per-feature steps (``learning_rate='adagrad'``) of U-max and Implicit
SGD: the kernels against the NumPy references of tests/_reference.py
(the same update, row by row: lazy column decay, accumulators, steps),
the estimators' bookkeeping (fresh fits, warm starts, partial_fit,
pickling, averaging) replayed by the references, and the combinations
that are refused."""

import pickle

import numpy as np
import pytest
from _kernel_options import implicit_options, umax_options
from _reference import (
    clone_rng,
    implicit_epoch_reference,
    new_adagrad,
    random_problem,
    umax_epoch_reference,
)
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.utils._param_validation import InvalidParameterError

from sksoftmax import (
    ImplicitSGDClassifier,
    SampledSoftmaxClassifier,
    SCENTClassifier,
    StochasticBoundClassifier,
    UMaxSoftmaxClassifier,
)
from sksoftmax._implicit_fast import implicit_epoch32, implicit_epoch64
from sksoftmax._shared._adagrad import make_adagrad
from sksoftmax._shared._codes import Schedule
from sksoftmax._shared._dataset import make_dataset
from sksoftmax._shared._random import AliasTable, RandomState
from sksoftmax._shared._weight_matrix import make_weight_matrix
from sksoftmax._umax_fast import umax_epoch32, umax_epoch64

FORMATS = ["dense", "csr"]
DTYPES = [np.float64, np.float32]
RTOL = {np.float64: 1e-8, np.float32: 1e-4}
ADAGRAD_CODE = int(Schedule.SCHEDULE_ADAGRAD)
# alpha: none, mild, and strong enough that column scales are folded
# (below 1e-9) inside the epochs
ALPHAS = [0.0, 0.05, 40.0]


def _start(dtype, K, d, n, seed=5):
    rng0 = np.random.default_rng(seed)
    W = (0.3 * rng0.standard_normal((K, d))).astype(dtype)
    b = (0.1 * rng0.standard_normal(K)).astype(dtype)
    u = np.abs(rng0.standard_normal(n))
    return W, b, u


def _table(sampler, y, K):
    if sampler == "uniform":
        return None
    # skewed, so that hits of y_i and repeated draws come up
    return AliasTable(np.bincount(y, minlength=K) ** 2 + 1.0)


# ------------------------------------------------------------ the kernels
@pytest.mark.kernel
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("alpha", ALPHAS)
@pytest.mark.parametrize("sampler", ["uniform", "frequency"])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_umax_adagrad_matches_reference(
    fmt, dtype, alpha, sampler, fit_intercept
):
    X, y, sw = random_problem(fmt, dtype)
    K, d = 7, X.shape[1]
    W, b, u = _start(dtype, K, d, X.shape[0])
    # a tight bound so that the end-of-epoch projection acts
    bound_w = 1.5 if alpha > 0 else np.inf
    weight_log_k = sw.sum() * np.log(K) if alpha > 0 else np.inf
    table = _table(sampler, y, K)
    ds = make_dataset(X, sw)
    rng = RandomState(11)
    ref_rng = clone_rng(rng)
    coef, intercept, u_k = W.copy(), b.copy(), u.copy()
    wm = make_weight_matrix(coef, intercept)
    G, Gb = np.zeros(d), np.zeros(1)
    acc = new_adagrad(d)
    eta0 = 0.3
    kernel = umax_epoch64 if dtype == np.float64 else umax_epoch32
    for epoch, init_u in enumerate([True, False]):
        order = np.arange(X.shape[0], dtype=np.intp)
        state = make_adagrad(coef, G, Gb, eta0, alpha, fit_intercept)
        status, obj, wsum, t, _, _ = kernel(
            ds,
            wm,
            y,
            u_k,
            rng,
            order,
            epoch * X.shape[0],
            umax_options(
                n_sampled=3,
                delta=1.0,
                vanilla=False,
                raman=False,
                init_u=init_u,
                schedule=ADAGRAD_CODE,
                eta_epoch=eta0,
                eta0=eta0,
                power_t=0.5,
                alpha=alpha,
                bound_w=bound_w,
                bound_u=np.inf,
                weight_log_k=weight_log_k,
                fit_intercept=fit_intercept,
                shuffle=True,
            ),
            sampler=table,
            adagrad=state,
        )  # fmt: skip
        assert status == 0
        W, b, u, obj_ref, wsum_ref, t_ref = umax_epoch_reference(
            X, y, sw, W, b, u, ref_rng, m=3, delta=1.0, vanilla=False,
            init_u=init_u, eta_epoch=eta0, t=epoch * X.shape[0],
            alpha=alpha, bound_w=bound_w, weight_log_k=weight_log_k,
            fit_intercept=fit_intercept, sampler=table, adagrad=acc,
        )  # fmt: skip
        tol = RTOL[dtype]
        assert_allclose(wm.true_coef(), W, rtol=tol, atol=tol)
        assert_allclose(intercept, b, rtol=tol, atol=tol)
        assert_allclose(u_k, u, rtol=tol, atol=tol)
        assert_allclose(G, acc["G"], rtol=tol)
        assert_allclose(Gb, acc["Gb"], rtol=tol)
        assert_allclose(obj, obj_ref, rtol=tol)
        assert wsum == pytest.approx(wsum_ref) and t == t_ref
        if alpha > 0:
            # the fold at the end of the epoch makes ||W||^2 exact
            assert wm.sq_norm == pytest.approx(np.sum(W * W), rel=tol)
        # continue both from the reference (float32 drift)
        wm.fold_scale()
        coef[:], intercept[:], u_k[:] = W, b, u
        G[:], Gb[:] = acc["G"], acc["Gb"]
        wm = make_weight_matrix(coef, intercept)
    if not fit_intercept:
        assert_array_equal(Gb, 0.0)


@pytest.mark.kernel
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("alpha", ALPHAS)
@pytest.mark.parametrize("sampler", ["uniform", "frequency"])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("raise_u", [True, False])
def test_implicit_adagrad_matches_reference(
    fmt, dtype, alpha, sampler, fit_intercept, raise_u
):
    X, y, sw = random_problem(fmt, dtype)
    if not fit_intercept:
        # the implicit step needs ||x|| > 0 without intercepts
        keep = np.flatnonzero(np.asarray((X != 0).sum(axis=1)).ravel() > 0)
        X, y, sw = X[keep], y[keep], sw[keep]
    K, d = 7, X.shape[1]
    W, b, u = _start(dtype, K, d, X.shape[0])
    table = _table(sampler, y, K)
    ds = make_dataset(X, sw)
    rng = RandomState(11)
    ref_rng = clone_rng(rng)
    coef, intercept, u_k = W.copy(), b.copy(), u.copy()
    wm = make_weight_matrix(coef, intercept)
    G, Gb = np.zeros(d), np.zeros(1)
    acc = new_adagrad(d)
    eta0 = 0.5
    kernel = implicit_epoch64 if dtype == np.float64 else implicit_epoch32
    for epoch, init_u in enumerate([True, False]):
        order = np.arange(X.shape[0], dtype=np.intp)
        state = make_adagrad(coef, G, Gb, eta0, alpha, fit_intercept)
        status, obj, wsum, t, _, _, _ = kernel(
            ds,
            wm,
            y,
            u_k,
            rng,
            order,
            epoch * X.shape[0],
            implicit_options(
                n_sampled=1,
                init_u=init_u,
                schedule=ADAGRAD_CODE,
                eta_epoch=eta0,
                eta0=eta0,
                power_t=0.5,
                alpha=alpha,
                fit_intercept=fit_intercept,
                shuffle=True,
                raise_u=raise_u,
            ),
            sampler=table,
            adagrad=state,
        )  # fmt: skip
        assert status == 0
        W, b, u, obj_ref, wsum_ref, t_ref = implicit_epoch_reference(
            X, y, sw, W, b, u, ref_rng, init_u=init_u, eta_epoch=eta0,
            t=epoch * X.shape[0], alpha=alpha, fit_intercept=fit_intercept,
            sampler=table, adagrad=acc, raise_u=raise_u,
        )  # fmt: skip
        tol = RTOL[dtype]
        assert_allclose(wm.true_coef(), W, rtol=tol, atol=tol)
        assert_allclose(intercept, b, rtol=tol, atol=tol)
        assert_allclose(u_k, u, rtol=tol, atol=tol)
        assert_allclose(G, acc["G"], rtol=tol)
        assert_allclose(Gb, acc["Gb"], rtol=tol)
        assert_allclose(obj, obj_ref, rtol=tol)
        assert wsum == pytest.approx(wsum_ref) and t == t_ref
        wm.fold_scale()
        coef[:], intercept[:], u_k[:] = W, b, u
        G[:], Gb[:] = acc["G"], acc["Gb"]
        wm = make_weight_matrix(coef, intercept)


# ------------------------------------------------- the estimators, replayed
# the small problem, estimators and replay of tests/test_average.py
from test_average import (  # noqa: E402
    D,
    K,
    Replay,
    _check,
    _close,
    _estimator,
    _problem,
)


class AdaGradReplay(Replay):
    """The estimators' runs replayed with learning_rate='adagrad': a
    constant eta0, the accumulators kept from the fresh start on."""

    def start_at_prior(self, y, sw, dtype):
        super().start_at_prior(y, sw, dtype)
        self.acc = new_adagrad(D)

    def epoch(self, X, y, sw, order, init_u):
        est = self.est
        common = dict(
            eta_epoch=est.eta0, t=self.t, alpha=est.alpha, order=order,
            iterates=self.iterates, adagrad=self.acc,
        )  # fmt: skip
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
        else:
            self.W, self.b, self.u, _, _, self.t = implicit_epoch_reference(
                X, y, sw, self.W, self.b, self.u, self.rng, init_u=init_u,
                raise_u=False, **common,  # raise_u is off under adagrad
            )  # fmt: skip
        self.epochs += 1


def _adagrad_estimator(kind, **params):
    return _estimator(kind, learning_rate="adagrad", **params)


def _check_state(clf, replay, dtype):
    _close(clf.coef_, replay.W, dtype)
    _close(clf.intercept_, replay.b, dtype)
    tol = RTOL[dtype]
    assert_allclose(clf._state.adagrad.sq_grad, replay.acc["G"], rtol=tol)
    assert_allclose(clf._state.adagrad.sq_grad_intercept, replay.acc["Gb"], rtol=tol)


@pytest.mark.parametrize("kind", ["umax", "implicit"])
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("alpha", [0.0, 0.05])
def test_fit_is_the_replayed_update(kind, fmt, dtype, alpha):
    X, y, sw = _problem(fmt, dtype)
    clf = _adagrad_estimator(kind, max_iter=3, alpha=alpha)
    clf.fit(X, y, sample_weight=sw)
    replay = AdaGradReplay(kind, clf)
    replay.fit(X, y, sw, 3)
    _check_state(clf, replay, dtype)
    assert clf.coef_.dtype == dtype
    # O(D) accumulators in float64, one per column and one for intercepts
    assert clf._state.adagrad.sq_grad.shape == (D,)
    assert clf._state.adagrad.sq_grad.dtype == np.float64
    assert clf._state.adagrad.sq_grad_intercept.shape == (1,)
    if alpha > 0:
        # loss_curve_'s penalty from the exact ||W||^2 of the epoch's end
        assert np.isfinite(clf.loss_curve_).all()


@pytest.mark.parametrize("kind", ["umax", "implicit"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_average_with_adagrad_is_the_mean_of_the_iterates(kind, dtype):
    X, y, sw = _problem("csr", dtype)
    clf = _adagrad_estimator(kind, max_iter=2, average=True)
    clf.fit(X, y, sample_weight=sw)
    replay = AdaGradReplay(kind, clf)
    replay.fit(X, y, sw, 2)
    _check(clf, replay, dtype)
    assert_allclose(clf._state.adagrad.sq_grad, replay.acc["G"], rtol=RTOL[dtype])


@pytest.mark.parametrize("kind", ["umax", "implicit"])
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("alpha", [0.0, 0.05])
def test_partial_fit_continues_the_accumulators(kind, fmt, alpha):
    dtype = np.float64
    X, y, sw = _problem(fmt, dtype)
    clf = _adagrad_estimator(kind, alpha=alpha)
    replay = AdaGradReplay(kind, clf)
    for rows in (slice(0, 17), slice(17, None)):
        clf.partial_fit(X[rows], y[rows], classes=np.arange(K),
                        sample_weight=sw[rows])  # fmt: skip
        replay.partial_fit(X[rows], y[rows], sw[rows])
        _check_state(clf, replay, dtype)
    # a fresh fit starts the accumulators over
    G = clf._state.adagrad.sq_grad.copy()
    clf.set_params(max_iter=1).fit(X[:17], y[:17], sample_weight=sw[:17])
    assert np.all(clf._state.adagrad.sq_grad <= G + 1e-12)
    assert not np.allclose(clf._state.adagrad.sq_grad, G)


@pytest.mark.parametrize("kind", ["umax", "implicit"])
@pytest.mark.parametrize("alpha", [0.0, 0.05])
def test_warm_start_continues_the_accumulators(kind, alpha):
    X, y, sw = _problem("csr", np.float64)
    two = _adagrad_estimator(kind, max_iter=2, alpha=alpha, shuffle=False)
    two.fit(X, y, sample_weight=sw)
    warm = _adagrad_estimator(
        kind, max_iter=1, alpha=alpha, shuffle=False, warm_start=True
    )
    warm.fit(X, y, sample_weight=sw)
    G_one = warm._state.adagrad.sq_grad.copy()
    warm.fit(X, y, sample_weight=sw)
    assert np.all(warm._state.adagrad.sq_grad >= G_one)
    for array in (
        lambda e: e.coef_,
        lambda e: e.intercept_,
        lambda e: e._state.adagrad.sq_grad,
        lambda e: e._state.adagrad.sq_grad_intercept,
        lambda e: e._row_state,
    ):
        assert_allclose(array(warm), array(two), rtol=1e-12, atol=1e-14)
    # without warm_start the second fit starts over, accumulators included
    cold = clone(warm).set_params(warm_start=False)
    cold.fit(X, y, sample_weight=sw)
    cold.fit(X, y, sample_weight=sw)
    assert_allclose(cold._state.adagrad.sq_grad, G_one, rtol=1e-12)


@pytest.mark.parametrize("kind", ["umax", "implicit"])
def test_pickle_round_trip_keeps_the_accumulators(kind):
    X, y, sw = _problem("csr", np.float64)
    clf = _adagrad_estimator(kind, alpha=0.05)
    clf.partial_fit(X[:17], y[:17], classes=np.arange(K))
    copy = pickle.loads(pickle.dumps(clf))
    assert_array_equal(copy._state.adagrad.sq_grad, clf._state.adagrad.sq_grad)
    clf.partial_fit(X[17:], y[17:])
    copy.partial_fit(X[17:], y[17:])
    assert_array_equal(copy.coef_, clf.coef_)
    assert_array_equal(copy._state.adagrad.sq_grad, clf._state.adagrad.sq_grad)


@pytest.mark.parametrize("kind", ["umax", "implicit"])
def test_switching_schedules_on_warm_start(kind):
    X, y, sw = _problem("csr", np.float64)
    clf = _adagrad_estimator(kind, max_iter=1, warm_start=True)
    clf.fit(X, y)
    clf.set_params(learning_rate="constant").fit(X, y)
    assert clf._state.adagrad is None
    clf.set_params(learning_rate="adagrad").fit(X, y)
    # switched on again: from zero, one epoch's worth
    fresh = _adagrad_estimator(kind, max_iter=1).fit(X, y)
    assert clf._state.adagrad.sq_grad.shape == fresh._state.adagrad.sq_grad.shape


# --------------------------------------------------------- refused settings
@pytest.mark.parametrize(
    "est",
    [
        SampledSoftmaxClassifier(),
        SCENTClassifier(),
        StochasticBoundClassifier(),
    ],
    ids=lambda e: type(e).__name__,
)
def test_other_estimators_refuse_adagrad(est):
    X, y, _ = _problem("csr", np.float64)
    with pytest.raises(InvalidParameterError, match="learning_rate"):
        est.set_params(learning_rate="adagrad").fit(X, y)
    assert issubclass(InvalidParameterError, ValueError)


@pytest.mark.parametrize("kind", ["umax", "implicit"])
@pytest.mark.parametrize("average", [True, 5])
def test_adagrad_with_penalty_refuses_average(kind, average):
    X, y, _ = _problem("csr", np.float64)
    clf = _adagrad_estimator(kind, alpha=0.01, average=average)
    for call in (
        lambda: clf.fit(X, y),
        lambda: clf.partial_fit(X, y, classes=np.arange(K)),
    ):
        with pytest.raises(ValueError, match="learning_rate='adagrad'") as e:
            call()
        assert "alpha" in str(e.value) and "average" in str(e.value)
    # either alone is fine
    _adagrad_estimator(kind, alpha=0.01).fit(X, y)
    _adagrad_estimator(kind, average=average).fit(X, y)


# ------------------------------------------------------------ eta0='auto'
def _zipf(n_samples):
    from sksoftmax.datasets import make_softmax_classification

    return make_softmax_classification(
        n_samples=n_samples, n_features=60, n_classes=30, density=0.1,
        class_exponent=1.0, random_state=0,
    )  # fmt: skip


@pytest.mark.parametrize(
    "Est,rule",
    [
        (UMaxSoftmaxClassifier, lambda c: 3.0),
        (ImplicitSGDClassifier, lambda c: 300.0 * c),
    ],
)
def test_auto_eta0_rule_and_pilot(Est, rule):
    # below the pilot's 500 rows: the closed form of the rows seen
    X, y = _zipf(300)
    c = float(X.multiply(X).sum(axis=1).mean()) + 1.0
    clf = Est(learning_rate="adagrad", max_iter=2, tol=None, random_state=0)
    clf.fit(X, y)
    assert clf.eta0_ == pytest.approx(rule(c), rel=1e-12)
    assert clf.eta0_trials_ is None
    # with enough rows the pilot starts from the rule, trials on adagrad
    X, y = _zipf(800)
    c = float(X.multiply(X).sum(axis=1).mean()) + 1.0
    clf = Est(learning_rate="adagrad", max_iter=1, tol=None, random_state=0)
    clf.fit(X, y)
    assert clf.eta0_trials_[0, 0] == pytest.approx(rule(c), rel=1e-12)
    assert clf.eta0_ in clf.eta0_trials_[:, 0]
    assert np.isfinite(clf.eta0_trials_[:, 1]).all()


@pytest.mark.kernel
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_implicit_adagrad_step_is_the_preconditioned_proximal_point(
    fit_intercept,
):
    # theta' = theta - P grad f(theta'), P = eta0 diag(p_j) on W's columns,
    # eta0 p_b on b, eta0 on u: checked on one row with K = 2 (the class
    # drawn is the other one), independently of the reference's algebra
    x = np.array([[0.0, 1.5, -0.7, 0.0, 2.0]])
    d, K, s, eta0 = x.shape[1], 2, 1.3, 0.8
    y = np.array([0], dtype=np.intp)
    rng0 = np.random.default_rng(3)
    W = rng0.standard_normal((K, d))
    b = rng0.standard_normal(K) if fit_intercept else np.zeros(K)
    u = np.array([0.4])
    G = np.abs(rng0.standard_normal(d))
    G[0] = 0.0  # a column without gradient yet (x_0 = 0 anyway)
    Gb = np.array([0.7])
    coef, intercept, u_k = W.copy(), b.copy(), u.copy()
    G_k, Gb_k = G.copy(), Gb.copy()
    wm = make_weight_matrix(coef, intercept)
    state = make_adagrad(coef, G_k, Gb_k, eta0, 0.0, fit_intercept)
    status, *_ = implicit_epoch64(
        make_dataset(x, np.array([s])),
        wm,
        y,
        u_k,
        RandomState(0),
        np.arange(1, dtype=np.intp),
        0,
        implicit_options(
            n_sampled=1,
            init_u=False,
            schedule=ADAGRAD_CODE,
            eta_epoch=eta0,
            eta0=eta0,
            power_t=0.5,
            alpha=0.0,
            fit_intercept=fit_intercept,
            shuffle=False,
        ),
        sampler=None,
        adagrad=state,
    )  # fmt: skip
    assert status == 0
    wm.fold_scale()
    # the accumulators took the gradient at the old point (c for class 1,
    # -c for class 0)
    c = s * (K - 1) * np.exp(W[1] @ x[0] + b[1] - W[0] @ x[0] - b[0] - u[0])
    assert_allclose(G_k, G + 2 * c**2 * x[0] ** 2, rtol=1e-12)
    assert_allclose(Gb_k, Gb + (2 * c**2 if fit_intercept else 0.0))
    p = 1 / np.sqrt(1e-8 + G_k)
    p_b = 1 / np.sqrt(1e-8 + Gb_k[0])
    # the gradient of the sampled f at the new point
    z = coef[1] @ x[0] + intercept[1] - coef[0] @ x[0] - intercept[0]
    lam = s * (K - 1) * np.exp(z - u_k[0])
    grad_u = s * (1 - np.exp(-u_k[0])) - lam
    assert_allclose(u_k[0], u[0] - eta0 * grad_u, rtol=1e-10)
    assert_allclose(coef[1], W[1] - eta0 * p * lam * x[0], atol=1e-10)
    assert_allclose(coef[0], W[0] + eta0 * p * lam * x[0], atol=1e-10)
    if fit_intercept:
        assert_allclose(intercept, b + eta0 * p_b * lam * np.array([1, -1]),
                        atol=1e-10)  # fmt: skip
    else:
        assert_array_equal(intercept, 0.0)
