"""UMaxSoftmaxClassifier: the estimator contract and the fitted model."""

import pickle
import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _kernel_options import umax_options
from _reference import (
    double_sum_gradient,
    gradient_problem,
    monte_carlo_z,
    sampler_table,
    softmax_objective,
)
from numpy.testing import assert_allclose, assert_array_equal
from sklearn import config_context
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from sksoftmax import (
    DivergenceError,
    ImplicitSGDClassifier,
    SampledSoftmaxClassifier,
    UMaxSoftmaxClassifier,
    _class_sampler,
)
from sksoftmax._shared._dataset import make_dataset
from sksoftmax._shared._random import AliasTable, RandomState
from sksoftmax._shared._weight_matrix import make_weight_matrix
from sksoftmax._umax_fast import umax_epoch64


@pytest.fixture(scope="module")
def problem():
    X, y = make_classification(
        n_samples=500,
        n_features=10,
        n_informative=6,
        n_classes=4,
        random_state=0,
    )
    return StandardScaler().fit_transform(X), y


def _quiet(**kw):
    return UMaxSoftmaxClassifier(tol=None, random_state=0, **kw)


def test_objective_within_one_percent_of_lbfgs(problem):
    X, y = problem
    alpha = 0.01
    lr = LogisticRegression(C=1 / (alpha * len(y)), tol=1e-10, max_iter=5000)
    lr.fit(X, y)
    ref = softmax_objective(lr.coef_, lr.intercept_, X, y, alpha)
    for seed in range(3):
        clf = UMaxSoftmaxClassifier(
            eta0=0.03, alpha=alpha, max_iter=50, tol=None, random_state=seed
        ).fit(X, y)
        ours = softmax_objective(clf.coef_, clf.intercept_, X, y, alpha)
        assert ours == pytest.approx(clf.objective(X, y), rel=1e-10)
        assert ref <= ours < 1.01 * ref, (seed, ours / ref)


def test_loss_curve_estimates_the_objective(problem):
    X, y = problem
    clf = _quiet(eta0=0.03, max_iter=30).fit(X, y)
    assert len(clf.loss_curve_) == 30
    # the double-sum estimate falls and ends near (above) the exact loss
    assert clf.loss_curve_[-1] < clf.loss_curve_[0]
    exact = clf.log_loss(X, y)
    assert exact < clf.loss_curve_[-1] < 1.2 * exact


def test_dense_and_csr_fits_are_identical(problem):
    X, y = problem
    a = _quiet(max_iter=5).fit(X, y)
    b = _quiet(max_iter=5).fit(sp.csr_matrix(X), y)
    assert_allclose(a.coef_, b.coef_, rtol=1e-12, atol=1e-14)
    assert_allclose(a.intercept_, b.intercept_, rtol=1e-12, atol=1e-14)


def test_random_state_makes_runs_reproducible(problem):
    X, y = problem
    a = _quiet(max_iter=3).fit(X, y)
    b = _quiet(max_iter=3).fit(X, y)
    assert_array_equal(a.coef_, b.coef_)
    c = UMaxSoftmaxClassifier(max_iter=3, tol=None, random_state=1).fit(X, y)
    assert not np.array_equal(a.coef_, c.coef_)


def test_float32_stays_float32(problem):
    X, y = problem
    X32 = X.astype(np.float32)
    clf = _quiet(max_iter=3).fit(X32, y)
    assert clf.coef_.dtype == np.float32 and clf.intercept_.dtype == np.float32
    assert clf.predict_proba(X32).dtype == np.float32
    clf64 = _quiet(max_iter=3).fit(X, y)
    assert_allclose(clf.coef_, clf64.coef_, rtol=1e-3, atol=1e-3)


def test_string_labels_and_attributes(problem):
    X, y = problem
    labels = np.array(["ant", "bee", "cat", "dog"])[y]
    clf = _quiet(max_iter=3).fit(X, labels)
    assert_array_equal(clf.classes_, ["ant", "bee", "cat", "dog"])
    assert clf.coef_.shape == (4, X.shape[1])
    assert clf.intercept_.shape == (4,)
    assert clf.n_features_in_ == X.shape[1]
    assert clf.n_iter_ == 3 and clf.t_ == 3 * len(y)
    assert set(clf.predict(X)) <= set(labels)


