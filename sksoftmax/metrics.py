"""Scorers built on the estimators' exact evaluation.

``neg_log_loss_scorer`` scores with the estimators' own ``log_loss`` (exact,
no (n, K) probability matrix) and accepts dask arrays, where dask-ml's
``scoring='neg_log_loss'`` fails with current scikit-learn (see
``doc/user_guide/dask.rst``).
"""

import sys

import numpy as np

__all__ = ["neg_log_loss_scorer"]


def _is_dask_collection(obj):
    # dask is an optional dependency: an object can only be a dask
    # collection if dask was imported already, so never import it here
    if "dask" not in sys.modules:
        return False
    import dask

    return dask.is_dask_collection(obj)


def _fitted_model(estimator):
    """The sksoftmax estimator inside ``estimator``: itself, or the model a
    dask-ml wrapper holds (``Incremental.estimator_`` once fitted,
    ``ParallelPostFit.estimator`` when wrapped prefit)."""
    for candidate in (
        estimator,
        getattr(estimator, "estimator_", None),
        getattr(estimator, "estimator", None),
    ):
        if candidate is not None and hasattr(candidate, "log_loss"):
            return candidate
    raise TypeError(
        "neg_log_loss_scorer needs a fitted sksoftmax estimator (one with a "
        "log_loss method) or a dask-ml wrapper holding one; got "
        f"{type(estimator).__name__}."
    )


def _block_loss_sum(model, X, y, sample_weight):
    """(sum of w_i * -log p(y_i | x_i), sum of w_i) over one block of rows:
    the block means of log_loss weighted by the block's total weight add
    up to the exact mean over all blocks."""
    if X.shape[0] == 0:
        return 0.0, 0.0
    if sample_weight is None:
        total = float(X.shape[0])
    else:
        total = float(np.sum(sample_weight))
        if total == 0.0:
            return 0.0, 0.0
    return model.log_loss(X, y, sample_weight=sample_weight) * total, total


def _as_row_chunks(a, row_chunks):
    """``a`` (dask or in-memory, 1-d) as a dask array with these row
    chunks, so its blocks line up with the blocks of X."""
    import dask.array as da

    if _is_dask_collection(a):
        return da.asarray(a).rechunk((row_chunks,))
    return da.from_array(np.asarray(a), chunks=(row_chunks,))


def _dask_log_loss(model, X, y, sample_weight):
    import dask
    import dask.array as da

    X = da.asarray(X)
    if X.numblocks[1] != 1:
        # log_loss needs whole rows
        X = X.rechunk({1: -1})
    if np.isnan(X.shape[0]) or any(np.isnan(c) for c in X.chunks[0]):
        raise ValueError(
            "neg_log_loss_scorer needs a dask array with known chunk sizes; "
            "call X.compute_chunk_sizes() first."
        )
    y_blocks = _as_row_chunks(y, X.chunks[0]).to_delayed()
    w_blocks = (
        [None] * len(y_blocks)
        if sample_weight is None
        else _as_row_chunks(sample_weight, X.chunks[0]).to_delayed()
    )
    # the model goes to the workers once, not once per block
    model = dask.delayed(model, traverse=False)
    parts = [
        dask.delayed(_block_loss_sum)(model, xb, yb, wb)
        for xb, yb, wb in zip(X.to_delayed()[:, 0], y_blocks, w_blocks)
    ]
    parts = dask.compute(*parts)
    loss = sum(p[0] for p in parts)
    weight = sum(p[1] for p in parts)
    if weight <= 0:
        raise ValueError("neg_log_loss_scorer: no rows of positive weight.")
    return loss / weight


def neg_log_loss_scorer(estimator, X, y, sample_weight=None):
    """Negative exact mean log-loss, as a scikit-learn scorer.

    A callable to pass as ``scoring=`` wherever scikit-learn takes one
    (``GridSearchCV``, ``cross_validate``, also under joblib's dask
    backend), or to call as ``neg_log_loss_scorer(model, X, y)`` on a
    fitted model or a fitted dask-ml ``Incremental`` / ``ParallelPostFit``
    with dask arrays. It returns ``-estimator.log_loss(X, y)``: the
    estimators' exact log-loss, computed without the (n_samples, n_classes)
    probability matrix that scikit-learn's ``'neg_log_loss'`` forms, and
    greater is better, as for every scorer.

    With a dask array ``X`` (dense or scipy.sparse blocks) the loss of each
    block of rows is computed where the block lives (on the workers of a
    ``distributed`` client, if one is active) and only two numbers per
    block come back; ``y`` and ``sample_weight`` may be dask or in-memory
    arrays. This is the working replacement of dask-ml's
    ``scoring='neg_log_loss'``, which fails with scikit-learn >= 1.6
    (``TypeError: log_loss() got an unexpected keyword argument
    'needs_proba'``). Call it directly there rather than as
    ``Incremental(scoring=neg_log_loss_scorer)``: dask-ml 2025.1's
    ``score`` on dask arrays treats any callable ``scoring`` as a metric
    ``(y_true, y_pred)`` and fails (``unexpected keyword argument
    'compute'``).

    Parameters
    ----------
    estimator : estimator
        A fitted sksoftmax classifier, or a dask-ml ``Incremental`` /
        ``ParallelPostFit`` wrapping one.
    X : {array-like, sparse matrix, dask array} of shape \
(n_samples, n_features)
        Rows to score.
    y : array-like or dask array of shape (n_samples,)
        Labels, all in the model's ``classes_``.
    sample_weight : array-like or dask array of shape (n_samples,), \
default=None
        Non-negative row weights; None gives ones.

    Returns
    -------
    score : float
        Minus the weighted mean of -log p(y_i | x_i).

    Examples
    --------
    >>> from sklearn.model_selection import cross_val_score
    >>> from sksoftmax import UMaxSoftmaxClassifier
    >>> from sksoftmax.datasets import make_softmax_classification
    >>> from sksoftmax.metrics import neg_log_loss_scorer
    >>> X, y = make_softmax_classification(
    ...     n_samples=600, n_features=50, n_classes=5, random_state=0)
    >>> clf = UMaxSoftmaxClassifier(max_iter=5, tol=None, random_state=0)
    >>> clf = clf.fit(X, y)
    >>> bool(neg_log_loss_scorer(clf, X, y) == -clf.log_loss(X, y))
    True
    >>> scores = cross_val_score(
    ...     UMaxSoftmaxClassifier(max_iter=5, tol=None, random_state=0),
    ...     X, y, cv=3, scoring=neg_log_loss_scorer)
    >>> bool((scores < 0).all())
    True
    """
    model = _fitted_model(estimator)
    if any(_is_dask_collection(a) for a in (X, y, sample_weight)):
        return -_dask_log_loss(model, X, y, sample_weight)
    return -model.log_loss(X, y, sample_weight=sample_weight)
