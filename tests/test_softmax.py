"""SoftmaxClassifier, the front door: the solver choice, held-out stopping
that keeps the best epoch, the exact solver reaching the penalised
optimum, streams, persistence and clear errors."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize
from scipy.special import logsumexp

import sksoftmax._descent
import sksoftmax._held_out
from sksoftmax import SoftmaxClassifier
from sksoftmax._held_out import split_rows
from sksoftmax._solver_choice import choose_solver
from sksoftmax.datasets import make_softmax_classification
from sksoftmax.exceptions import DivergenceError


@pytest.fixture(scope="module")
def problem():
    X, y = make_softmax_classification(
        n_samples=3000, n_features=200, n_classes=30, density=0.05,
        random_state=0,
    )
    return X[:2400], y[:2400], X[2400:], y[2400:]


def _objective_reference(X, y, alpha, K):
    """mean log-loss + alpha/2 ||W||^2 (intercepts free) and its optimum."""
    X = sp.csr_matrix(X)
    n, d = X.shape
    Y = np.zeros((n, K))
    Y[np.arange(n), y] = 1.0

    def f(theta):
        W, b = theta[: K * d].reshape(K, d), theta[K * d:]
        Z = X @ W.T + b
        lse = logsumexp(Z, axis=1)
        P = np.exp(Z - lse[:, None])
        loss = (lse - Z[np.arange(n), y]).mean() + 0.5 * alpha * (W * W).sum()
        G = (P - Y) / n
        gW = (X.T @ G).T + alpha * W
        return loss, np.concatenate([gW.ravel(), G.sum(axis=0)])

    res = minimize(f, np.zeros(K * d + K), jac=True, method="L-BFGS-B",
                   options=dict(maxiter=5000, gtol=1e-10, ftol=1e-14))
    return f, res.fun


def test_auto_takes_exact_for_few_multiply_adds(problem):
    # sparse data (5% nonzero): not the full-batch path
    X, y, _, _ = problem
    clf = SoftmaxClassifier(max_iter=2, random_state=0).fit(X, y)
    assert clf.solver_ == "exact"
    # the same rows dense (in either format) and small: 'lbfgs'
    rng = np.random.RandomState(0)
    dense = rng.randn(*X.shape)
    name, _ = choose_solver(SoftmaxClassifier(), 30, dense)
    assert name == "lbfgs"
    name, _ = choose_solver(SoftmaxClassifier(), 30, sp.csr_matrix(dense))
    assert name == "lbfgs"
    # 10x the rows: the path would cost more than FULL_BATCH_MAX_MADDS
    name, _ = choose_solver(SoftmaxClassifier(), 30, np.vstack([dense] * 10))
    assert name == "exact"


def test_auto_takes_a_sampled_solver_when_rows_are_costly():
    from sksoftmax._solver_choice import EXACT_MAX_MADDS, STREAM_EXACT_MAX_MADDS

    # 300 dense features: 301 multiply-adds per row and class
    rng = np.random.RandomState(0)
    X = rng.randn(4000, 300)
    clf = SoftmaxClassifier(random_state=0)
    beyond = int(EXACT_MAX_MADDS // 301) + 1
    name, reason = choose_solver(clf, beyond, X)
    assert name == "scent" and "multiply-adds" in reason
    assert choose_solver(clf, beyond - 1, X)[0] == "exact"
    # partial_fit's bound is lower: between the two, fit takes the exact
    # gradient and a stream SCENT
    between = int(STREAM_EXACT_MAX_MADDS // 301) + 1
    assert STREAM_EXACT_MAX_MADDS < EXACT_MAX_MADDS
    assert choose_solver(clf, between, X)[0] == "exact"
    name, reason = choose_solver(clf, between, X, streaming=True)
    assert name == "scent" and "partial_fit" in reason
    assert choose_solver(clf, between - 1, X, streaming=True)[0] == "exact"


def test_early_stopping_picks_the_best_epoch_then_refits_on_all_rows(
    problem,
):
    X, y, _, _ = problem
    clf = SoftmaxClassifier(solver="exact", random_state=0, max_iter=30)
    # one step rule: no race after the held-out phase
    clf._exact_step_rule = "adagrad"
    clf.fit(X, y)
    losses = np.array(clf.validation_loss_)
    assert clf.best_iter_ >= 1
    assert losses[clf.best_iter_ - 1] == losses.min()
    # the held-out phase, then the kept epochs (undone ones left out)
    # again on every row
    refit = clf.n_iter_ - losses.shape[0]
    assert 1 <= refit <= clf.best_iter_


def test_the_model_is_the_mean_of_the_refit_and_the_held_out_model(
    problem, monkeypatch
):
    """After the refit the model is the equal-weight mean of the refit's
    model and the held-out phase's kept model (their (W, b) captured just
    before the blend); by convexity its test log-loss is at most the mean
    of theirs."""
    from sksoftmax._exact import ExactSolver

    X, y, X_test, y_test = problem
    seen = {}
    blend = ExactSolver.blend

    def spy(self, other, weight):
        self.finalize()
        other.finalize()
        seen["refit"] = (self.coef_view().copy(), self.b.copy())
        seen["held_out"] = (other.coef_view().copy(), other.b.copy())
        seen["weight"] = weight
        return blend(self, other, weight)

    monkeypatch.setattr(ExactSolver, "blend", spy)
    clf = SoftmaxClassifier(solver="exact", random_state=0, max_iter=30)
    clf.fit(X, y)
    assert seen["weight"] == 0.5
    (W1, b1), (W2, b2) = seen["refit"], seen["held_out"]
    np.testing.assert_allclose(clf.coef_, 0.5 * (W1 + W2), rtol=1e-12)
    np.testing.assert_allclose(clf.intercept_, 0.5 * (b1 + b2), rtol=1e-12)

    def loss(W, b):
        Z = X_test @ W.T + b
        return float(np.mean(logsumexp(Z, axis=1) - Z[np.arange(len(y_test)),
                                                     y_test]))

    assert clf.log_loss(X_test, y_test) <= 0.5 * (loss(W1, b1) + loss(W2, b2))


def test_held_out_rows_leave_every_class_a_training_row():
    # a class's rows all drawn for the held-out set would only measure how
    # fast that class is pushed down: one of them stays in training
    y = np.repeat(np.arange(50), [1, 2, 3, 4, 40] * 10)
    clf = SoftmaxClassifier(random_state=0, validation_fraction=0.3)
    clf._rng = np.random.RandomState(0)
    val, train = split_rows(y, 50, int(np.ceil(0.3 * y.shape[0])), clf._rng)
    assert np.intersect1d(val, train).size == 0
    assert np.union1d(val, train).size == y.shape[0]
    assert np.array_equal(np.unique(y[train]), np.arange(50))
    # the rows that can be held out are held out up to the share asked
    assert val.shape[0] == int(np.ceil(0.3 * y.shape[0]))
    with pytest.raises(ValueError, match="single row"):
        split_rows(np.arange(10), 10, 1, clf._rng)


def test_without_a_refit_held_out_rows_are_drawn_as_test_rows(monkeypatch):
    # no refit follows (at most REFIT_MIN_SHARE held out): the held-out
    # phase's model is returned, so the held-out rows are drawn as test
    # rows are: a plain random draw, of rows whose class has a training
    # row (a class's only row drawn goes back to training: no test row's
    # class lacks a training row)
    y = np.repeat(np.arange(50), [1, 2, 3, 4, 40] * 10)
    clf = SoftmaxClassifier(random_state=0)
    singles = np.isin(y, np.arange(0, 50, 5))
    drawn = np.zeros(y.shape[0], dtype=int)
    returned = 0
    for seed in range(200):
        clf._rng = np.random.RandomState(seed)
        val, train = split_rows(y, 50, 25, clf._rng, keep_class_rows=False)
        assert np.intersect1d(val, train).size == 0
        assert np.union1d(val, train).size == y.shape[0]
        assert np.isin(y[val], y[train]).all()
        drawn[val] += 1
        returned += 25 - val.shape[0]
    # the single rows were drawn (about 10 x 200 x 25 / 500 = 100 times)
    # and went back; every other row is drawn at the rate 25 / 500 of a
    # plain draw (200 draws: mean 10 each)
    assert drawn[singles].sum() == 0
    assert 50 < returned < 150
    assert abs(drawn[~singles].mean() - 10.0) < 0.5
    with pytest.raises(ValueError, match="single row"):
        split_rows(np.arange(10), 10, 3, clf._rng, keep_class_rows=False)
    # one row to hold out, drawn from a single-row class: a row of a class
    # with two is held out instead
    two = np.array([0, 1, 1, 2, 3, 4, 5, 6, 7, 8])
    for seed in range(20):
        clf._rng = np.random.RandomState(seed)
        val, train = split_rows(two, 9, 1, clf._rng, keep_class_rows=False)
        assert val.shape[0] == 1 and two[val[0]] == 1
        assert np.isin(two[val], two[train]).all()
    # fit takes that split when the held-out rows are at most 1% of the
    # rows: 20 of 3,000 here
    calls = []

    def spy(y, n_classes, n_val, rng, keep_class_rows=True):
        calls.append(keep_class_rows)
        return split_rows(y, n_classes, n_val, rng, keep_class_rows)

    monkeypatch.setattr(sksoftmax._held_out, "split_rows", spy)
    X, yy = make_softmax_classification(
        n_samples=3000, n_features=30, n_classes=5, random_state=0
    )
    # (the epochs' split: 'auto' would take the full-batch 'lbfgs' here)
    SoftmaxClassifier(
        solver="exact", random_state=0, validation_fraction=20 / 3000,
        max_iter=2,
    ).fit(X, yy)
    SoftmaxClassifier(solver="exact", random_state=0, max_iter=2).fit(X, yy)
    assert calls == [False, True]


def test_held_out_rows_take_a_uniform_share_of_the_eligible_rows():
    # with a refit each class keeps its first row; of the others every
    # class gives the same share in expectation, as a uniform draw among
    # them would (a class of 2 rows is not held out twice as often as a
    # uniform draw would hold out its one eligible row)
    counts = np.array([1, 2, 3, 10, 100])
    y = np.repeat(np.arange(5), counts)
    clf = SoftmaxClassifier(random_state=0)
    taken = np.zeros(5)
    for seed in range(400):
        clf._rng = np.random.RandomState(seed)
        val, _ = split_rows(y, 5, 23, clf._rng, keep_class_rows=True)
        taken += np.bincount(y[val], minlength=5)
    share = 23 / (counts - 1).sum()
    np.testing.assert_allclose(taken / 400, share * (counts - 1), rtol=0.1)


@pytest.mark.parametrize("keep_class_rows", [False, True])
def test_held_out_rows_are_each_class_latest_rows(keep_class_rows):
    # rows sorted by class (as load_iris's are): every class still gives
    # its share, and of each class its last rows in the order given
    counts = np.array([50, 30, 20, 7, 3])
    y = np.repeat(np.arange(5), counts)
    rng = np.random.default_rng(0)
    y = np.concatenate([y, rng.permutation(y)])  # then a shuffled copy
    clf = SoftmaxClassifier(random_state=0)
    for seed in range(20):
        clf._rng = np.random.RandomState(seed)
        val, train = split_rows(
            y, 5, 22, clf._rng, keep_class_rows=keep_class_rows
        )
        assert val.shape[0] == 22
        assert np.intersect1d(val, train).size == 0
        assert np.union1d(val, train).size == y.shape[0]
        for k in range(5):
            v, t = val[y[val] == k], train[y[train] == k]
            # stratified: the class's share of 22 / 220 rows, rounded
            assert abs(v.shape[0] - 0.1 * 2 * counts[k]) < 1.0 + 1e-9
            # its latest rows: none of its training rows comes after them
            if v.shape[0]:
                assert t.shape[0] > 0 and t.max() < v.min()


@pytest.mark.parametrize("dense", [False, True])
def test_exact_solver_reaches_the_penalised_optimum(problem, dense):
    X, y, _, _ = problem
    X, y = X[:600], y[:600]
    X = X.toarray() if dense else X
    alpha = 1e-2
    classes = np.unique(y)
    y_enc = np.searchsorted(classes, y)
    f, best = _objective_reference(X, y_enc, alpha, classes.shape[0])
    clf = SoftmaxClassifier(
        solver="exact", alpha=alpha, eta0=0.3, early_stopping=False,
        tol=None, max_iter=300, random_state=0,
    ).fit(X, y)
    theta = np.concatenate([clf.coef_.ravel(), clf.intercept_])
    assert f(theta)[0] == pytest.approx(best, rel=2e-3)
    assert clf.objective(X, y) == pytest.approx(f(theta)[0], rel=1e-9)


def test_default_fit_beats_the_prior_and_is_finite(problem):
    X, y, Xt, yt = problem
    clf = SoftmaxClassifier(random_state=0).fit(X, y)
    prior = np.bincount(np.searchsorted(clf.classes_, y),
                        minlength=clf.classes_.shape[0]) / len(y)
    prior_loss = -np.log(prior[np.searchsorted(clf.classes_, yt)]).mean()
    loss = clf.log_loss(Xt, yt)
    assert np.isfinite(loss) and loss < 0.8 * prior_loss
    P = clf.predict_proba(Xt)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-6)


def test_partial_fit_stream_matches_fit(problem):
    X, y, Xt, yt = problem
    # (the solver partial_fit takes: 'auto' would fit this small problem
    # with the full-batch 'lbfgs')
    fitted = SoftmaxClassifier(
        solver="exact", random_state=0, early_stopping=False, max_iter=3,
        tol=None,
    ).fit(X, y)
    stream = SoftmaxClassifier(random_state=0)
    classes = np.unique(y)
    for epoch in range(3):
        for lo in range(0, X.shape[0], 400):
            stream.partial_fit(X[lo:lo + 400], y[lo:lo + 400],
                               classes=classes)
    assert stream.log_loss(Xt, yt) == pytest.approx(
        fitted.log_loss(Xt, yt), rel=0.25
    )


def test_pickle_mid_stream_then_continue_is_identical(problem):
    X, y, Xt, yt = problem
    classes = np.unique(y)
    a = SoftmaxClassifier(random_state=0)
    a.partial_fit(X[:1200], y[:1200], classes=classes)
    b = pickle.loads(pickle.dumps(a))
    a.partial_fit(X[1200:], y[1200:])
    b.partial_fit(X[1200:], y[1200:])
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)


@pytest.mark.parametrize("solver", ["umax", "implicit", "scent", "ar"])
def test_sampled_solvers_behind_the_front_door(problem, solver):
    X, y, Xt, yt = problem
    clf = SoftmaxClassifier(solver=solver, random_state=0, max_iter=15)
    clf.fit(X, y)
    assert clf.solver_ == solver
    assert clf.log_loss(Xt, yt) < np.log(30)


def test_a_runaway_step_is_undone(problem):
    X, y, Xt, yt = problem
    clf = SoftmaxClassifier(solver="exact", eta0=1e6, max_iter=8,
                            random_state=0)
    clf.fit(X, y)
    assert np.isfinite(clf.log_loss(Xt, yt))
    assert clf.eta0_ < 1e6
    with pytest.raises(DivergenceError, match="eta0"):
        SoftmaxClassifier(solver="exact", eta0=1e6, early_stopping=False,
                          max_iter=3, random_state=0).fit(X * 1e3, y)


@pytest.mark.parametrize("solver", ["umax", "scent", "ar"])
def test_a_constant_step_solver_starts_again_with_half_the_step(
    problem, solver, capsys, monkeypatch
):
    """After a phase that improved on every earlier one, the fit starts
    again from the start at half the step in use; it stops at the first
    phase without a new best, and the model kept is the best epoch of its
    phase, replaced by a later phase's epoch only when that is better
    beyond the held-out rows' noise (_significantly_worse)."""
    import re

    from sksoftmax._held_out import significantly_worse as _significantly_worse

    X, y, _, _ = problem
    rows = []  # the held-out per-row losses of each scoring, in order
    scored = SoftmaxClassifier._held_out_losses

    def record(self, held_out):
        out = scored(self, held_out)
        rows.append((out, held_out[2]))
        return out

    monkeypatch.setattr(SoftmaxClassifier, "_held_out_losses", record)
    # few held-out rows: a later phase's lead can be within their noise
    clf = SoftmaxClassifier(solver=solver, random_state=0, verbose=1,
                            n_iter_no_change=2, max_iter=300,
                            validation_fraction=0.05)
    clf.fit(X, y)
    out = capsys.readouterr().out.splitlines()
    epochs = {}  # epoch -> (held-out loss, step)
    restarts = []  # (epoch, step after, best so far)
    for line in out:
        m = re.match(r"Epoch (\d+): held-out log-loss ([\d.]+), step "
                     r"([\d.e+-]+), ", line)
        if m:
            epochs[int(m[1])] = (float(m[2]), float(m[3]))
        m = re.match(r"Epoch (\d+): .*; 2 without improvement: starting "
                     r"again from the start with half the step, "
                     r"([\d.e+-]+) \(best so far: epoch (\d+), ([\d.]+)\)",
                     line)
        if m:
            restarts.append((int(m[1]), float(m[2]), float(m[4])))
    assert restarts, "no restart on this problem"
    # one scoring per scored epoch (a fresh fit has no starting model to
    # score; an epoch that diverged is not scored)
    numbers = np.array(sorted(epochs))
    losses = np.array(clf.validation_loss_)
    assert len(rows) == len(losses) == len(numbers)
    per_row = [r for r, _ in rows]
    p = rows[0][1]
    phase = np.searchsorted([e for e, _, _ in restarts], numbers)
    kept = int(np.flatnonzero(numbers == clf.best_iter_)[0])
    # the best epoch of its own phase and of every phase before it
    assert losses[kept] == losses[phase <= phase[kept]].min()
    # no later epoch beats it beyond the noise
    for i in np.flatnonzero(phase > phase[kept]):
        assert not _significantly_worse(per_row[kept], per_row[i], p)
    bests = [np.inf] + [b for _, _, b in restarts]
    for (e, eta, b), before in zip(restarts, bests):
        # the phase improved on the one before it, and the next epoch
        # runs at half the step the phase ended with
        assert b < before
        assert epochs[e + 1][1] == pytest.approx(eta, rel=1e-3)
        assert eta == pytest.approx(0.5 * epochs[e][1], rel=1e-2)
    # the last phase found no new best: the fit stopped there, with a
    # model of an earlier phase
    if numbers[-1] < clf.max_iter:
        assert clf.best_iter_ <= restarts[-1][0]


