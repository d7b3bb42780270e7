"""What runs on the workers: the class shards, their per-row reductions
and the merges, and the DS-MLR sub-epoch around its kernel.

Every function here is a plain function of arrays, submitted as a task by
``_estimator.py``; none keeps state between calls except through the
arrays it returns (a task never modifies its inputs: a class block is
copied by the sub-epoch that updates it, so a future's value never
changes).
"""

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_array

from .._exact_fast import (
    exact_epoch32,
    exact_epoch64,
    exact_finalize32,
    exact_finalize64,
)
from .._prediction import SoftmaxPredictionMixin
from .._shard_merge import merge_stats, merge_topk  # noqa: F401 (tasks)
from .._shared._codes import Status
from .._shared._dataset import make_dataset

# the exact solver's epoch in its class-block mode, and its final decay
_EPOCH = {np.dtype(np.float64): exact_epoch64, np.dtype(np.float32): exact_epoch32}
_FINALIZE = {
    np.dtype(np.float64): exact_finalize64,
    np.dtype(np.float32): exact_finalize32,
}


class ClassShard(SoftmaxPredictionMixin):
    """Rows lo:hi of a model's W and intercepts, scored by the package's
    evaluation kernels (``_prediction._evaluate``) as a model of its own
    whose classes are 0..hi-lo-1.

    ``coef`` (K_b, D) is kept C-contiguous or as the transpose of a
    C-contiguous (D, K_b) array (the DS-MLR sub-epoch's layout, which the
    evaluation reads as it is).
    """

    def __init__(self, coef, intercept, lo, n_jobs=None, adagrad=None):
        if not (coef.flags.c_contiguous or coef.T.flags.c_contiguous):
            coef = np.ascontiguousarray(coef)
        self.coef_ = coef
        # DS-MLR's per-feature step state of the block (G, tau_last,
        # [tau, G_b]), travelling with it; None in a model only predicting
        self.adagrad = adagrad
        self.intercept_ = np.ascontiguousarray(intercept, dtype=self.coef_.dtype)
        self.classes_ = np.arange(self.coef_.shape[0])
        self.lo = int(lo)
        self.n_jobs = n_jobs

    def local_labels(self, y_enc):
        """Indices of the encoded labels in this shard, -1 outside."""
        local = np.asarray(y_enc, dtype=np.intp) - self.lo
        local[(local < 0) | (local >= self.coef_.shape[0])] = -1
        return local


def make_shard(coef, intercept, lo, n_jobs=None):
    return ClassShard(coef, intercept, lo, n_jobs)


def zero_shard(n_classes, n_features, dtype, intercept, lo, n_jobs=None):
    """A class block of zeros made on its worker by a task (recomputable
    from its lineage, unlike scattered data), stored transposed as the
    sub-epoch keeps it, with a fresh AdaGrad state."""
    Wt = np.zeros((n_features, n_classes), dtype=dtype)
    state = (np.zeros(n_features), np.zeros(n_features), np.zeros(2))
    return ClassShard(Wt.T, np.asarray(intercept, dtype=dtype), lo, n_jobs,
                      state)


def shard_from_arrays(lo, n_jobs, coef, intercept, *adagrad):
    """A class block from a checkpoint's arrays (coef (K_b, D), its
    intercepts and, with AdaGrad, its step state), stored transposed as the
    sub-epoch keeps it."""
    Wt = np.ascontiguousarray(np.asarray(coef).T)
    state = tuple(np.array(a, copy=True) for a in adagrad)
    return ClassShard(Wt.T, np.asarray(intercept), lo, n_jobs, state)


def held_bytes(dask_worker):
    """Bytes of the class blocks (W and intercepts) in a worker's memory:
    every ClassShard among the results it holds (alone or in a tuple),
    each counted once. For ``client.run``: the measure of the tests and
    the benchmark."""
    data = getattr(dask_worker.data, "fast", dask_worker.data)
    seen = {}
    for value in list(data.values()):
        items = value if isinstance(value, tuple) else (value,)
        for item in items:
            if isinstance(item, ClassShard):
                seen[id(item)] = item.coef_.nbytes + item.intercept_.nbytes
    return int(sum(seen.values()))