def test_predictions_are_exact_and_blockwise(problem):
    X, y = problem
    clf = _quiet(max_iter=3).fit(X, y)
    S = X @ clf.coef_.T + clf.intercept_
    P = np.exp(S - S.max(1, keepdims=True))
    P /= P.sum(1, keepdims=True)
    with config_context(working_memory=1e-4):  # a few rows per block
        assert clf._blocks(len(y)).__next__().stop < len(y)
        assert_allclose(clf.predict_proba(X), P, rtol=1e-12)
        assert_allclose(clf.predict_log_proba(X), np.log(P), rtol=1e-12)
        assert_allclose(clf.decision_function(X), S, rtol=1e-12, atol=1e-14)
        assert_array_equal(clf.predict(X), clf.classes_[S.argmax(1)])
        loss = -np.log(P[np.arange(len(y)), y]).mean()
        assert clf.log_loss(X, y) == pytest.approx(loss, rel=1e-12)


def test_binary_decision_function_is_log_odds(problem):
    X, y = problem
    yb = (y > 1).astype(int)
    clf = _quiet(max_iter=3).fit(X, yb)
    assert clf.coef_.shape == (2, X.shape[1])
    P = clf.predict_proba(X)
    assert_allclose(
        clf.decision_function(X),
        np.log(P[:, 1] / P[:, 0]),
        rtol=1e-9,
        atol=1e-12,
    )


def test_sample_weight_zero_rows_do_not_move_the_model(problem):
    X, y = problem
    sw = np.ones(len(y))
    sw[::2] = 0.0
    # a float eta0: with 'auto' the 500 tiny-weight rows would run a pilot
    # that the 250 rows of positive weight are too few for
    a = _quiet(eta0=0.05, max_iter=2, shuffle=False)
    a.fit(X, y, sample_weight=sw)
    # the zero-weight rows still consume random draws, so compare with a
    # reference that gives them an infinitesimal weight instead
    sw_tiny = np.where(sw == 0, 1e-300, 1.0)
    b = _quiet(eta0=0.05, max_iter=2, shuffle=False)
    b.fit(X, y, sample_weight=sw_tiny)
    assert_allclose(a.coef_, b.coef_, rtol=1e-12, atol=1e-14)


# ------------------------------------------------------------ partial_fit
def test_partial_fit_rules(problem):
    X, y = problem
    clf = _quiet()
    with pytest.raises(ValueError, match="classes must be passed"):
        clf.partial_fit(X, y)
    clf.partial_fit(X[:100], y[:100], classes=np.arange(4))
    assert clf.n_iter_ == 1 and clf.t_ == 100
    clf.partial_fit(X[100:200], y[100:200], classes=np.arange(4))  # same: ok
    assert clf.t_ == 200 and clf._n_epochs == 2
    with pytest.raises(ValueError, match="is not the same as on last call"):
        clf.partial_fit(X[:10], y[:10], classes=np.arange(5))
    with pytest.raises(ValueError, match=r"labels not in classes.*\[7\]"):
        clf.partial_fit(X[:10], np.r_[y[:9], 7])
    with pytest.raises(ValueError, match="features"):
        clf.partial_fit(X[:10, :5], y[:10])
    assert clf.t_ == 200


@pytest.mark.kernel
@pytest.mark.parametrize(
    "labels",
    [
        np.arange(4),  # 0..K-1: a label is its own code
        np.array([-3, 0, 5, 9]),
        np.array([10, 11, 12, 13]),
        np.array(["ant", "bee", "cat", "dog"]),
        np.array([1.0, 2.0, 4.0, 8.0]),
    ],
    ids=["range", "negative", "offset", "strings", "floats"],
)
def test_partial_fit_label_encoding(problem, labels):
    # every label set encodes to the same codes (classes_ sorted), so the
    # models are the same; unknown labels are refused in every encoding
    X, y = problem
    clf = _quiet()
    for lo in (0, 100, 200):
        clf.partial_fit(
            X[lo : lo + 100], labels[y[lo : lo + 100]], classes=labels
        )
    ref = _quiet()
    for lo in (0, 100, 200):
        ref.partial_fit(
            X[lo : lo + 100], y[lo : lo + 100], classes=np.arange(4)
        )
    assert_array_equal(clf.classes_, labels)
    assert_array_equal(clf.coef_, ref.coef_)
    assert_array_equal(clf.predict(X[:50]), labels[ref.predict(X[:50])])
    bad = {
        "range": [4, -1],
        "negative": [1],
        "offset": [9, 14],
        "strings": ["eel"],
        "floats": [3.0],
    }
    name = (
        "strings"
        if labels.dtype.kind == "U"
        else (
            "floats"
            if labels.dtype.kind == "f"
            else (
                "range"
                if labels[0] == 0
                else "negative" if labels[0] < 0 else "offset"
            )
        )
    )
    for label in bad[name]:
        y_bad = labels[y[:10]].copy()
        y_bad[3] = label
        with pytest.raises(ValueError, match="labels not in classes"):
            clf.partial_fit(X[:10], y_bad)
    if labels.dtype.kind != "U":
        # a continuous target is refused on later calls too
        with pytest.raises(ValueError, match="continuous|Unknown label"):
            clf.partial_fit(X[:10], np.linspace(0.1, 0.9, 10))