@pytest.mark.parametrize("margin, kept_phase", [(0.01, 0), (0.5, 1)])
def test_a_restart_replaces_the_kept_model_only_beyond_the_noise(
    problem, monkeypatch, margin, kept_phase
):
    """Scripted held-out losses: the second phase's best is below the
    first's by ``margin`` in the mean. A lead of 0.01 is within the
    noise of the 120 rows: the first phase's best stays the model and no
    third phase runs; a lead of 0.5 replaces it, and a third phase
    starts."""
    X, y, _, _ = problem
    rng = np.random.RandomState(0)
    n_val = 120  # validation_fraction=0.05 of 2,400 rows
    noise = rng.normal(size=(12, n_val))
    noise -= noise.mean(axis=1, keepdims=True)
    # phase 1: epochs 1-3 improve, 4-5 do not (n_iter_no_change=2);
    # phase 2: epochs 6-8 improve, the best below phase 1's by margin in
    # the mean (paired differences of standard deviation 0.3: a standard
    # error of 0.027), 9-10 do not
    means = [1.0, 0.8, 0.6, 0.601, 0.601,
             1.0, 0.8, 0.6 - margin, 0.601 - margin, 0.601 - margin]
    calls = []

    def scripted(self, held_out):
        i = len(calls)
        calls.append(i)
        assert held_out[0].shape[0] == n_val
        if i >= len(means):
            return 6.0 + noise[0]  # a third phase finds nothing better
        # the rows' own spread, and each epoch's paired noise
        return means[i] + noise[0] + (0.3 * noise[1 + i] if i > 2 else 0)

    monkeypatch.setattr(SoftmaxClassifier, "_held_out_losses", scripted)
    clf = SoftmaxClassifier(solver="scent", random_state=0,
                            n_iter_no_change=2, max_iter=40,
                            validation_fraction=0.05)
    clf.fit(X, y)
    held_out_epochs = len(clf.validation_loss_)
    if kept_phase == 0:
        assert clf.best_iter_ == 3
        assert held_out_epochs == 10  # stopped after the second phase
    else:
        assert clf.best_iter_ == 8
        assert held_out_epochs > 10  # a third phase ran