def shard_arrays(shard):
    """(coef, intercept) of a shard, for ``to_local`` and ``coef_norm``."""
    return shard.coef_, shard.intercept_


def shard_sq_norm(shard):
    c = shard.coef_.astype(np.float64, copy=False).ravel()
    return float(c @ c)


# ------------------------------------------------------------- inputs
def check_block(X, n_features):
    """A block of rows as the evaluation and the kernels take it (CSR or
    C-contiguous, float64 or float32), or a ValueError naming the
    problem."""
    if sp.issparse(X) and X.format != "csr":
        X = X.tocsr()
    X = check_array(
        X, accept_sparse="csr", dtype=[np.float64, np.float32], order="C"
    )
    if X.shape[1] != n_features:
        raise ValueError(
            f"X has {X.shape[1]} features, but DistributedSoftmaxClassifier "
            f"is expecting {n_features} features as input."
        )
    if sp.issparse(X) and not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return X


def encode_labels(y, classes):
    """Indices of ``y`` in the sorted ``classes``; ValueError if a label
    is not one of them."""
    y = np.asarray(y).ravel()
    idx = np.searchsorted(classes, y)
    idx[idx == classes.shape[0]] = 0
    if not np.array_equal(classes[idx], y):
        raise ValueError("y contains labels not in classes_.")
    return idx.astype(np.intp)


def block_labels(y):
    return np.unique(np.asarray(y).ravel())


def n_rows(X):
    return X.shape[0]


def n_columns(X):
    return X.shape[1]


# ------------------------------------------------- sharded evaluation
def shard_stats(shard, X, y_enc):
    """Per row of X: (m, S, s_y) over the shard's classes (s_y = -inf
    where y is in another shard; y_enc None: no labels) and the global
    index of the shard's argmax."""
    y = None if y_enc is None else shard.local_labels(y_enc)
    stats, arg = shard._evaluate(X, "stats", y_enc=y)
    return stats, arg + shard.lo


def shard_topk(shard, X, k):
    """The shard's ``k`` (at most its classes) most probable classes of
    each row, global indices, with their probabilities within the shard,
    and the rows' (m, S) over the shard."""
    kk = min(k, shard.coef_.shape[0])
    index, proba = shard._evaluate(X, "topk", k=kk)
    stats, _ = shard._evaluate(X, "stats")
    return stats, index + shard.lo, proba


def merged_lse(merged):
    return merged[0]


def merged_nll(merged):
    """The rows' log-loss from their merged (log-partition, true-class
    score, argmax)."""
    return merged[0] - merged[1]


def shard_proba(shard, X, lse):
    """The shard's columns of predict_proba: e^{s_k - lse} per row, with
    the rows' log-partition over all shards."""
    scores = shard._evaluate(X, "scores")
    out = np.exp(scores.astype(np.float64) - lse[:, None])
    return out.astype(scores.dtype, copy=False)


def hstack_blocks(*blocks):
    return np.hstack(blocks)


# ------------------------------------------------------------ DS-MLR
def concat_rows(*blocks):
    """One block from several (X, y, sample_weight) blocks of rows, in
    order."""
    Xs = [b[0] for b in blocks]
    X = sp.vstack(Xs, format="csr") if sp.issparse(Xs[0]) else np.vstack(Xs)
    return (X, *(np.concatenate([b[j] for b in blocks]) for j in (1, 2)))


def pair(X, y, sample_weight, index=None):
    """Rows ``index`` of a block (None: all, no copy) with their labels
    and weights (already those rows')."""
    if index is not None:
        X = X[np.asarray(index, dtype=np.intp)]
    return X, y, sample_weight


def rows_as(X, dtype):
    """A block of rows as the kernels take it: CSR or C-contiguous, in
    ``dtype``."""
    if sp.issparse(X):
        return X.astype(dtype, copy=False).tocsr()
    return np.ascontiguousarray(X, dtype=dtype)


def held_out_rows(dtype, *pairs):
    """The held-out rows of a worker, from the (X, y, weight) pieces of
    its input blocks: (X, encoded labels); their weights stay with the
    client, which averages the rows' losses."""
    X, y, _ = concat_rows(*pairs)
    return rows_as(X, dtype), np.asarray(y, dtype=np.intp)


