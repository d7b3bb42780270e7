"""The solvers (``_solver.SGDSolver``): a solver's ``setup`` and epochs
give the estimator's fit bit for bit, and the eta0 pilot reproduces its
trials from a ``PilotSetup`` alone (a copy of what it needs, no
estimator)."""

import numpy as np
import pytest
import scipy.sparse as sp
from _estimators import four_class_problem
from numpy.testing import assert_array_equal

from sksoftmax import (
    ARProbitClassifier,
    ARSoftmaxClassifier,
    ImplicitSGDClassifier,
    SampledSoftmaxClassifier,
    SCENTClassifier,
    StochasticBoundClassifier,
    UMaxSoftmaxClassifier,
    _eta0_pilot,
)
from sksoftmax._labels import _encode_labels
from sksoftmax._shared._dataset import make_dataset
from sksoftmax._shared._weight_matrix import make_weight_matrix
from sksoftmax._solver import PilotSetup
from sksoftmax.datasets import make_softmax_classification

CASES = [
    (UMaxSoftmaxClassifier, {}),
    (UMaxSoftmaxClassifier, {"sampler": "frequency", "alpha": 1e-3}),
    (UMaxSoftmaxClassifier, {"learning_rate": "adagrad", "eta0": 0.5}),
    (ImplicitSGDClassifier, {}),
    (ImplicitSGDClassifier, {"sampler": "uniform", "n_sampled_classes": 2}),
    (SampledSoftmaxClassifier, {}),
    (SampledSoftmaxClassifier, {"loss": "nce", "sampler": "frequency"}),
    (SCENTClassifier, {}),
    (SCENTClassifier, {"momentum": 0.9, "batch_size": 16}),
    (ARSoftmaxClassifier, {}),
    (ARProbitClassifier, {"learning_rate": "constant"}),
    # one epoch: the bound's re-weighting between epochs is the estimator's
    (StochasticBoundClassifier, {"eta0": 1.0, "max_iter": 1}),
    (StochasticBoundClassifier, {"eta0": 0.1, "max_iter": 1, "rank": 3}),
]


@pytest.mark.parametrize("Est, params", CASES)
def test_solver_setup_and_epochs_give_the_fit(Est, params):
    """setup (zero W, class-prior intercepts, a new generator, the
    sampler's table, the method's own state) then the epochs is the
    estimator's fit."""
    X, y = four_class_problem()
    params = {"eta0": 0.05, "max_iter": 2, **params}
    est = Est(tol=None, random_state=0, **params).fit(X, y)
    _, y_enc = _encode_labels(y)
    w = np.ones(X.shape[0])
    solver = est._make_solver(n_threads=1)
    state = solver.setup(
        X.shape[1], X.dtype, 0, np.bincount(y_enc).astype(float), 1.0
    )
    dataset = make_dataset(X, w)
    weights = make_weight_matrix(state.coef, state.intercept, 0.0)
    u = solver.new_row_state(X.shape[0])
    order = np.arange(X.shape[0], dtype=np.intp)
    schedule = est._schedule()
    for epoch in range(params["max_iter"]):
        eta = schedule.eta_for_epoch(params["eta0"], est.decay, epoch)
        solver.epoch(state, dataset, weights, y_enc, u, order, eta, epoch == 0)
    weights.fold_scale()
    assert state.t == est.t_
    assert_array_equal(state.coef, est.coef_)
    assert_array_equal(state.intercept, est.intercept_)


@pytest.mark.parametrize("Est", [UMaxSoftmaxClassifier, ImplicitSGDClassifier])
def test_pilot_runs_from_its_setup_alone(Est):
    """The pilot's trials depend only on the PilotSetup: replayed from a
    setup whose estimator is gone, they are the fit's eta0_trials_."""
    X, y = make_softmax_classification(
        n_samples=1500,
        n_features=60,
        n_classes=30,
        density=0.1,
        class_exponent=1.0,
        random_state=0,
    )
    X = sp.csr_matrix(X)
    est = Est(max_iter=1, tol=None, random_state=0).fit(X, y)
    setup = est._pilot_setup()
    assert isinstance(setup, PilotSetup)
    trials, rule = est.eta0_trials_, est.eta0_trials_[0, 0]
    del est
    _, y_enc = _encode_labels(y)
    best, replayed = _eta0_pilot.pilot_eta0(
        setup, X, y_enc, np.ones(X.shape[0]), rule
    )
    assert_array_equal(replayed, trials)
    # the setup's counts are a copy: the trials did not change them
    assert_array_equal(setup.class_count, np.bincount(y_enc))