def test_bad_input_is_named(problem):
    X, y, _, _ = problem
    with pytest.raises(ValueError, match="solver"):
        SoftmaxClassifier(solver="newton").fit(X, y)
    with pytest.raises(ValueError, match="classes must be passed"):
        SoftmaxClassifier().partial_fit(X, y)
    with pytest.raises(ValueError, match="not in classes"):
        SoftmaxClassifier().partial_fit(X, y, classes=np.unique(y)[:-1])
    with pytest.raises(ValueError, match="validation_fraction"):
        SoftmaxClassifier(validation_fraction=0.999).fit(X[:50], y[:50])


def test_an_epoch_is_worse_only_beyond_the_held_out_noise():
    from sksoftmax._held_out import SIGNIFICANCE_Z
    from sksoftmax._held_out import significantly_worse as _significantly_worse

    rng = np.random.RandomState(0)
    best = rng.exponential(size=200)
    p = np.full(200, 1 / 200)
    noise = rng.normal(scale=0.5, size=200)
    # mean shift of a tenth of the standard error: noise
    se = noise.std() / np.sqrt(200)
    assert not _significantly_worse(best + noise - noise.mean() + 0.1 * se, best, p)
    # a shift of SIGNIFICANCE_Z + 1 standard errors: worse
    shifted = best + noise - noise.mean() + (SIGNIFICANCE_Z + 1) * se
    assert _significantly_worse(shifted, best, p)
    # better is never worse; weights count as rows
    assert not _significantly_worse(best - 1.0, best, p)
    w = np.r_[np.full(100, 1 / 100), np.zeros(100)]
    assert not _significantly_worse(np.r_[best[:100], best[100:] + 9], best, w)