def test_partial_fit_all_zero_weights_changes_nothing(problem):
    X, y = problem
    clf = _quiet().partial_fit(X[:100], y[:100], classes=np.arange(4))
    coef, intercept, t = clf.coef_.copy(), clf.intercept_.copy(), clf.t_
    clf.partial_fit(X[100:200], y[100:200], sample_weight=np.zeros(100))
    assert_array_equal(clf.coef_, coef)
    assert_array_equal(clf.intercept_, intercept)
    assert clf.t_ == t


def test_partial_fit_once_equals_fit_one_epoch(problem):
    X, y = problem
    a = _quiet(max_iter=1).fit(X, y)
    b = _quiet().partial_fit(X, y, classes=np.unique(y))
    assert_array_equal(a.coef_, b.coef_)


def test_partial_fit_carries_the_schedule_over(problem):
    X, y = problem
    classes = np.unique(y)

    def two_calls(**kw):
        clf = _quiet(**kw).partial_fit(X[:250], y[:250], classes=classes)
        first = clf.coef_.copy()
        return first, clf.partial_fit(X[250:], y[250:]).coef_

    const = two_calls(learning_rate="constant")
    expo = two_calls(learning_rate="exponential", decay=0.5)
    no_decay = two_calls(learning_rate="exponential", decay=1.0)
    assert_array_equal(const[0], expo[0])  # epoch 0: eta0 for both
    assert not np.allclose(const[1], expo[1])  # call 2 used eta0 * decay
    assert_array_equal(const[1], no_decay[1])
    inv = _quiet(learning_rate="invscaling").partial_fit(
        X[:250], y[:250], classes=classes
    )
    inv.partial_fit(X[250:], y[250:])
    assert inv.t_ == len(y)


def test_fit_starts_over_unless_warm_start(problem):
    X, y = problem
    clf = _quiet(max_iter=3)
    first = clf.fit(X, y).coef_.copy()
    assert_array_equal(clf.fit(X, y).coef_, first)
    clf.set_params(warm_start=True)
    u_before = clf._row_state.copy()
    clf.fit(X, y)
    assert not np.allclose(clf.coef_, first)
    assert clf.t_ == 6 * len(y)
    assert not np.array_equal(clf._row_state, u_before)  # u carried on
    # warm start on data of another length keeps W, starts u afresh
    clf.fit(X[:300], y[:300])
    assert clf._row_state.shape == (300,)


def test_u_is_initialised_by_the_umax_rule_in_partial_fit():
    # one row, K = 2, W = 0: u must start at log(1 + m * e^0) = log(1 + m)
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    y = np.array([0, 1])
    clf = UMaxSoftmaxClassifier(
        n_sampled_classes=3,
        eta0=1e-12,
        learning_rate="constant",
        tol=None,
        random_state=0,
    )
    clf.fit(X, y)  # fit's first epoch uses the same rule
    assert_allclose(clf._row_state, np.log(4.0), rtol=1e-9)


# ----------------------------------------------------------- stopping
def test_tol_stops_and_warns(problem):
    X, y = problem
    clf = UMaxSoftmaxClassifier(
        tol=10.0, n_iter_no_change=2, random_state=0
    ).fit(X, y)
    assert clf.n_iter_ == 3  # the first epoch sets the best loss
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        UMaxSoftmaxClassifier(
            tol=0.0,
            max_iter=3,
            eta0=1e-3,
            learning_rate="constant",
            random_state=0,
        ).fit(X, y)