def subepoch(rows, block, partials, q, opts, *after):
    """One (row block, class block ``q``) sub-epoch of DS-MLR on a copy of
    the class block: the exact solver's epoch in its class-block mode
    (``_exact_fast``: each row's softmax over the block's classes and the
    other blocks' last-seen part of the partition), on ``n_jobs``
    threads, then its final L2 decay. ``partials`` (2P + 1, n): what
    each row last saw of each class
    block (its log sum of e^z, then its log sum of e^{2z}) and its
    label's score; the blocks other than ``q`` give the kernel's view of
    the rest. Returns (the updated block, (lse_part, sy_part, status,
    bad_value, seen)): the block's log-partition before each row's step,
    its true-class score (0 when the label is elsewhere), and ``seen``
    (the kernel's rows 3, 6, 7: after the row's step) for
    ``update_partials``. ``after``: tokens of the tasks it waits for
    (unused)."""
    from .._shared._openmp import effective_n_threads

    # a copy, transposed (D, K_b): the kernel's layout
    Wt = np.array(block.coef_.T, order="C", copy=True)
    intercept = np.array(block.intercept_, copy=True)
    G, tau_last, scalars = (np.array(a, copy=True) for a in block.adagrad)
    X = rows["X"]
    n = X.shape[0]
    buf = np.empty((8, n))
    buf[0], buf[4], buf[5] = rest_partition(partials, q)
    buf[7] = buf[5]
    buf[2] = 0.0
    y_local = block.local_labels(rows["y"])
    order = (
        np.random.default_rng(opts["seed"]).permutation(n)
        if opts["shuffle"]
        else np.arange(n)
    ).astype(np.intp)
    eopts = {
        "eta": opts["eta"],
        "alpha": opts["alpha"],
        "eps": opts["eps"],
        "adaptive": True,
        "fit_intercept": opts["fit_intercept"],
        "n_threads": effective_n_threads(block.n_jobs),
        "chunk_intercept": True,
    }
    status, _, _, _, bad_value = _EPOCH[Wt.dtype](
        make_dataset(X, rows["w"]), Wt, intercept, G, tau_last, scalars, y_local, order,
        eopts, buf,
    )
    _FINALIZE[Wt.dtype](Wt, G, tau_last, scalars[0], eopts)
    new = ClassShard(Wt.T, intercept, block.lo, block.n_jobs,
                     (G, tau_last, scalars))
    return new, (buf[1], buf[2], int(status), float(bad_value), buf[[3, 6, 7]])


def rest_partition(partials, q):
    """What each row last saw of the class blocks other than ``q``: log
    sum of e^z, log sum of e^{2z} (both -inf with one block), and its
    label's score (``partials`` (2P + 1, n), see ``subepoch``)."""
    P = (partials.shape[0] - 1) // 2
    others = [r for r in range(P) if r != q]
    if not others:
        none = np.full(partials.shape[1], -np.inf)
        return none, none.copy(), partials[2 * P]
    return (
        np.logaddexp.reduce(partials[others], axis=0),
        np.logaddexp.reduce(partials[[P + r for r in others]], axis=0),
        partials[2 * P],
    )


def initial_partials_of(y, intercept, ranges):
    """The rows' view of every class block at W = 0: log sum_k e^{c_k},
    log sum_k e^{2 c_k} per block, and the label's score c_y."""
    c = np.asarray(intercept, np.float64)
    P = len(ranges)
    out = np.empty((2 * P + 1, y.shape[0]))
    for q, (a, b) in enumerate(ranges):
        out[q] = np.logaddexp.reduce(c[a:b])
        out[P + q] = np.logaddexp.reduce(2.0 * c[a:b])
    out[2 * P] = c[y]
    return out


def update_partials(partials, q, part):
    """``partials`` with block ``q``'s entries replaced by what a
    sub-epoch's rows saw after their steps (a new array: a future's value
    never changes); unchanged after an overflow, whose epoch is undone."""
    if part[2] != Status.STATUS_OK:
        return partials
    P = (partials.shape[0] - 1) // 2
    out = partials.copy()
    seen = part[4]
    out[q] = seen[0]
    out[P + q] = seen[1]
    out[2 * P] = seen[2]
    return out


def token(_):
    """A result of no size, that a task can wait for without moving data."""
    return None


def first(pair_):
    return pair_[0]