@pytest.mark.parametrize(
    "y",
    [
        np.array([5, 0, 5, 3, 9, 3]),
        np.array([5, 0, 5, 3, 9, 3], dtype=np.uint8),
        np.array([-2, 7, 7, -2, 1]),
        np.array([10**9, 3, 3, 10**9]),
        np.array(["b", "a", "c", "a"]),
        np.array([0.5, 2.0, 0.5]),
    ],
)
def test_encode_labels_equals_unique_then_searchsorted(y):
    from sksoftmax._base import _encode_labels

    classes, y_enc = _encode_labels(y)
    expected = np.unique(y)
    assert classes.dtype == expected.dtype
    assert np.array_equal(classes, expected)
    assert y_enc.dtype == np.intp
    assert np.array_equal(y_enc, np.searchsorted(expected, y))


@pytest.mark.parametrize(
    "a",
    [
        np.array([5, 0, 5, 3, 9, 3]),
        np.array([5, 0, 5, 3, 9, 3], dtype=np.uint8),
        np.array([-2, 7, 7, -2, 1]),
        np.array([True, False, True]),
        np.array([4]),
        np.array([], dtype=np.int64),
        np.array(["b", "a", "c", "a"]),
        np.array([0.5, 2.0, 0.5, np.nan, np.nan]),
    ],
)
def test_sorted_distinct_equals_unique(a):
    from sksoftmax._labels import _sorted_distinct

    before, nan = a.copy(), a.dtype.kind == "f"
    got, expected = _sorted_distinct(a), np.unique(a)
    assert got.dtype == expected.dtype
    assert np.array_equal(got, expected, equal_nan=nan)
    assert np.array_equal(a, before, equal_nan=nan)  # not sorted in place


