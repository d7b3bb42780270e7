"""The steps of ``SoftmaxClassifier.partial_fit`` after validation.

``count_batch`` adds a batch to the class totals (and starts classes new
to the model at their class-prior intercept), ``start_stream`` chooses and
builds the solver on the first call, and ``stream_pass`` runs the batch's
one pass (the step pilot's too, on a first batch) on rows centred as the
first batch's (or ``fit``'s) were.
"""

import numpy as np
import scipy.sparse as sp

from ._centring import centred, column_shift, shift_intercepts
from ._descent import full_pass
from ._new_classes import grow_rows
from ._solver_choice import choose_solver_verbosely, new_solver, prior_intercept
from ._step_pilot import pilot


def count_batch(est, y_enc, sample_weight, n_old, first):
    """Add the batch's class totals to ``est._partial_fit_counts`` (grown
    from ``n_old`` classes to the current ones); the new classes start at
    the class prior of the rows so far (this batch's included), their
    rows of W at zero."""
    n_classes = est.classes_.shape[0]
    if first:
        est._partial_fit_counts = np.zeros(n_classes)
    else:
        counts = est.__dict__.get("_partial_fit_counts")
        if counts is None or counts.shape[0] != n_old:
            counts = np.zeros(n_old)
        if n_classes > n_old:
            counts = grow_rows(counts, n_classes, 0.0)
        est._partial_fit_counts = counts
    np.add.at(est._partial_fit_counts, y_enc, sample_weight)
    if not first and n_classes > n_old:
        prior = prior_intercept(est.fit_intercept, est._partial_fit_counts)
        est._solver.grow(n_classes, None if prior is None else prior[n_old:])


def start_stream(est, X, y_enc, sample_weight):
    """The first call's solver, chosen from its batch (no 'lbfgs': one
    pass a call), and the column means that centre every dense batch."""
    if est.solver == "lbfgs":
        raise ValueError(
            "SoftmaxClassifier(solver='lbfgs') fits on all rows at "
            "once: partial_fit needs a stochastic solver ('auto' "
            "takes 'exact' or 'scent' for a stream)."
        )
    est._rng = est._new_rng()
    name = choose_solver_verbosely(est, est.classes_.shape[0], X, True)
    # a stream has no held-out phase to race the step rules on
    est.step_rule_ = est._initial_step_rule()
    new_solver(est, X, y_enc, sample_weight)
    est.loss_curve_ = []
    est.n_iter_ = 0
    # the first batch's column means centre every dense batch
    est._row_shift = None
    if name == "exact":
        est._row_shift = column_shift(est, X, sample_weight)


def stream_pass(est, X, y_enc, sample_weight, first):
    """The batch's pass, on its dense rows centred by ``_row_shift`` (the
    model moved into centred coordinates for it and back after)."""
    shift = est.__dict__.get("_row_shift")
    if shift is not None and (
        sp.issparse(X) or shift.shape[0] != X.shape[1]
    ):
        shift = None
    if shift is not None:
        X = centred(X, shift)
        shift_intercepts(est._solver, shift, +1.0)
    try:
        _pass(est, X, y_enc, sample_weight, first)
    finally:
        if shift is not None:
            shift_intercepts(est._solver, shift, -1.0)


def _pass(est, X, y_enc, sample_weight, first):
    """partial_fit's pass (the pilot's too, on a first batch), on rows
    in the solver's coordinates."""
    if (
        first
        and est.solver_ == "exact"
        and est.eta0 == "auto"
        and sample_weight.sum() > 0
    ):
        pilot(
            est,
            X,
            y_enc,
            sample_weight,
            np.arange(X.shape[0], dtype=np.intp),
            whole_epoch=False,
        )
    if not np.any(sample_weight > 0):
        return
    est.loss_curve_.append(full_pass(est, X, y_enc, sample_weight))
    est.n_iter_ = 1
    est.eta0_ = float(est._solver.eta)