def second(pair_):
    return pair_[1]


def end_epoch(rows, *parts):
    """The rows' weighted sum of log-loss estimates of an epoch from its P
    sub-epochs' parts, their summed weight, the worst status and its
    value."""
    status = max(p[2] for p in parts)
    weight = float(np.sum(rows["w"]))
    if status != Status.STATUS_OK:
        bad = [p[3] for p in parts if p[2] == status][0]
        return np.nan, weight, status, bad
    lse = np.logaddexp.reduce(np.stack([p[0] for p in parts]), axis=0)
    s_y = np.sum([p[1] for p in parts], axis=0)
    return float(rows["w"] @ (lse - s_y)), weight, status, 0.0


def initial_partials(rows):
    return rows["partials"]


def n_rows_of(rows):
    return rows["X"].shape[0]


def take_rows(rows, partials, index):
    """A row block of ``rows``' rows ``index`` (the step pilot's sample)
    and their partial log-partitions: ((X, y, w), partials)."""
    index = np.asarray(index, dtype=np.intp)
    sub = {key: rows[key][index] for key in ("X", "y", "w")}
    return sub, partials[:, index]


# ---------------------------------------- data-parallel epochs (mixing)
def mix_setup(rows, n_classes, intercept, eta, alpha, fit_intercept, n_jobs):
    """A worker's copy of the exact solver (``_exact.ExactSolver``: the
    single-process estimator's default solver) for its rows, on ``n_jobs``
    threads of the worker."""
    from .._exact import ExactSolver
    from .._shared._openmp import effective_n_threads

    solver = ExactSolver(
        eta=eta, alpha=alpha, fit_intercept=fit_intercept,
        n_threads=effective_n_threads(n_jobs),
    )
    X = rows["X"]
    solver.setup(n_classes, X.shape[1], X.dtype, intercept)
    return solver


def mix_epoch(solver, rows, mixed, eta, seed, shuffle):
    """One threaded epoch of the exact solver over the worker's rows, from
    the mixed (averaged) W and b; returns (a new solver state, the rows'
    weighted progressive loss sum, their weight sum). The input state is copied,
    never modified; a divergence returns a NaN loss."""
    import copy

    from ..exceptions import DivergenceError

    # a new state: each array copied once (W and b from the mixed model)
    s = copy.copy(solver)
    source = {} if mixed is None else {"Wt": mixed[0], "b": mixed[1]}
    for name in solver._STATE:
        value = source.get(name, getattr(solver, name))
        if isinstance(value, np.ndarray):
            setattr(s, name, np.array(value, copy=True))
    s.eta = eta
    n = rows["X"].shape[0]
    order = (
        np.random.RandomState(seed).permutation(n) if shuffle else np.arange(n)
    )
    try:
        loss, weight = s.epoch(rows["X"], rows["y"], rows["w"], order)
    except DivergenceError:
        return s, float("nan"), float(np.sum(rows["w"]))
    s.finalize()
    return s, float(loss), float(weight)


def mix_weights(result):
    """(W, b) of a worker's epoch: all that travels to the mixing (its
    AdaGrad state stays on its worker)."""
    return result[0].Wt, result[0].b


def mix_average(*weights):
    """Iterative parameter mixing: the mean of the workers' (W, b), W
    summed in its own dtype (one W-sized array, no float64 copy; a single
    worker's W is passed on as it is: a task's result is never
    modified)."""
    if len(weights) == 1:
        return weights[0]
    Wt = np.array(weights[0][0], copy=True)
    for w in weights[1:]:
        Wt += w[0]
    Wt *= Wt.dtype.type(1.0 / len(weights))
    b = np.mean([w[1] for w in weights], axis=0, dtype=np.float64)
    return Wt, b.astype(Wt.dtype)


def mix_summary(result):
    return result[1], result[2]


def mixed_sq_norm(mixed):
    w = mixed[0].astype(np.float64, copy=False).ravel()
    return float(w @ w)


def mixed_shard(mixed, lo, hi, n_jobs):
    """Class shard lo:hi of the mixed model (columns of Wt)."""
    Wt = np.ascontiguousarray(mixed[0][:, lo:hi])
    return ClassShard(Wt.T, mixed[1][lo:hi].copy(), lo, n_jobs)