def test_early_stopping_on_validation_log_loss(problem):
    X, y = problem
    clf = UMaxSoftmaxClassifier(
        early_stopping=True,
        n_iter_no_change=3,
        tol=1e-3,
        max_iter=200,
        random_state=0,
    )
    clf.fit(X, y)
    assert len(clf.validation_loss_) == clf.n_iter_ < 200
    assert clf.t_ == clf.n_iter_ * (len(y) - 50)  # 10% held out
    # tol is relative: none of the last three beat the best before it by
    # 0.1% of that best, and the epoch before them did
    losses = clf.validation_loss_
    for i in range(len(losses) - 3, len(losses)):
        best = min(losses[:i])
        assert losses[i] >= best - 1e-3 * best
    i = len(losses) - 4
    assert i == 0 or losses[i] < min(losses[:i]) * (1 - 1e-3)


def test_verbose_prints_one_line_per_epoch(problem, capsys):
    X, y = problem
    _quiet(max_iter=3, verbose=1).fit(X, y)
    lines = [
        line
        for line in capsys.readouterr().out.splitlines()
        if line.startswith("Epoch")
    ]
    assert len(lines) == 3
    assert re.match(
        r"Epoch 2: [\d.]+ s, objective estimate [\d.]+, " r"[\d,]+ rows/s",
        lines[1],
    )


# ----------------------------------------------------- bad input, divergence
@pytest.mark.parametrize(
    "bad,match",
    [
        (
            lambda X, y: (
                np.where(np.arange(X.size).reshape(X.shape) == 7, np.nan, X),
                y,
            ),
            "NaN",
        ),
        (
            lambda X, y: (
                np.where(np.arange(X.size).reshape(X.shape) == 7, np.inf, X),
                y,
            ),
            "infinity",
        ),
        (lambda X, y: (X[:0], y[:0]), "0 sample"),
        (lambda X, y: (X, np.zeros_like(y)), "one class"),
        (lambda X, y: (X[:10], y[:9]), "inconsistent numbers of samples"),
        (lambda X, y: (X[:, :, None], y), "dim 3"),
        (lambda X, y: (X, y + 0.5), "Unknown label type"),
    ],
)
def test_bad_input_is_rejected(problem, bad, match):
    X, y = problem
    Xb, yb = bad(X.copy(), y.copy())
    with pytest.raises(ValueError, match=match):
        _quiet(max_iter=1).fit(Xb, yb)


def test_negative_or_misshaped_weights_rejected(problem):
    X, y = problem
    with pytest.raises(ValueError, match="Negative values in data passed"):
        _quiet(max_iter=1).fit(X, y, sample_weight=-np.ones(len(y)))
    with pytest.raises(ValueError, match="sample_weight"):
        _quiet(max_iter=1).fit(X, y, sample_weight=np.ones(3))
    with pytest.raises(ValueError, match="zero"):
        _quiet(max_iter=1).fit(X, y, sample_weight=np.zeros(len(y)))


@pytest.mark.parametrize(
    "param,value",
    [
        ("n_sampled_classes", 0),
        ("delta", -1.0),
        ("eta0", 0.0),
        ("learning_rate", "optimal"),
        ("alpha", -1.0),
        ("max_iter", 0),
    ],
)
def test_bad_parameters_are_rejected(problem, param, value):
    X, y = problem
    with pytest.raises(ValueError, match=param):
        UMaxSoftmaxClassifier(**{param: value}).fit(X, y)


def test_inputs_are_not_modified(problem):
    X, y = problem
    Xs = sp.csr_matrix(X)
    sw = np.linspace(0.5, 1.5, len(y))
    copies = X.copy(), Xs.copy(), y.copy(), sw.copy()
    clf = _quiet(max_iter=2, alpha=0.01)
    clf.fit(X, y, sample_weight=sw)
    clf.fit(Xs, y, sample_weight=sw)
    clf.partial_fit(Xs, y, sample_weight=sw)
    clf.predict_proba(Xs)
    assert_array_equal(X, copies[0])
    assert_array_equal(Xs.toarray(), copies[1].toarray())
    assert_array_equal(y, copies[2])
    assert_array_equal(sw, copies[3])


def test_vanilla_sgd_divergence_is_reported(problem):
    X, y = problem
    clf = UMaxSoftmaxClassifier(delta=None, eta0=1e3, random_state=0)
    with pytest.raises(DivergenceError, match="lower eta0.*delta=None"):
        clf.fit(X, y)
    assert not hasattr(clf, "coef_")
    # U-max at the same rate stays finite: its gradients are bounded
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ok = UMaxSoftmaxClassifier(eta0=1e3, max_iter=5, random_state=0).fit(
            X, y
        )
    assert np.isfinite(ok.coef_).all()


