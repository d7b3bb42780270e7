"""DistributedSoftmaxClassifier's sample_weight, class_weight and held-out
early stopping, on a real LocalCluster of two worker processes (skipped
without dask.distributed: ``_cluster.require_distributed``).
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _cluster import cluster_client, require_distributed
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.utils.class_weight import compute_sample_weight

from sksoftmax import SoftmaxClassifier
from sksoftmax.datasets import make_softmax_classification
from sksoftmax.distributed import DistributedSoftmaxClassifier

da = require_distributed()

D = 12
ALPHA = 1e-2


@pytest.fixture(scope="module")
def client():
    with cluster_client(2) as c:
        yield c


def _data(n=300, k=5, seed=0, **signal):
    X, y = make_softmax_classification(
        n_samples=n, n_features=D, n_classes=k, random_state=seed, **signal
    )
    return X, y * 2 + 3  # labels that are not indices


def _weights(y, seed=0):
    """Integer weights 0 to 3, larger for some classes than others."""
    rng = np.random.RandomState(seed)
    return (np.unique(y, return_inverse=True)[1] % 3 + rng.randint(0, 2, y.shape[0])
            ).astype(np.float64)


def _fit(X, y, sample_weight=None, **params):
    params = {"alpha": ALPHA, "max_iter": 15, "tol": None, "random_state": 0,
              **params}
    est = DistributedSoftmaxClassifier(**params)
    with warnings.catch_warnings():
        # ConvergenceWarning of a fit cut at max_iter
        warnings.simplefilter("ignore")
        return est.fit(X, y, sample_weight=sample_weight)


@pytest.mark.parametrize("strategy", ["dsmlr", "mixing"])
def test_integer_weights_are_repeated_rows(client, strategy):
    """A weight of w counts a row w times: at one model, the weighted
    objective and log-loss are those of the rows repeated; the fit
    minimises that objective (strictly convex, alpha > 0: the single
    process's optimum, fitted with the weights or on the repeated rows,
    within 1% (measured 0.1% by DS-MLR, 0.3% by mixing; the unweighted
    objective is 27% above); the training estimate in ``loss_curve_`` is
    the weighted one."""
    X, y = _data(density=0.3, topic_weight=0.6)
    w = _weights(y)
    assert (w == 0).sum() > 20 and w.max() == 3
    rep = np.repeat(np.arange(y.shape[0]), w.astype(int))
    X_rep, y_rep = X[rep], y[rep]
    single = dict(solver="exact", alpha=ALPHA, max_iter=500, tol=1e-8,
                  early_stopping=False, random_state=0)
    by_weight = SoftmaxClassifier(**single).fit(X, y, sample_weight=w)
    by_rows = SoftmaxClassifier(**single).fit(X_rep, y_rep)
    opt = by_weight.objective(X, y, sample_weight=w)
    assert_allclose(by_rows.objective(X_rep, y_rep), opt, rtol=1e-4)

    est = _fit(X, y, w, strategy=strategy, early_stopping=False)
    got = est.objective(X, y, sample_weight=w)
    assert_allclose(est.objective(X_rep, y_rep), got, rtol=1e-12)
    assert_allclose(est.log_loss(X_rep, y_rep),
                    est.log_loss(X, y, sample_weight=w), rtol=1e-12)
    assert opt - 1e-9 <= got <= 1.01 * opt
    assert est.objective(X, y) > 1.2 * opt
    assert abs(est.loss_curve_[-1] - got) < 0.02
    # the rows repeated reach the same optimum
    again = _fit(X_rep, y_rep, strategy=strategy, early_stopping=False)
    assert opt - 1e-9 <= again.objective(X, y, sample_weight=w) <= 1.01 * opt


@pytest.mark.parametrize("strategy", ["dsmlr", "mixing"])
def test_zero_weights_leave_rows_out(client, strategy):
    """Rows of weight 0 (here junk: rows with shuffled labels) are left
    out of the loss, its gradient and the class prior: placed where
    the training blocks without them are the blocks of the clean rows (two
    workers: each half of the rows one block), the fit is the clean fit to
    the bit, with eta0='auto' (the pilot) and the objective estimates."""
    X, y = _data(n=600, seed=1)
    rng = np.random.RandomState(0)
    junk = X[rng.permutation(600)[:100]]
    y_junk = rng.permutation(y)[:100]
    X_all = sp.vstack([X[:300], junk[:50], X[300:], junk[50:]], format="csr")
    y_all = np.concatenate([y[:300], y_junk[:50], y[300:], y_junk[50:]])
    w = np.concatenate([np.ones(300), np.zeros(50), np.ones(300), np.zeros(50)])
    params = dict(strategy=strategy, early_stopping=False, max_iter=4)
    clean = _fit(X, y, **params)
    dirty = _fit(X_all, y_all, w, **params)
    assert dirty.loss_curve_ == clean.loss_curve_
    assert_array_equal(dirty.to_local().coef_, clean.to_local().coef_)
    assert_array_equal(dirty.to_local().intercept_, clean.to_local().intercept_)
    # the same rows weighted 1 make a worse fit of the clean rows
    ones = _fit(X_all, y_all, **params)
    assert ones.log_loss(X, y) > clean.log_loss(X, y) + 0.01


def test_class_weight_is_its_sample_weight(client):
    """class_weight='balanced' is the fit with scikit-learn's
    compute_sample_weight('balanced', y) as sample_weight, held-out rows and
    stopping included, to the bit; a dict multiplies sample_weight (and a
    dask sample_weight is the in-memory one)."""
    X, y = _data(seed=2)
    y = np.where(y == 3, 5, y)  # unbalanced: one class in two rows in five
    balanced = _fit(X, y, class_weight="balanced", max_iter=6)
    direct = _fit(X, y, compute_sample_weight("balanced", y), max_iter=6)
    assert balanced.validation_loss_ == direct.validation_loss_
    assert balanced.best_iter_ == direct.best_iter_
    assert_array_equal(balanced.to_local().coef_, direct.to_local().coef_)
    unweighted = _fit(X, y, max_iter=6)
    assert unweighted.validation_loss_ != balanced.validation_loss_

    w = _weights(y, seed=3)
    Xd = da.from_array(X, chunks=(100, D))
    yd = da.from_array(y, chunks=100)
    by_dict = _fit(Xd, yd, w, class_weight={5: 3.0, 7: 0.5}, strategy="mixing",
                   max_iter=4)
    by_rows = _fit(Xd, yd, da.from_array(w * np.select([y == 5, y == 7],
                                                       [3.0, 0.5], 1.0),
                                         chunks=100),
                   strategy="mixing", max_iter=4)
    assert by_dict.validation_loss_ == by_rows.validation_loss_
    assert_array_equal(by_dict.to_local().coef_, by_rows.to_local().coef_)


@pytest.mark.parametrize("strategy", ["dsmlr", "mixing"])
def test_held_out_rows_are_not_trained_on(client, strategy):
    """Each row has a feature of its own: its weights stay exactly zero
    unless the row was trained on. They do for the held-out rows (10%,
    SoftmaxClassifier's splitter: each class's latest rows) and for rows
    of weight 0, for no other. ``validation_loss_`` is the held-out rows'
    weighted log-loss of each kept epoch; the model returned is the best
    checked epoch's (recomputed on the gathered model), here not the last:
    the rows' own features overfit."""
    n = 300
    X0, y = _data(n=n, k=8, seed=4, density=0.5, topic_weight=0.5)
    X = sp.hstack([X0, sp.identity(n, format="csr")], format="csr")
    w = np.ones(n)
    w[::7] = 0.0
    w[1::5] = 2.0
    est = _fit(X, y, w, strategy=strategy, alpha=0.0, eta0=2.0, max_iter=8)
    val = np.sort(est._held_out_rows)
    assert val.shape[0] == 30
    # of each class, some of its latest rows
    for label in np.unique(y):
        held = np.isin(np.flatnonzero(y == label), val)
        assert not held[0] and held[-1] and held[np.argmax(held):].all()
    local = est.to_local()
    own = np.abs(local.coef_[:, D:]).max(axis=0)
    untouched = np.flatnonzero(own == 0)
    assert_array_equal(untouched, np.union1d(val, np.flatnonzero(w == 0)))

    assert len(est.validation_loss_) == len(est.loss_curve_) <= est.n_iter_
    loss = local.log_loss(X[val], y[val], sample_weight=w[val])
    assert_allclose(min(est.validation_loss_), loss, rtol=1e-10)
    assert 1 <= est.best_iter_ < est.n_iter_
    assert est.validation_loss_[-1] > loss
    assert_allclose(est.log_loss(X[val], y[val], sample_weight=w[val]), loss,
                    rtol=1e-10)


def test_held_out_rows_stop_the_fit(client):
    """With tol and n_iter_no_change, the held-out log-loss stops the fit:
    n_iter_no_change checks in a row without an improvement of tol (each
    halving the step), the best one kept."""
    X, y = _data(n=400, seed=5)
    est = _fit(X, y, tol=1e-2, n_iter_no_change=3, max_iter=50)
    curve = np.asarray(est.validation_loss_)
    assert len(curve) == est.n_iter_ < 50  # (no epoch undone here)
    best = np.minimum.accumulate(curve)
    improved = np.flatnonzero(best[1:] < best[:-1] * (1 - 1e-2)) + 1
    last = improved[-1] if improved.shape[0] else 0
    assert len(curve) - 1 - last == 3
    assert est.eta_ <= 0.5**3


def test_no_rows_to_spare(client):
    """One row per class: early_stopping='auto' warns and stops on the
    training objective; True raises a ValueError naming the way out."""
    X = np.eye(4)
    y = np.arange(4)
    est = DistributedSoftmaxClassifier(max_iter=2, tol=None)
    with pytest.warns(UserWarning, match="without held-out rows"):
        est.fit(X, y)
    assert est.validation_loss_ is None and est._held_out_rows is None
    assert est.n_iter_ == 2
    with pytest.raises(ValueError, match="set early_stopping=False"):
        est.set_params(early_stopping=True).fit(X, y)


def test_bad_sample_weight_raises(client):
    X, y = _data(n=60)
    est = DistributedSoftmaxClassifier(max_iter=1, early_stopping=False)
    with pytest.raises(ValueError, match="Negative"):
        est.fit(X, y, sample_weight=np.r_[-1.0, np.ones(59)])
    with pytest.raises(ValueError, match="shape"):
        est.fit(X, y, sample_weight=np.ones(59))
    with pytest.raises(ValueError, match="non-zero"):
        est.fit(X, y, sample_weight=np.zeros(60))
    with pytest.raises(ValueError, match="class_weight"):
        DistributedSoftmaxClassifier(class_weight="even").fit(X, y)
    with pytest.raises(ValueError, match="validation_fraction"):
        DistributedSoftmaxClassifier(validation_fraction=1.0).fit(X, y)