def test_exact_solver_centres_dense_rows():
    """Dense rows are fitted centred: shifting every column by a constant
    leaves the fitted probabilities unchanged (the shift goes into the
    intercepts), and the caller's X is not modified."""
    rng = np.random.RandomState(0)
    X = rng.randn(600, 8) * rng.lognormal(0, 1, 8)
    y = (X[:, 0] + X[:, 1] > 0).astype(int) + (X[:, 2] > 0.5)
    shifted = X + 50.0
    before = shifted.copy()
    a = SoftmaxClassifier(solver="exact", random_state=0).fit(X, y)
    b = SoftmaxClassifier(solver="exact", random_state=0).fit(shifted, y)
    np.testing.assert_array_equal(shifted, before)
    np.testing.assert_allclose(
        a.predict_proba(X), b.predict_proba(shifted), atol=1e-9)
    assert not np.allclose(a.intercept_, b.intercept_)
    # without intercepts nothing can absorb the shift: rows as given
    c = SoftmaxClassifier(solver="exact", fit_intercept=False,
                          random_state=0, max_iter=2).fit(shifted, y)
    assert np.all(c.intercept_ == 0)


def test_partial_fit_continues_in_the_fit_s_centred_coordinates():
    """After a centred fit, partial_fit centres its dense rows by the
    fit's means (the AdaGrad state is that of centred rows): one more pass
    over the same uncentred rows keeps the training loss within 5%."""
    rng = np.random.RandomState(0)
    X = rng.randn(3000, 8) * rng.lognormal(0, 1, 8) + 20.0
    y = (X[:, 0] + X[:, 1] > 40).astype(int) + (X[:, 2] > 20.5)
    clf = SoftmaxClassifier(solver="exact", random_state=0).fit(X, y)
    shift = clf._row_shift.copy()
    np.testing.assert_allclose(shift, X.mean(axis=0))
    before = clf.log_loss(X, y)
    clf.partial_fit(X, y)
    assert clf.log_loss(X, y) < 1.05 * before
    np.testing.assert_array_equal(clf._row_shift, shift)
    # a stream takes its first batch's means
    stream = SoftmaxClassifier(random_state=0)
    stream.partial_fit(X[:300], y[:300], classes=[0, 1, 2])
    np.testing.assert_allclose(stream._row_shift, X[:300].mean(axis=0))