def test_alpha_projection_keeps_the_bounds(problem):
    X, y = problem
    alpha = 1.0
    clf = _quiet(alpha=alpha, eta0=0.5, max_iter=5, fit_intercept=False)
    clf.fit(X, y)
    bound_w = np.sqrt(2 * np.log(4) / alpha)
    assert np.linalg.norm(clf.coef_) <= bound_w * (1 + 1e-9)
    assert (clf._row_state >= 0).all()


def test_raman_formulation_fits_and_stores_u_bar(problem):
    X, y = problem
    clf = _quiet(variant="raman", eta0=0.03, max_iter=30).fit(X, y)
    assert clf.log_loss(X, y) < 0.75 * np.log(4)  # best reachable: ~0.98
    # u_bar_i = u_i + s_yi with u_i >= 0: above the true-class score
    # it was last compared with (up to the steps taken since)
    scores = X @ clf.coef_.T + clf.intercept_
    s_y = scores[np.arange(len(y)), y]
    assert np.median(clf._row_state - s_y) > 0


# ------------------------------------------------------- class samplers
@pytest.mark.kernel
@pytest.mark.parametrize("sampler", ["uniform", "frequency"])
def test_mean_stochastic_gradient_is_the_full_gradient(sampler):
    """Many single steps of plain double-sum SGD (delta=None, so u is not
    reset) from one fixed (W, b, u): the mean step / eta equals the exact
    gradient of the row's double-sum term (eq. 6) in W, b and u, and the
    mean sampled objective equals the term, within Monte Carlo error."""
    X, y, W, b, u = gradient_problem()
    table = sampler_table(sampler)
    rng = RandomState(0)
    m, eta, n_draws = 3, 1e-2, 20000
    worst = 0.0
    for i in range(X.shape[0]):
        ds = make_dataset(X[i : i + 1], np.ones(1))
        yi = y[i : i + 1]
        f_exact, g_exact = double_sum_gradient(X[i], y[i], W, b, u[i])
        steps = np.empty((n_draws, g_exact.size))
        values = np.empty(n_draws)
        for r in range(n_draws):
            coef, intercept, u_r = W.copy(), b.copy(), u[i : i + 1].copy()
            status, obj, *_ = umax_epoch64(
                ds,
                make_weight_matrix(coef, intercept),
                yi,
                u_r,
                rng,
                np.zeros(1, dtype=np.intp),
                0,
                umax_options(
                    n_sampled=m,
                    delta=1.0,
                    vanilla=True,
                    raman=False,
                    init_u=False,
                    schedule=0,
                    eta_epoch=eta,
                    eta0=eta,
                    power_t=0.5,
                    alpha=0.0,
                    bound_w=np.inf,
                    bound_u=np.inf,
                    weight_log_k=np.inf,
                    fit_intercept=True,
                    shuffle=False,
                ),
                sampler=table,
            )
            assert status == 0
            steps[r, : W.size] = (W - coef).ravel() / eta
            steps[r, W.size : -1] = (b - intercept) / eta
            steps[r, -1] = (u[i] - u_r[0]) / eta
            values[r] = obj
        z = monte_carlo_z(steps, g_exact)
        z_f = monte_carlo_z(values[:, None], [f_exact])
        worst = max(worst, np.abs(z).max(), np.abs(z_f).max())
    assert worst < 4.5, worst


@pytest.fixture(scope="module")
def skewed():
    """Six classes with skewed frequencies (353 ... 14 rows of 600)."""
    X, y = make_classification(
        n_samples=600,
        n_features=10,
        n_informative=6,
        n_classes=6,
        weights=[0.6, 0.2, 0.1, 0.05, 0.03, 0.02],
        random_state=0,
    )
    return StandardScaler().fit_transform(X), y


@pytest.mark.parametrize("power", [0.0, 1.0])
def test_frequency_sampler_reaches_the_optimum(skewed, power):
    X, y = skewed
    alpha = 0.01
    lr = LogisticRegression(C=1 / (alpha * len(y)), tol=1e-10, max_iter=5000)
    lr.fit(X, y)
    ref = softmax_objective(lr.coef_, lr.intercept_, X, y, alpha)
    clf = UMaxSoftmaxClassifier(
        eta0=0.03,
        alpha=alpha,
        max_iter=50,
        tol=None,
        random_state=0,
        sampler="frequency",
        sampler_power=power,
    ).fit(X, y)
    assert ref <= clf.objective(X, y) < 1.015 * ref


