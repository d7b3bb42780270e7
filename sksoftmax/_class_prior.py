"""The class-prior start of the intercepts and its counts (private).

Shared by fit, partial_fit and the eta0 pilot: the same functions set
the intercepts of a new model to the log class frequencies.

With coef_ at zero this is the class-prior model, the best model without
features: an epoch starts there rather than at the uniform model, whose
log-loss, log K, is far worse when the class frequencies are skewed (tags,
tokens, products). The frequencies are the weighted counts
``class_count_`` (sample weights times class weights: the optimum of the
weighted objective with W = 0) plus one pseudo-row of weight w spread
evenly over the classes, p_k = (c_k + w / K) / (C + w) with C the total
weight, so that a class not seen yet gets a small, finite intercept; w is
the largest row weight, at most the smallest positive class total
(``_prior_pseudo_weight``).
"""

import uuid

import numpy as np


def _prior_pseudo_weight(counts, largest):
    """The weight of the class prior's pseudo-row: the largest row weight
    ``largest``, or the smallest positive class total when that is less.

    Spread over the K classes, the pseudo-row gives a class without rows
    a small, finite intercept. The largest row weight (not the mean) keeps
    rows of zero weight, or of a tiny one, without effect; the cap keeps
    it from swamping light classes: under class weights of 1000 and 1e-4
    a pseudo-row of weight 1000 gave the light classes a prior of 1%, where
    the weighted objective's optimum with W = 0 gives them 1e-7. Without
    weights both are at least 1: the pseudo-row weighs 1. O(K).
    """
    positive = counts[counts > 0]
    if positive.size == 0:
        return largest
    return min(largest, float(positive.min()))


def prior_frequencies(counts, max_row_weight, classes=None):
    """p_k = (c_k + w / K) / (C + w) of ``start_at_prior``, for ``classes``
    (indices; None: all), O(len(classes)) beyond the sum."""
    pseudo = _prior_pseudo_weight(counts, max_row_weight)
    chosen = counts if classes is None else counts[classes]
    return (chosen + pseudo / counts.shape[0]) / (counts.sum() + pseudo)


def start_at_prior(intercept, counts, max_row_weight, classes):
    """Set ``intercept[classes]`` to their log prior frequency (nothing
    while no row of positive weight was counted)."""
    if classes.size == 0 or counts.sum() <= 0:
        return
    intercept[classes] = np.log(
        prior_frequencies(counts, max_row_weight, classes)
    )


def next_count_version():
    """A random 122-bit number for each change of ``class_count_``:
    the class sampler rebuilds its table when it changes. Random, not
    a counter, so that it cannot repeat across estimators nor across
    processes (an unpickled cache must not match a later change)."""
    return uuid.uuid4().int


def new_weights(n_classes, n_features, dtype):
    """Zero (coef, intercept) of a model of this shape."""
    # calloc'ed: a page of W is mapped when a class on it is first written,
    # so a call that meets a fraction of the classes pays for that fraction
    # (writing all of a large W up front can cost more than the call's
    # epoch); a fit that reaches every class pays the same faults during
    # its first epochs instead
    return (
        np.zeros((n_classes, n_features), dtype=dtype),
        np.zeros(n_classes, dtype=dtype),
    )
