"""Merging an exact evaluation done by class shards (private).

A softmax row's log-partition, true-class score, argmax and top k over all
classes follow from each class shard's own: per row, the shard's largest
score m and sum of exponentials S below it (``stats``), its argmax, and its
top k with their probabilities within the shard. The distributed model
scores by class shards and merges here (``distributed._worker``: each
worker's shard, the merge on one worker).
"""

import numpy as np


def _partition(parts):
    """(M, total, weights): M the rows' largest score over the shards,
    total = sum_p S_p e^{m_p - M}, and each shard's share S_p e^{m_p - M}
    as an (n, P) array."""
    m = np.stack([p[0][:, 0] for p in parts], axis=1)
    s = np.stack([p[0][:, 1] for p in parts], axis=1)
    top = m.max(axis=1)
    with np.errstate(invalid="ignore", over="ignore"):
        share = s * np.exp(m - top[:, None])
    return top, share.sum(axis=1), share


def merge_stats(*parts):
    """The rows' (log-partition, true-class score, argmax) over all
    shards, from each shard's (stats, argmax) in class order: stats the
    (n, 3) rows (m, S, s_y) of ``_evaluate(X, 'stats')`` (s_y = -inf
    where the label is in another shard), argmax a global class index."""
    top, total, _ = _partition(parts)
    lse = top + np.log(total)
    s_y = np.stack([p[0][:, 2] for p in parts], axis=1).max(axis=1)
    m = np.stack([p[0][:, 0] for p in parts], axis=1)
    # the first shard with the largest score: np.argmax's first index
    first = np.argmax(m, axis=1)
    arg = np.stack([p[1] for p in parts], axis=1)[np.arange(m.shape[0]), first]
    return lse, s_y, arg


def merge_topk(k, *parts):
    """The rows' k most probable classes over all shards and their
    probabilities, from each shard's (stats, index, proba): its rows'
    (m, S, .), its top k (global indices) and their probabilities within
    the shard. Each shard's probabilities times its share of the
    partition function, then the candidates sorted by probability, ties
    to the lower class (as the single-process kernel)."""
    _, total, share = _partition(parts)
    dtype = parts[0][2].dtype
    scale = share / total[:, None]
    proba = np.concatenate(
        [
            (p[2].astype(np.float64) * scale[:, j : j + 1]).astype(dtype)
            for j, p in enumerate(parts)
        ],
        axis=1,
    )
    index = np.concatenate([p[1] for p in parts], axis=1)
    order = np.lexsort((index, -proba), axis=1)[:, :k]
    return (
        np.take_along_axis(index, order, axis=1),
        np.take_along_axis(proba, order, axis=1),
    )