SAMPLING_ESTIMATORS = [
    lambda **kw: UMaxSoftmaxClassifier(eta0=0.03, **kw),
    lambda **kw: ImplicitSGDClassifier(eta0=1.0, **kw),
    lambda **kw: ImplicitSGDClassifier(n_sampled_classes=3, eta0=1.0, **kw),
    lambda **kw: SampledSoftmaxClassifier(loss="ove", eta0=0.5, **kw),
]


@pytest.mark.parametrize("make", SAMPLING_ESTIMATORS)
def test_frequency_table_follows_the_counts(skewed, monkeypatch, make):
    X, y = skewed
    built = []

    def counting_table(weights):
        built.append(weights)
        return AliasTable(weights)

    def matches_counts(weights, power=1.0):
        q = (clf.class_count_ + 1) ** power
        assert_allclose(weights / weights.sum(), q / q.sum())

    monkeypatch.setattr(_class_sampler, "AliasTable", counting_table)
    clf = make(sampler="frequency", max_iter=4, tol=None, random_state=0)
    clf.fit(X, y)
    assert len(built) == 1  # four epochs, one table
    matches_counts(built[0])
    # partial_fit grows the counts in place; the table is rebuilt only
    # once they have doubled in total weight (any q stays unbiased: the
    # weights use the table's own q)
    n = len(y)
    clf.partial_fit(X[:100], y[:100])
    assert len(built) == 1
    clf.partial_fit(X[:100], y[:100], sample_weight=np.zeros(100))
    assert len(built) == 1 and clf.class_count_.sum() == n + 100
    rows = 100
    while rows <= n:
        clf.partial_fit(X[:100], y[:100])
        rows += 100
    assert len(built) == 2  # n + rows > 2 n: rebuilt once
    matches_counts(built[1])
    clf.set_params(sampler_power=0.5)
    clf.partial_fit(X[:100], y[:100])
    assert len(built) == 3
    matches_counts(built[2], 0.5)
    clf.set_params(sampler="uniform")
    clf.partial_fit(X[:100], y[:100])
    assert len(built) == 3
    # a fresh fit replaces the counts: a new table, whatever their total
    clf.set_params(sampler="frequency", sampler_power=1.0).fit(X, y)
    assert len(built) == 4
    matches_counts(built[3])
    # a loaded model's table is its own, and follows the same rule
    loaded = pickle.loads(pickle.dumps(clf))
    loaded.partial_fit(X, y)
    assert len(built) == 4
    loaded.partial_fit(X[:100], y[:100])
    assert len(built) == 5
    assert_allclose(
        built[4] / built[4].sum(),
        (loaded.class_count_ + 1) / (loaded.class_count_ + 1).sum(),
    )
    # the first partial_fit call of a new model builds from its counts
    fresh = make(sampler="frequency", random_state=0)
    fresh.partial_fit(X[:50], y[:50], classes=np.unique(y))
    assert len(built) == 6


@pytest.mark.parametrize("make", SAMPLING_ESTIMATORS)
def test_frequency_sampler_fits_are_reproducible(skewed, make):
    """Dense and CSR, float32 and float64, the same random_state."""
    X, y = skewed
    kw = dict(sampler="frequency", max_iter=3, tol=None)
    a = make(random_state=0, **kw).fit(X, y)
    b = make(random_state=0, **kw).fit(sp.csr_matrix(X), y)
    assert_allclose(a.coef_, b.coef_, rtol=1e-10, atol=1e-12)
    assert_array_equal(make(random_state=0, **kw).fit(X, y).coef_, a.coef_)
    assert not np.array_equal(
        make(random_state=1, **kw).fit(X, y).coef_, a.coef_
    )
    uniform = make(
        random_state=0, sampler="uniform", max_iter=3, tol=None
    ).fit(X, y)
    assert not np.allclose(uniform.coef_, a.coef_)
    f32 = make(random_state=0, **kw).fit(X.astype(np.float32), y)
    assert f32.coef_.dtype == np.float32
    assert_allclose(f32.coef_, a.coef_, rtol=1e-3, atol=1e-3)
    f32_csr = make(random_state=0, **kw).fit(
        sp.csr_matrix(X.astype(np.float32)), y
    )
    assert_allclose(f32_csr.coef_, f32.coef_, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "param,value", [("sampler", "zipf"), ("sampler_power", -1.0)]
)
def test_bad_sampler_parameters_are_rejected(skewed, param, value):
    X, y = skewed
    with pytest.raises(ValueError, match=param):
        UMaxSoftmaxClassifier(**{param: value}).fit(X, y)
