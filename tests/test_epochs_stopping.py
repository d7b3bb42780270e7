"""The stopping tolerance shared by every estimator (``_epochs.improves``)."""

import numpy as np
import pytest

from sksoftmax import SoftmaxClassifier
from sksoftmax._epochs import improves


@pytest.mark.parametrize("scale", [1e-3, 1.0, 7.0, 1e4])
def test_improves_is_relative_to_the_best(scale):
    """An epoch counts when it beats the best by more than tol x best, so
    one tolerance means the same on a loss of 0.02 nats and one of 7."""
    best = 2.0 * scale
    assert improves(best * (1 - 2e-3), best, 1e-3)
    assert not improves(best * (1 - 5e-4), best, 1e-3)
    assert not improves(best, best, 0.0)
    assert improves(np.nextafter(best, 0.0), best, 0.0)


def test_improves_at_the_start_and_without_tol():
    assert improves(5.0, np.inf, 1e-3)
    assert not improves(np.inf, np.inf, 1e-3)
    assert improves(5.0, 1.0, None)  # None: every epoch counts


def test_front_door_stops_on_the_relative_tolerance():
    """The held-out phase ends n_iter_no_change epochs after the last
    epoch that improved its best by more than tol x best."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((600, 20))
    y = (X[:, :5] @ rng.standard_normal((5, 6))).argmax(axis=1)
    tol, patience = 1e-2, 3
    clf = SoftmaxClassifier(
        solver="exact", tol=tol, n_iter_no_change=patience, max_iter=200,
        random_state=0,
    )
    # one step rule: validation_loss_ is then the one phase's
    clf._exact_step_rule = "adagrad"
    clf.fit(X, y)
    losses = clf.validation_loss_
    assert len(losses) < 200
    best, last = np.inf, None
    for i, loss in enumerate(losses):
        if improves(loss, best, tol):
            last = i
        best = min(best, loss)
    assert last == len(losses) - 1 - patience