def _full_grid_then_extend(score):
    """The pilot's former stage 1, the reference: every step of the grid
    1/27 ... 3, then up to three grid steps past the end the winner is at
    (down from the lowest while every score is infinite)."""
    grid = [3.0**k for k in range(-3, 2)]
    results = {eta: score(eta) for eta in grid}
    for _ in range(3):
        etas = sorted(results)
        finite = [e for e in etas if results[e] < np.inf]
        lead = min(finite, key=results.get) if finite else None
        if lead is None or lead == etas[0]:
            new = etas[0] / 3
        elif lead == etas[-1]:
            new = etas[-1] * 3
        else:
            break
        results[new] = score(new)
    return results


@pytest.mark.parametrize("best", [3.0**k for k in range(-8, 6)] + [None])
def test_pilot_walk_finds_the_full_grids_winner_with_fewer_trials(best):
    # on a score unimodal in log eta (inf above 100 x the best: a
    # divergence; every score inf for best=None), the walk from 1/3, 1, 3
    # ends at the winner of scoring the whole grid and extending it, with
    # its two neighbours tried (the race's runner-up is one of them), and
    # tries at most as many steps
    from sksoftmax._step_pilot import pilot_walk

    def score(eta):
        if best is None or eta > 100 * best:
            return np.inf
        d = np.log(eta) - np.log(best)
        return d * d + 0.1 * d  # no ties between neighbours

    walked, full = pilot_walk(score), _full_grid_then_extend(score)
    assert len(walked) <= len(full)
    if best is None:
        assert set(walked) == set(full)  # down to the lowest step, 1/729
        return
    win = min(full, key=full.get)
    assert min(walked, key=walked.get) == pytest.approx(win)
    ranked = sorted((v, e) for e, v in full.items())[:2]
    assert sorted((v, e) for e, v in walked.items())[:2] == ranked
    if 1 / 3 <= win <= 3 and win not in (1 / 3, 3):
        assert len(walked) == 3 < len(full)


@pytest.mark.parametrize("pick", [0, 1])
def test_exact_pilot_race_is_decided_on_the_held_out_rows(monkeypatch, pick):
    # stage 2 of the step pilot: the two best steps of stage 1 race, and
    # the one with the lower log-loss on the held-out rows after the race
    # wins, whatever their progressive losses say
    X, y = make_softmax_classification(
        n_samples=4000, n_features=100, n_classes=10, density=0.1,
        random_state=0,
    )
    X = sp.csr_matrix(X)
    params = dict(solver="exact", max_iter=1, random_state=0)
    trials = SoftmaxClassifier(**params).fit(X, y).eta0_trials_
    finalists = trials[np.argsort(trials[:, 1])[:2], 0]
    target = finalists[pick]
    losses = SoftmaxClassifier._held_out_losses

    def rigged(self, held_out):
        rows = losses(self, held_out)
        if self._solver.eta != target:
            rows = rows + 1.0
        return rows

    monkeypatch.setattr(SoftmaxClassifier, "_held_out_losses", rigged)
    clf = SoftmaxClassifier(**params).fit(X, y)
    np.testing.assert_array_equal(clf.eta0_trials_, trials)
    assert clf.eta0_ == target


def test_a_step_rule_race_kept_by_adagrad_changes_nothing(problem):
    """When the step-rule race keeps AdaGrad the fit is that of AdaGrad
    alone: the constant step's phase runs (more epochs) but draws nothing
    from the fit's generator, so the refit's row orders are the same."""
    X, y, _, _ = problem
    raced = SoftmaxClassifier(solver="exact", random_state=0).fit(X, y)
    alone = SoftmaxClassifier(solver="exact", random_state=0)
    alone._exact_step_rule = "adagrad"
    alone.fit(X, y)
    assert raced.step_rule_ == alone.step_rule_ == "adagrad"
    assert raced.n_iter_ > alone.n_iter_
    assert raced.best_iter_ == alone.best_iter_
    np.testing.assert_array_equal(raced.coef_, alone.coef_)
    np.testing.assert_array_equal(raced.intercept_, alone.intercept_)


def _rare_noise_problem(seed, n=3000, K=20, n_informative=60,
                        n_noise=6000, informative=4, noise=6):
    """Rows of ``informative`` frequent features drawn from their class's
    own distribution over ``n_informative`` and ``noise`` rare features
    drawn at random from ``n_noise`` (a rare feature occurs in about
    three rows, of any class), unit-norm: what per-feature AdaGrad steps
    overfit (the rare features' first visits take the largest steps)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, n)
    prefer = rng.dirichlet(np.full(n_informative, 0.3), size=K)
    cols = np.concatenate([
        np.concatenate([
            rng.choice(n_informative, informative, replace=False,
                       p=prefer[y[i]]),
            n_informative + rng.integers(0, n_noise, noise),
        ])
        for i in range(n)
    ])
    rows = np.repeat(np.arange(n), informative + noise)
    X = sp.csr_matrix((np.ones(cols.shape[0]), (rows, cols)),
                      shape=(n, n_informative + n_noise))
    X.sum_duplicates()
    X.data[:] = 1.0
    X = sp.csr_matrix(X.multiply(1.0 / np.sqrt(X.getnnz(axis=1))[:, None]))
    return X, y


@pytest.mark.parametrize("seed", [0, 1])
def test_the_step_rule_race_keeps_the_constant_step_where_it_is_better(seed):
    """Rare noise features beside frequent informative ones: AdaGrad's
    per-feature steps give a rare feature's first visits the largest
    steps and learn the noise. The constant step's held-out loss is lower
    beyond the noise, the race keeps it, and the test log-loss is lower
    than AdaGrad's alone."""
    X, y = _rare_noise_problem(seed)
    X_train, y_train, X_test, y_test = X[:2400], y[:2400], X[2400:], y[2400:]
    raced = SoftmaxClassifier(random_state=0).fit(X_train, y_train)
    alone = SoftmaxClassifier(random_state=0)
    alone._exact_step_rule = "adagrad"
    alone.fit(X_train, y_train)
    assert raced.solver_ == "exact"
    assert raced.step_rule_ == "constant"
    assert raced.log_loss(X_test, y_test) < 0.9 * alone.log_loss(
        X_test, y_test
    )
    # its kept epoch is one of the constant step's, which follow
    # AdaGrad's in validation_loss_
    assert raced.best_iter_ > len(alone.validation_loss_)


def test_the_constant_phase_starts_at_the_pilots_step_scaled_to_its_horizon(
    monkeypatch,
):
    """The race's constant phase runs for at least as many epochs as the
    AdaGrad phase; its pilot judges steps over far fewer rows. Its first
    epoch takes the pilot's step times sqrt(rows judged / (AdaGrad's
    epochs x training rows)), and the pilot does not complete an epoch
    with the unscaled step."""
    X, y = _rare_noise_problem(0)
    pilots = []
    pilot = sksoftmax._descent.pilot

    def recording(est, X, y, sample_weight, rows, **kwargs):
        out = pilot(est, X, y, sample_weight, rows, **kwargs)
        pilots.append((out, kwargs.get("complete_epoch", True), rows.size))
        return out

    monkeypatch.setattr(sksoftmax._descent, "pilot", recording)
    steps = []
    clf = SoftmaxClassifier(random_state=0)
    clf._epoch_callback = lambda m: steps.append(
        (m.step_rule_, m._solver.eta)
    )
    clf.fit(X, y)
    assert clf.solver_ == "exact"
    (_, complete_a, _), ((eta, judged), complete_c, n_rows) = pilots
    assert complete_a and not complete_c
    budget = [rule for rule, _ in steps].index("constant")
    assert budget == sum(rule == "adagrad" for rule, _ in steps) > 0
    expected = eta * np.sqrt(judged / (budget * n_rows))
    assert expected < eta
    first = next(step for rule, step in steps if rule == "constant")
    assert first == pytest.approx(expected, rel=1e-12)


def test_partial_fit_takes_the_forced_step_rule():
    """A stream has no held-out phase to race on: partial_fit's exact
    solver takes AdaGrad's steps, or the rule the private
    ``_exact_step_rule`` forces (the benchmarks' constant-step grid); the
    kernel's two rules are checked against the NumPy reference in
    tests/test_exact.py."""
    X, y = _rare_noise_problem(0, n=600)
    for rule, adaptive in (("adagrad", True), ("constant", False)):
        clf = SoftmaxClassifier(solver="exact", eta0=0.5, random_state=0)
        if rule == "constant":
            clf._exact_step_rule = rule
        clf.partial_fit(X, y, classes=np.arange(20))
        assert clf.step_rule_ == rule
        assert clf._solver.adaptive is adaptive
    # the constant step moves every weight by the same step: its one pass
    # differs from AdaGrad's
    a = SoftmaxClassifier(solver="exact", eta0=0.5, random_state=0)
    a.partial_fit(X, y, classes=np.arange(20))
    c = SoftmaxClassifier(solver="exact", eta0=0.5, random_state=0)
    c._exact_step_rule = "constant"
    c.partial_fit(X, y, classes=np.arange(20))
    assert not np.allclose(a.coef_, c.coef_)


@pytest.mark.parametrize(
    "X, y",
    [
        # two rows of two classes: a tenth of the rows is no row
        (np.array([[0.0, 1.0], [1.0, 0.0]]), np.array([0, 1])),
        # 1,000 classes of one row each: no class can spare a row
        (
            sp.random(1000, 50, density=0.1, format="csr", random_state=0),
            np.arange(1000),
        ),
    ],
    ids=["two_rows", "one_row_per_class"],
)
def test_default_fits_data_with_no_rows_to_hold_out(X, y):
    # with no arguments such data is fitted without held-out rows, as
    # LogisticRegression fits it, and a warning says so
    with pytest.warns(UserWarning, match="without held-out rows"):
        clf = SoftmaxClassifier(random_state=0).fit(X, y)
    assert clf.validation_loss_ is None
    proba = clf.predict_proba(X)
    assert np.all(np.isfinite(proba))
    # a fitted model: its training log-loss is no worse than the uniform
    # prior's log K (the fit starts from the class prior, uniform here,
    # and stops on the training loss)
    assert clf.log_loss(X, y) < np.log(clf.classes_.shape[0])
    # asked for explicitly, the impossible raises, naming the way out
    with pytest.raises(ValueError, match="early_stopping=False"):
        SoftmaxClassifier(early_stopping=True, random_state=0).fit(X, y)


def test_verbose_prints_one_line_per_epoch_with_its_decision(problem, capsys):
    """verbose=1: every epoch of the fit (the held-out phase, the race's
    constant step, the refit) has exactly one line, with its loss, the
    fit's CPU seconds so far and what was decided."""
    import re

    X, y, _, _ = problem
    clf = SoftmaxClassifier(random_state=0, verbose=1, n_iter_no_change=3)
    clf.fit(X, y)
    lines = [
        line for line in capsys.readouterr().out.splitlines()
        if line.startswith("Epoch ")
    ]
    pattern = re.compile(
        r"Epoch (\d+): (held-out log-loss|training loss) [\d.]+, step "
        r"[\d.e+-]+, [\d.]+ CPU s so far; \S.*"
    )
    numbers = []
    for line in lines:
        m = pattern.fullmatch(line)
        assert m, line
        numbers.append(int(m[1]))
    assert numbers == list(range(1, clf.n_iter_ + 1))
    # the held-out lines give the recorded losses
    held = [float(re.search(r"log-loss ([\d.]+)", line)[1])
            for line in lines if "held-out" in line]
    np.testing.assert_allclose(held, clf.validation_loss_, atol=6e-6)
