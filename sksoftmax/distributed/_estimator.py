"""DistributedSoftmaxClassifier: a softmax model whose W is split by
classes over the workers of a dask.distributed cluster.

W (n_classes, n_features) and the intercepts are cut into P contiguous
class shards, each a future held by one worker and only ever read by
tasks restricted to that worker: W never travels to the client. Rows
travel to the shards instead (Megatron's vocabulary-parallel evaluation):

- evaluation (``predict``, ``log_loss``, ``score``): every shard scores a
  block of rows with the package's evaluation kernels
  (``_shared/_evaluation``, mode 'stats') and sends per row its largest
  score m_p, sum_k e^{s_k - m_p}, the true-class score and its argmax;
  the rows' log-partition, log-loss and argmax over all classes follow
  exactly. ``predict_topk`` sends the shard's own top k instead;
  ``predict_proba`` sends, after the per-row log-partitions went back to
  the shards, the (rows, K_p) probability blocks it has to return.
- fit (DS-MLR, Raman et al. 2019): P row blocks stay on their workers,
  each with its rows' log-partition over each class block as last seen
  (a (P, n) array: b_i = -log of their sum of exponentials); in inner
  round r worker p runs the sub-epoch (``_exact_fast``'s class-block
  mode) on class block (p + r) mod P, which then moves on to worker
  p - 1 (a ring), as the
  future of the task that updated it. Within the sub-epoch each row's
  b_i is re-minimised with the block's current scores and the others'
  as last seen, and the block's entry is refreshed; after P rounds every
  row has met every class block.

Class blocks move as futures pinned to workers, not as actors: a task's
result is immutable, so a block can be checkpointed or kept to undo a
worse epoch while the next ones are computed, the scheduler moves a block
to the worker of its next task by itself (peer to peer, never through the
client), and the sub-epochs of a round run in parallel without any lock.
An actor would hold its block in place and serialise every call through
one worker's event loop.

Faults: after each kept epoch the class blocks and the rows' partial
log-partitions are checkpointed on the client
(``_checkpoint.Checkpoint``: its memory or a directory). The client's
waits notice a worker that left the cluster (its pinned tasks would wait
forever) or results cancelled with it; the
fit then rebuilds the row blocks on the workers there, restores the
checkpoint and the loop's state (step, counters, random stream) and runs
on from the last completed epoch, with a RuntimeWarning.

Pickling gathers the shards (``__getstate__``); the unpickled model puts
them back on the current client's workers at its first use.
"""

import math
import os
import threading
import time
import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils import check_array, check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import _check_sample_weight

from .._epochs import improves
from .._shared._codes import Status
from . import _worker as W
from ._checkpoint import Checkpoint

# AdaGrad's epsilon, the exact solver's
EPS = 1e-8
# how often a fit waiting for its tasks checks that its workers are there
POLL_SECONDS = 0.5
# after a lost worker: how long to wait for the cluster to have as many
# workers as before (a nanny restarts a dead worker within seconds), and
# how many resumptions in a row (without a completed epoch) to try
RESUME_WAIT = 30.0
MAX_RESUMES = 3


class _WorkerLost(RuntimeError):
    """A worker of the fit left the cluster (or its results were lost)."""


def _is_dask_array(X):
    try:
        import dask.array as da
    except ImportError:  # pragma: no cover - dask is a requirement here
        return False
    return isinstance(X, da.Array)


class DistributedSoftmaxClassifier(ClassifierMixin, BaseEstimator):
    """Softmax classifier whose weights are split by classes over the
    workers of a dask.distributed cluster.

    ``fit`` runs DS-MLR (Raman et al., KDD 2019): rows and classes in P
    blocks, each (row block, class block) sub-epoch a Cython kernel, the
    class blocks moving between the workers in a ring. Prediction is exact
    and leaves W where it is: each worker scores its class shard and only
    per-row reductions (or each shard's top k) travel. See
    :ref:`distributed`.

    Parameters
    ----------
    n_shards : int or None, default=None
        Class blocks P (and row blocks of ``fit``); None: one per worker.
    strategy : {'dsmlr', 'mixing'}, default='dsmlr'
        'dsmlr': W split by classes while fitting (DS-MLR). 'mixing': W
        fits on every worker; each runs the exact solver's threaded epoch
        on its rows from the same W, and W is averaged after each epoch
        (iterative parameter mixing). Either way the fitted model is then
        split by classes for prediction.
    eta0 : 'auto' or float, default='auto'
        The scale of the exact solver's per-feature AdaGrad-norm steps
        eta0 / sqrt(eps + G_j) (DS-MLR: state kept per class block).
        'auto': ``SoftmaxClassifier``'s step pilot, run on the cluster
        (:ref:`distributed`). Halved after an epoch that raised the
        objective (that epoch is undone).
    alpha : float, default=0.0
        L2 penalty: the objective is log-loss + alpha/2 ||W||^2.
    max_iter : int, default=100
        Epochs at most.
    tol : float or None, default=1e-3
        An epoch improves when the objective falls below the best by
        more than ``tol`` times the best (a relative tolerance). None: run
        ``max_iter`` epochs (a worse epoch is still undone).
    n_iter_no_change : int, default=8
        Stop after this many epochs without improvement.
    fit_intercept : bool, default=True
    shuffle : bool, default=True
        Visit the rows of each sub-epoch in a random order.
    random_state : int, RandomState instance or None, default=None
    n_jobs : int or None, default=None
        Threads of each shard's evaluation on its worker.
    checkpoint : bool or str, default=True
        Where ``fit`` keeps the class shards of the last completed epoch,
        from which it resumes (with a warning) after a lost worker: True,
        the client's memory; a directory, files there (the client then
        holds one shard at a time); False, nowhere (a lost worker fails
        the fit). See :ref:`distributed_faults`.
    client : distributed.Client or None, default=None
        None: the current client (``distributed.get_client()``).
    verbose : int, default=0
        1: one line per epoch (its seconds, the objective, the step).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    class_ranges_ : list of (int, int)
        The classes ``classes_[lo:hi]`` of each shard.
    shard_workers_ : list of str
        The worker holding each shard.
    n_iter_ : int
        Epochs run (after ``fit``).
    loss_curve_ : list of float
        Each kept epoch's training objective, estimated from the scores
        the sub-epochs computed (no extra pass).

    Notes
    -----
    A fitted model pickles: its shards are gathered into the pickle (W
    must fit in the client's memory, as for ``to_local``) and the
    ``client`` parameter is left out; unpickled, it predicts on the
    current client, its shards placed there at the first use. Between
    fits the shards live on the workers only: a worker lost then takes
    its shards with it (pickle or ``to_local`` to keep the model).

    Examples
    --------
    >>> from distributed import Client, LocalCluster
    >>> from sksoftmax.datasets import make_softmax_classification
    >>> from sksoftmax.distributed import DistributedSoftmaxClassifier
    >>> X, y = make_softmax_classification(
    ...     n_samples=400, n_features=20, n_classes=8, random_state=0)
    >>> with LocalCluster(n_workers=2, threads_per_worker=1,
    ...                   processes=False) as cluster, Client(cluster):
    ...     clf = DistributedSoftmaxClassifier(max_iter=5, random_state=0)
    ...     clf = clf.fit(X, y)
    ...     local = clf.to_local()
    ...     bool((clf.predict(X) == local.predict(X)).all())
    True
    """

    _parameter_constraints = {
        "n_shards": [Interval(Integral, 1, None, closed="left"), None],
        "strategy": [StrOptions({"dsmlr", "mixing"})],
        "eta0": [StrOptions({"auto"}), Interval(Real, 0, None, closed="neither")],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left"), None],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "fit_intercept": ["boolean"],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
        "checkpoint": ["boolean", str, os.PathLike],
        "client": "no_validation",
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        *,
        n_shards=None,
        strategy="dsmlr",
        eta0="auto",
        alpha=0.0,
        max_iter=100,
        tol=1e-3,
        n_iter_no_change=8,
        fit_intercept=True,
        shuffle=True,
        random_state=None,
        n_jobs=None,
        checkpoint=True,
        client=None,
        verbose=0,
    ):
        self.n_shards = n_shards
        self.strategy = strategy
        self.eta0 = eta0
        self.alpha = alpha
        self.max_iter = max_iter
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.fit_intercept = fit_intercept
        self.shuffle = shuffle
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.checkpoint = checkpoint
        self.client = client
        self.verbose = verbose

    # ------------------------------------------------------------ cluster
    def _get_client(self):
        if self.client is not None:
            return self.client
        try:
            from distributed import get_client
        except ImportError as exc:  # pragma: no cover
            raise ImportError(
                "DistributedSoftmaxClassifier needs dask.distributed: "
                'pip install "sksoftmax[distributed]"'
            ) from exc
        try:
            return get_client()
        except ValueError as exc:
            raise ValueError(
                "DistributedSoftmaxClassifier needs a dask.distributed "
                "Client: create one (distributed.Client(...)) or pass "
                "client=."
            ) from exc

    @staticmethod
    def _workers(client):
        # asked of the scheduler directly: Client.scheduler_info() returns
        # the client's cached identity, which its periodic update (of the
        # totals only) may replace by one without workers in between
        info = client.sync(client.scheduler.identity, n_workers=-1)
        workers = sorted(info["workers"])
        if not workers:
            raise ValueError("the dask cluster has no workers.")
        return workers

    def _check_fitted(self):
        if self.__dict__.get("_shards") is None:
            if self.__dict__.get("_local_shards") is not None:
                # an unpickled model: its shards go to the current client's
                # workers at its first use
                self._place_local()
                return
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet. "
                "Call 'fit' (or build it with 'from_estimator') first."
            )

    # ------------------------------------------------------------- inputs
    def _row_blocks(self, client, X, n_blocks, n_features=None):
        """Futures of validated blocks of rows of X (dask array: its row
        chunks, column chunks merged; in memory: ``n_blocks`` slices
        scattered over the workers), and X's dtype."""
        if _is_dask_array(X):
            if X.ndim != 2:
                raise ValueError(
                    f"Expected a 2D dask array for X, got {X.ndim} dimensions."
                )
            if n_features is not None and X.shape[1] != n_features:
                raise ValueError(
                    f"X has {X.shape[1]} features, but "
                    f"{type(self).__name__} is expecting {n_features} "
                    "features as input."
                )
            if X.numblocks[1] != 1:
                X = X.rechunk({1: -1})
            if X.numblocks[0] < n_blocks and not math.isnan(X.shape[0]):
                X = X.rechunk({0: max(1, -(-X.shape[0] // n_blocks))})
            raw = client.compute(list(X.to_delayed()[:, 0]))
            dtype = np.float32 if X.dtype == np.float32 else np.float64
            nf = X.shape[1]
            blocks = [client.submit(W.check_block, f, nf, pure=False) for f in raw]
            return blocks, np.dtype(dtype)
        if hasattr(X, "__dask_graph__"):
            raise TypeError(
                "X must be a dask array, a NumPy array or a scipy.sparse "
                f"matrix; got {type(X).__name__}."
            )
        X = check_array(X, accept_sparse="csr", dtype=[np.float64, np.float32])
        if n_features is not None and X.shape[1] != n_features:
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} "
                f"is expecting {n_features} features as input."
            )
        bounds = np.linspace(0, X.shape[0], max(1, min(n_blocks, X.shape[0])) + 1)
        bounds = bounds.astype(int)
        parts = [X[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:])]
        workers = self._workers(client)
        futures = []
        for i, part in enumerate(parts):
            [f] = client.scatter(
                [part], workers=[workers[i % len(workers)]], hash=False
            )
            futures.append(
                client.submit(W.check_block, f, X.shape[1], pure=False)
            )
        return futures, X.dtype

    @staticmethod
    def _labels(y):
        """y as a 1D NumPy array (a dask array computed: labels travel)."""
        if hasattr(y, "compute"):
            y = y.compute()
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            y = y.ravel()
        if y.ndim != 1:
            raise ValueError(f"y must be 1D, got shape {y.shape}.")
        return y

    def _split_labels(self, client, blocks, y):
        """Futures of y's slices aligned with the row blocks."""
        sizes = client.gather([client.submit(W.n_rows, b) for b in blocks])
        if sum(sizes) != y.shape[0]:
            raise ValueError(
                f"X has {sum(sizes)} rows but y has {y.shape[0]} labels."
            )
        bounds = np.concatenate([[0], np.cumsum(sizes)])
        return [
            y[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:])
        ], sizes

    # ------------------------------------------------------- construction
    def _place_shards(self, client, coef_blocks, intercepts, workers):
        """Scatter class blocks, one per worker (round robin)."""
        shards = []
        for p, (lo, hi) in enumerate(self.class_ranges_):
            w = workers[p % len(workers)]
            [c, b] = client.scatter(
                [coef_blocks[p], intercepts[p]], workers=[w], hash=False
            )
            shards.append(
                client.submit(
                    W.make_shard, c, b, lo, self.n_jobs, workers=[w], pure=False
                )
            )
            self.shard_workers_.append(w)
        return shards

    @classmethod
    def from_estimator(cls, estimator, *, n_shards=None, client=None, n_jobs=None):
        """Shard a fitted single-process sksoftmax classifier.

        Parameters
        ----------
        estimator : fitted classifier with ``coef_``, ``intercept_``,
            ``classes_`` (any softmax estimator of the package).
        n_shards : int or None, default=None
            None: one shard per worker.
        client : distributed.Client or None, default=None
        n_jobs : int or None, default=None

        Returns
        -------
        DistributedSoftmaxClassifier
            Its predictions are the estimator's, to rounding.
        """
        self = cls(
            n_shards=n_shards,
            alpha=getattr(estimator, "alpha", 0.0),
            fit_intercept=getattr(estimator, "fit_intercept", True),
            client=client,
            n_jobs=n_jobs,
        )
        if not hasattr(estimator, "classes_"):
            raise NotFittedError("from_estimator needs a fitted estimator.")
        client = self._get_client()
        workers = self._workers(client)
        coef = np.asarray(estimator.coef_)
        intercept = np.asarray(estimator.intercept_, dtype=coef.dtype)
        K = coef.shape[0]
        P = min(n_shards or len(workers), K)
        cuts = np.linspace(0, K, P + 1).astype(int)
        self.classes_ = np.asarray(estimator.classes_)
        self.n_features_in_ = coef.shape[1]
        self.class_ranges_ = [(int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:])]
        self.shard_workers_ = []
        self._dtype = coef.dtype
        self._shards = self._place_shards(
            client,
            [np.ascontiguousarray(coef[a:b]) for a, b in self.class_ranges_],
            [intercept[a:b].copy() for a, b in self.class_ranges_],
            workers,
        )
        self._client = client
        return self

    # ------------------------------------------------------------ fit
    def fit(self, X, y):
        """Fit the model by DS-MLR on the cluster.

        Parameters
        ----------
        X : dask array, {array-like, sparse matrix} of shape (n_samples, n_features)
            Dense or scipy.sparse blocks; float32 is kept.
        y : dask array or array-like of shape (n_samples,)

        Returns
        -------
        self : object
        """
        self._validate_params()
        client = self._get_client()
        workers = self._workers(client)
        P = n_blocks = self.n_shards or len(workers)
        blocks, dtype = self._row_blocks(client, X, n_blocks)
        y = self._labels(y)
        y_parts, sizes = self._split_labels(client, blocks, y)
        classes, y_enc = np.unique(y, return_inverse=True)
        if classes.shape[0] < 2:
            raise ValueError(
                "The training data must contain samples of at least 2 "
                f"classes; got {classes.shape[0]}."
            )
        K = classes.shape[0]
        P = min(P, K, len(sizes) if len(sizes) >= 1 else 1, max(1, y.shape[0]))
        n_features = client.submit(W.n_columns, blocks[0], pure=False).result()
        self.classes_ = classes
        self.n_features_in_ = int(n_features)
        self._dtype = dtype
        cuts = np.linspace(0, K, P + 1).astype(int)
        self.class_ranges_ = [(int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:])]
        # the intercepts at the log class prior (SoftmaxClassifier's start)
        counts = np.bincount(y_enc, minlength=K).astype(np.float64)
        if self.fit_intercept:
            intercept = np.log((counts + 1.0 / K) / (counts.sum() + 1.0))
        else:
            intercept = np.zeros(K)
        intercept = intercept.astype(dtype)
        # the class blocks start at zero, made on their workers by tasks
        self.shard_workers_ = [
            workers[p % len(workers)] for p in range(len(self.class_ranges_))
        ]
        rows, partials = self._place_rows(
            client, blocks, sizes, y_enc, dtype, intercept, P
        )
        # the rows hold their own copy: the input blocks are released
        del blocks
        if self.strategy == "mixing":
            shards = self._zero_shards(client, dtype, intercept)
            eta = self._eta(client, rows, partials, P, dtype, intercept)
            del partials
            self._fit_mixing(client, rows, shards, intercept, y_enc, K, P, eta)
            self._client = client
            return self
        eta = self._eta(client, rows, partials, P, dtype, intercept)
        # the objective at the start (W = 0, intercepts c): the log-loss
        # sum_i (log sum_k e^{c_k} - c_{y_i}) / n; an epoch above it is
        # undone like any worse epoch
        lse0 = float(np.logaddexp.reduce(intercept.astype(np.float64)))
        start = float(np.mean(lse0 - intercept.astype(np.float64)[y_enc]))
        ckpt = None
        if self.checkpoint is not False:
            ckpt = Checkpoint(
                None if self.checkpoint is True else os.fspath(self.checkpoint)
            )
        # what a resumption after a lost worker needs to rebuild the rows
        source = (X, y_enc, dtype, intercept, n_blocks)
        # handed over in a list that _fit_epochs empties: this frame keeps
        # no future (which would keep its data on the workers)
        held = [rows, partials]
        del rows, partials
        try:
            self._fit_epochs(client, held, eta, P, start, ckpt, source)
        finally:
            if ckpt is not None:
                ckpt.close()
        self._client = client
        return self

    def _zero_shards(self, client, dtype, intercept):
        """The class blocks at W = 0, made on ``shard_workers_`` by tasks
        (recomputable from their lineage)."""
        return [
            client.submit(
                W.zero_shard, b - a, self.n_features_in_, dtype,
                intercept[a:b].copy(), a, self.n_jobs, workers=[w], pure=False,
            )
            for (a, b), w in zip(self.class_ranges_, self.shard_workers_)
        ]

    def _place_rows(self, client, blocks, sizes, y_enc, dtype, intercept, P):
        """The P row blocks (the input blocks assigned round robin to the
        workers, concatenated there with their encoded labels) and their
        rows' starting log-partitions per class block (W = 0: the block's
        log sum of exp(c_k)), as futures pinned to ``shard_workers_``'s
        worker p."""
        bounds = np.concatenate([[0], np.cumsum(sizes)])
        rows, partials = [], []
        start = {
            "intercept": np.asarray(intercept, np.float64),
            "ranges": np.asarray(self.class_ranges_, dtype=np.intp),
        }
        for p in range(P):
            w = self.shard_workers_[p]
            mine = list(range(p, len(blocks), P))
            pairs = [
                client.submit(
                    W.pair, blocks[i], y_enc[bounds[i] : bounds[i + 1]], pure=False
                )
                for i in mine
            ]
            r = client.submit(
                _row_block, start, dtype, *pairs, workers=[w], pure=False
            )
            rows.append(r)
            partials.append(
                client.submit(W.initial_partials, r, workers=[w], pure=False)
            )
        return rows, partials

    def _fit_mixing(self, client, rows, shards, intercept, y_enc, K, P, eta):
        """Iterative parameter mixing: every worker runs one epoch of the
        exact solver on its rows from the mixed W, then W and b are
        averaged (one W per worker travels each way per epoch)."""
        workers = self.shard_workers_
        rng = check_random_state(self.random_state)
        states = [
            client.submit(
                W.mix_setup, rows[p], K, intercept, eta, float(self.alpha),
                bool(self.fit_intercept), self.n_jobs, workers=[workers[p]],
                pure=False,
            )
            for p in range(P)
        ]
        lse0 = float(np.logaddexp.reduce(intercept.astype(np.float64)))
        best = float(np.mean(lse0 - intercept.astype(np.float64)[y_enc]))
        mixed = None
        no_change = 0
        self.loss_curve_ = []
        self.n_iter_ = 0
        for epoch in range(self.max_iter):
            tic = time.perf_counter()
            seeds = rng.randint(0, 2**31 - 1, size=P)
            results = [
                client.submit(
                    W.mix_epoch, states[p], rows[p], mixed, eta, int(seeds[p]),
                    bool(self.shuffle), workers=[workers[p]], pure=False,
                )
                for p in range(P)
            ]
            new_mixed = client.submit(
                W.mix_average,
                *[
                    client.submit(W.mix_weights, r, workers=[workers[p]],
                                  pure=False)
                    for p, r in enumerate(results)
                ],
                pure=False,
            )
            try:
                sums = self._collect(
                    client, workers,
                    [client.submit(W.mix_summary, r, pure=False) for r in results],
                )
                # ||W||^2 only where the penalty reads it (a pass over W)
                sq = 0.0
                if self.alpha > 0:
                    [sq] = self._collect(
                        client, workers,
                        [client.submit(W.mixed_sq_norm, new_mixed, pure=False)],
                    )
            except _WorkerLost as lost:
                raise RuntimeError(
                    f"{lost} strategy='mixing' does not resume after a lost "
                    "worker: refit (strategy='dsmlr' does, from its "
                    "checkpoints)."
                ) from lost
            loss = sum(s[0] for s in sums) / max(sum(s[1] for s in sums), 1e-300)
            objective = loss + 0.5 * self.alpha * sq
            self.n_iter_ = epoch + 1
            accepted, best, eta, no_change = self._judge_epoch(
                epoch, tic, objective, best, eta, no_change
            )
            if accepted:
                states = [
                    client.submit(W.first, r, workers=[workers[p]], pure=False)
                    for p, r in enumerate(results)
                ]
                mixed = new_mixed
            if self.tol is not None and no_change >= self.n_iter_no_change:
                break
        else:
            self._warn_max_iter()
        self.eta_ = eta
        if mixed is None:
            warnings.warn(
                "DistributedSoftmaxClassifier: every epoch diverged or raised "
                "the objective, the model is the starting one; pass a smaller "
                "eta0.",
                _convergence_warning(),
            )
            self._shards = shards
            return
        # the mixed model, split by classes for prediction
        self._shards = [
            client.submit(
                W.mixed_shard, mixed, lo, hi, self.n_jobs,
                workers=[workers[p % len(workers)]], pure=False,
            )
            for p, (lo, hi) in enumerate(self.class_ranges_)
        ]

    def _judge_epoch(self, epoch, tic, objective, best, eta, no_change):
        """Keep or undo an epoch: (accepted, best, eta, no_change). A worse
        (or non-finite) objective is undone by the caller and halves the
        step; a kept one is recorded in ``loss_curve_`` and, when it
        improves by less than ``tol``, counts towards
        ``n_iter_no_change``."""
        seconds = time.perf_counter() - tic
        if not np.isfinite(objective) or objective > best:
            eta *= 0.5
            if self.verbose:
                print(f"Epoch {epoch + 1}: {seconds:.3f} s, objective "
                      f"{objective:.6g} worse, undone; step -> {eta:.3g}")
            return False, best, eta, no_change + 1
        self.loss_curve_.append(float(objective))
        if self.verbose:
            print(f"Epoch {epoch + 1}: {seconds:.3f} s, objective "
                  f"{objective:.6g}, step {eta:.3g}")
        stalled = not improves(objective, best, self.tol)
        return True, min(best, objective), eta, no_change + 1 if stalled else 0

    def _warn_max_iter(self):
        """The ConvergenceWarning of a fit that used up ``max_iter``."""
        if self.max_iter > 1 and self.tol is not None:
            warnings.warn(
                f"DistributedSoftmaxClassifier: max_iter={self.max_iter} "
                "reached before the objective stopped improving.",
                _convergence_warning(),
            )

    def _eta(self, client, rows, partials, P, dtype, intercept):
        if self.eta0 != "auto":
            return float(self.eta0)
        return self._pilot(client, rows, partials, P, dtype, intercept)

    def _pilot(self, client, rows, partials, P, dtype, intercept):
        """The AdaGrad step scale by the single-process estimator's pilot
        rule (``SoftmaxClassifier._pilot``, its constants), each trial a
        DS-MLR pass over a sample of the rows from W = 0 on the cluster.

        Stage 1: every candidate of ``pilot_walk`` (PILOT_ETAS, walking on
        along the grid past an end while the winner is there) trains on
        the first m / 2 rows
        of a random order (each worker's share of them from its own row
        block) and is scored by the progressive log-loss of the next
        m / 2, m = min(PILOT_MAX_ROWS, n / 5); stage 2: the leader and
        its neighbours on the grid (the single-process rule: the two best)
        go on over the next PILOT_RACE_ROWS x m rows, the lower
        progressive log-loss there wins. The fit then starts from W = 0
        with the winner: the pilot costs about two epochs at n = 5 m, less
        beyond (at most 6 m + 15 m rows), and holds no W of its own
        besides the trial's blocks.
        """
        from .._softmax import (
            ETA_NO_PILOT,
            PILOT_MAX_ROWS,
            PILOT_MIN_ROWS,
            PILOT_RACE_ROWS,
            PILOT_ROW_DIVISOR,
            pilot_walk,
        )

        ring = list(self.shard_workers_)
        sizes = self._collect(
            client, ring, [client.submit(W.n_rows_of, r, pure=False) for r in rows]
        )
        n = int(sum(sizes))
        m = min(PILOT_MAX_ROWS, n // PILOT_ROW_DIVISOR)
        if m < PILOT_MIN_ROWS:
            if self.verbose:
                print(f"eta0='auto': {n} rows are too few for the pilot; "
                      f"using {ETA_NO_PILOT:g}")
            return ETA_NO_PILOT
        rng = check_random_state(self.random_state)
        # each worker's share of the parts (first, second, race), as row
        # blocks of its own rows in a random order
        cuts = np.array([0, m // 2, m, (1 + PILOT_RACE_ROWS) * m], dtype=float)
        parts = []
        for p in range(P):
            share = np.minimum(np.round(cuts * sizes[p] / n).astype(int), sizes[p])
            order = rng.permutation(sizes[p])
            parts.append([
                client.submit(
                    W.take_rows, rows[p], partials[p], order[a:b],
                    workers=[ring[p]], pure=False,
                )
                for a, b in zip(share[:-1], share[1:])
            ])
        seeds = rng.randint(0, 2**63 - 1, size=(P, P), dtype=np.int64)

        def run(eta, n_parts):
            """The progressive log-loss of the last of the first
            ``n_parts`` parts, each a DS-MLR pass from where the previous
            left the blocks, the first from W = 0."""
            shards = self._zero_shards(client, dtype, intercept)
            offset, ends = 0, None
            for k in range(n_parts):
                sub = [client.submit(W.first, part[k], pure=False,
                                     workers=[ring[p]])
                       for p, part in enumerate(parts)]
                subp = [client.submit(W.second, part[k], pure=False,
                                      workers=[ring[p]])
                        for p, part in enumerate(parts)]
                shards, ends, _ = self._submit_epoch(
                    client, ring, sub, subp, shards, seeds, eta, offset, P
                )
                offset = (offset - 1) % P
            summaries = self._collect(client, ring, list(ends))
            if max(s_[2] for s_ in summaries) != Status.STATUS_OK:
                return np.inf
            loss = sum(s_[0] for s_ in summaries) / max(
                sum(s_[1] for s_ in summaries), 1
            )
            return float(loss) if np.isfinite(loss) else np.inf

        results = pilot_walk(lambda eta: run(eta, 2))
        self.eta0_trials_ = np.array(sorted(results.items()))
        ranked = sorted((v, e) for e, v in results.items() if v < np.inf)
        if not ranked:
            return min(results)
        # stage 2 races the leader and its finite neighbours on the grid
        # (the single-process rule races the two best): stage 1's short
        # horizon can tie its neighbours, and which of them races then
        # decides the step (measured: 1 and 9 at 10.40 around 3 on
        # make_softmax_classification(n_classes=100000); 9 wins the race)
        etas = sorted(results)
        lead = etas.index(ranked[0][1])
        racers = [
            e for e in etas[max(lead - 1, 0) : lead + 2] if results[e] < np.inf
        ]
        finals = []
        if len(racers) > 1 and cuts[2] < n:
            finals = sorted((run(e, 3), e) for e in racers)
            eta = finals[0][1]
        else:
            eta = ranked[0][1]
        if self.verbose:
            tried = ", ".join(f"{e:.3g}: {v:.4g}" for e, v in sorted(results.items()))
            line = f"eta0='auto': pilot on {m} rows, progressive log-loss {{{tried}}}"
            if finals:
                line += f"; on the next {int(cuts[3] - cuts[2])} rows " + ", ".join(
                    f"{e:.3g}: {v:.4g}" for v, e in finals
                )
            print(line + f"; using {eta:.3g}")
        return float(eta)

    def _fit_epochs(self, client, held, eta, P, start, ckpt, source):
        """DS-MLR's epochs, each checkpointed (``ckpt``) once kept; a lost
        worker makes the loop resume from the last completed epoch.
        ``held``: [row blocks, their partial log-partitions], emptied
        here."""
        rows, partials = held
        held.clear()
        # the class blocks start at zero, made on their workers by tasks
        shards = self._zero_shards(client, source[2], source[3])
        rng = check_random_state(self.random_state)
        ring = list(self.shard_workers_)
        n_workers = len(set(ring))
        self.loss_curve_ = []
        self.n_iter_ = 0
        self.eta_ = eta
        best, no_change, offset, epoch = start, 0, 0, 0
        # the loop's state after the last completed epoch, the point a lost
        # worker resumes from ('saved': the checkpoint holds class blocks;
        # before the first kept epoch they are zeros, remade by tasks)
        done = self._loop_state(epoch, best, eta, no_change, offset, rng, False)
        failures = 0
        # a test hook (not a parameter): called as hook(self, epoch) after
        # each completed epoch
        hook = getattr(self, "_after_epoch", None)
        while epoch < self.max_iter:
            try:
                tic = time.perf_counter()
                seeds = rng.randint(0, 2**63 - 1, size=(P, P), dtype=np.int64)
                blocks, ends, new_partials = self._submit_epoch(
                    client, ring, rows, partials, shards, seeds, eta, offset, P
                )
                if ckpt is not None:
                    # the undo reads the checkpoint: the workers keep only
                    # the blocks in flight, not those of the epoch's start
                    shards = None
                # block q ends the epoch on the worker of round P - 1
                holders = [ring[(q - offset + 1) % P] for q in range(P)]
                objective = self._epoch_objective(
                    client, ring, blocks, ends, holders
                )
                self.n_iter_ = epoch + 1
                # a worse epoch (or an overflow) is undone: the partial
                # log-partitions of its start are still held, its blocks
                # are in the checkpoint (or still held without one)
                accepted, best, eta, no_change = self._judge_epoch(
                    epoch, tic, objective, best, eta, no_change
                )
                if accepted:
                    shards = blocks
                    partials = new_partials
                    offset = (offset - 1) % P
                    if ckpt is not None:
                        self._save_checkpoint(client, ring, ckpt, epoch + 1,
                                              shards, partials)
                elif ckpt is not None:
                    shards = self._restore_shards(
                        client, ckpt, done["saved"], ring, offset, source
                    )
                # an undone epoch's blocks leave the workers now, not when
                # the next epoch rebinds these names
                blocks = ends = new_partials = None
            except _WorkerLost as lost:
                failures += 1
                if ckpt is None:
                    raise RuntimeError(
                        f"{lost} The fit ran with checkpoint=False and cannot "
                        "resume: refit, or fit with checkpoint=True."
                    ) from lost
                if failures > MAX_RESUMES:
                    raise RuntimeError(
                        f"{lost} {MAX_RESUMES} resumptions in a row failed; "
                        "giving up."
                    ) from lost
                epoch, best, eta, no_change, offset = (
                    done["epoch"], done["best"], done["eta"],
                    done["no_change"], done["offset"],
                )
                warnings.warn(
                    f"DistributedSoftmaxClassifier: {lost} Resuming from the "
                    f"checkpoint of epoch {epoch} (the last completed).",
                    RuntimeWarning,
                )
                rng.set_state(done["rng"])
                self.loss_curve_ = list(done["curve"])
                self.n_iter_ = epoch
                client, ring, rows, partials, shards = self._resume(
                    client, ckpt, done, source, P, n_workers
                )
                continue
            failures = 0
            epoch += 1
            done = self._loop_state(
                epoch, best, eta, no_change, offset, rng,
                done["saved"] or (accepted and ckpt is not None),
            )
            # the worker holding each class block now
            self._ring_holders = [ring[(q - offset) % P] for q in range(P)]
            if hook is not None:
                hook(self, epoch)
            if self.tol is not None and no_change >= self.n_iter_no_change:
                break
        else:
            self._warn_max_iter()
        if not self.loss_curve_:
            warnings.warn(
                "DistributedSoftmaxClassifier: every epoch overflowed or "
                "raised the objective, the model is the starting one; pass "
                "a smaller eta0.",
                _convergence_warning(),
            )
        self.eta_ = eta
        # where each block is now: worker (q - offset) mod P of the ring
        self.shard_workers_ = [ring[(q - offset) % P] for q in range(P)]
        self._shards = shards

    def _loop_state(self, epoch, best, eta, no_change, offset, rng, saved):
        return {
            "epoch": epoch, "best": best, "eta": eta, "no_change": no_change,
            "offset": offset, "rng": rng.get_state(),
            "curve": list(self.loss_curve_), "saved": saved,
        }

    def _submit_epoch(self, client, ring, rows, partials, shards, seeds, eta,
                      offset, P):
        """Submit the P rounds of one epoch: in round r worker p trains
        block (p + offset + r) mod P, which then moves to worker p - 1;
        each sub-epoch refreshes its rows' partial log-partition of the
        block it trained. Returns the futures of the epoch's blocks, of its
        rows' summaries and of their partial log-partitions."""
        blocks = list(shards)
        partials = list(partials)
        parts = [[] for _ in range(P)]
        base = {
            "eta": eta,
            "alpha": float(self.alpha),
            "fit_intercept": bool(self.fit_intercept),
            "shuffle": bool(self.shuffle),
            "eps": EPS,
        }
        done = [None] * P
        for r in range(P):
            new = [None] * P
            for p in range(P):
                q = (p + offset + r) % P
                opts = dict(base, seed=int(seeds[p, r]))
                # worker p starts round r once worker p - 1 has finished
                # round r - 1, which read the block p made in round r - 2:
                # no worker runs ahead and piles up blocks made for a slow
                # neighbour (it holds the one it made, the one it trains)
                after = () if done[(p - 1) % P] is None else (done[(p - 1) % P],)
                res = client.submit(
                    W.subepoch, rows[p], blocks[q], partials[p], q, opts, *after,
                    workers=[ring[p]], pure=False,
                )
                new[q] = client.submit(W.first, res, workers=[ring[p]], pure=False)
                parts[p].append(
                    client.submit(W.second, res, workers=[ring[p]], pure=False)
                )
                partials[p] = client.submit(
                    W.update_partials, partials[p], q, parts[p][-1],
                    workers=[ring[p]], pure=False,
                )
            done = [
                client.submit(W.token, part[-1], workers=[ring[p]], pure=False)
                for p, part in enumerate(parts)
            ]
            blocks = new
        ends = [
            client.submit(W.end_epoch, rows[p], *parts[p], workers=[ring[p]],
                          pure=False)
            for p in range(P)
        ]
        return blocks, ends, partials

    def _epoch_objective(self, client, ring, blocks, ends, holders):
        """The epoch's training objective from its rows' sums (np.inf after
        an overflow); the squared norms computed where the blocks are."""
        summaries = self._collect(client, ring, list(ends))
        if max(s[2] for s in summaries) != Status.STATUS_OK:
            return np.inf
        sq = sum(self._collect(
            client, ring,
            [
                client.submit(W.shard_sq_norm, b, workers=[w], pure=False)
                for b, w in zip(blocks, holders)
            ],
        ))
        loss = sum(s[0] for s in summaries) / sum(s[1] for s in summaries)
        return loss + 0.5 * self.alpha * sq

    # ------------------------------------------------------ checkpoints
    @classmethod
    def _collect(cls, client, ring, futures):
        """``client.gather(futures)``, or _WorkerLost when a worker of the
        ring left the cluster meanwhile (its pinned tasks would wait for it
        forever) or the results were lost with it."""
        from distributed import CancelledError, KilledWorker

        try:
            # waited for by callbacks, not by distributed.wait's timeouts: a
            # TimeoutError's traceback would hold the callers' frames (and
            # the futures in them, whose blocks then stay on the workers)
            # in a reference cycle until the garbage collector runs
            pending = [f for f in futures if not f.done()]
            if pending:
                finished = threading.Event()
                left = [len(pending)]
                lock = threading.Lock()

                def one_done(_):
                    with lock:
                        left[0] -= 1
                        if left[0] == 0:
                            finished.set()

                for f in pending:
                    f.add_done_callback(one_done)
                del pending
                while not finished.wait(POLL_SECONDS):
                    cls._check_ring(client, ring)
            return client.gather(futures)
        except (CancelledError, KilledWorker) as exc:
            # results cancelled for 'lost dependencies', or a task whose
            # workers kept dying: name the worker when it has left
            cls._check_ring(client, ring, exc)
            raise _WorkerLost(f"A worker was lost ({type(exc).__name__}).") from exc
        except _WorkerLost:
            raise
        except Exception as exc:
            cls._check_ring(client, ring, exc)
            raise

    @classmethod
    def _check_ring(cls, client, ring, cause=None):
        lost = sorted(set(ring) - set(cls._workers(client)))
        if lost:
            raise _WorkerLost(
                f"Worker(s) {', '.join(lost)} left the cluster."
            ) from cause

    def _save_checkpoint(self, client, ring, ckpt, epoch, shards, partials):
        """The kept epoch's class blocks (one at a time) and the rows'
        partial log-partitions, written
        to a new slot that replaces the previous one once complete."""
        # in memory: all blocks in one gather; to files: one at a time
        step = P = len(shards)
        if ckpt.directory is not None:
            step = 1
        for lo in range(0, P, step):
            for q, shard in enumerate(
                self._collect(client, ring, list(shards[lo : lo + step])), lo
            ):
                arrays = [shard.coef_, shard.intercept_, *shard.adagrad]
                ckpt.save(epoch, f"shard{q}", arrays)
            del shard, arrays
        for p, part in enumerate(self._collect(client, ring, list(partials))):
            ckpt.save(epoch, f"partials{p}", [part])
        ckpt.commit(epoch)

    def _restore_shards(self, client, ckpt, saved, ring, offset, source):
        """The class blocks of the checkpoint (zeros before the first kept
        epoch), block q placed on worker (q - offset) mod P of the ring."""
        P = len(ring)
        where = [ring[(q - offset) % P] for q in range(P)]
        if not saved:
            self.shard_workers_ = where
            return self._zero_shards(client, source[2], source[3])
        shards = []
        for q, ((lo, _), w) in enumerate(zip(self.class_ranges_, where)):
            arrays = client.scatter(ckpt.load(f"shard{q}"), workers=[w], hash=False)
            shards.append(client.submit(
                W.shard_from_arrays, lo, self.n_jobs, *arrays,
                workers=[w], pure=False,
            ))
        return shards

    def _resume(self, client, ckpt, done, source, P, n_workers):
        """The fit's state on the workers rebuilt after a loss: wait (up to
        RESUME_WAIT seconds) for the cluster to have its workers back (a
        nanny restarts a dead worker), then place the row blocks anew on
        the workers there (from X: in-memory blocks were scattered and lost
        with their worker) and the checkpoint's blocks and partial
        log-partitions."""
        X, y_enc, dtype, intercept, n_blocks = source
        try:
            client.wait_for_workers(n_workers, timeout=RESUME_WAIT)
        except TimeoutError:
            pass
        workers = self._workers(client)
        ring = [workers[p % len(workers)] for p in range(P)]
        self.shard_workers_ = ring
        blocks, _ = self._row_blocks(client, X, n_blocks)
        sizes = self._collect(
            client, ring, [client.submit(W.n_rows, b, pure=False) for b in blocks]
        )
        rows, partials = self._place_rows(
            client, blocks, sizes, y_enc, dtype, intercept, P
        )
        if done["saved"]:
            partials = [
                client.scatter(
                    ckpt.load(f"partials{p}")[0], workers=[ring[p]], hash=False
                )
                for p in range(P)
            ]
        shards = self._restore_shards(
            client, ckpt, done["saved"], ring, done["offset"], source
        )
        return client, ring, rows, partials, shards

    # -------------------------------------------------------- evaluation
    def _evaluate_blocks(self, X, y=None):
        """(client, row-block futures, label-index futures or None)."""
        self._check_fitted()
        client = self._client
        blocks, _ = self._row_blocks(
            client, X, len(self._shards), n_features=self.n_features_in_
        )
        ys = None
        if y is not None:
            y = self._labels(y)
            parts, _ = self._split_labels(client, blocks, y)
            ys = [W.encode_labels(part, self.classes_) for part in parts]
        return client, blocks, ys

    def _stats(self, X, y=None):
        client, blocks, ys = self._evaluate_blocks(X, y)
        merged = []
        for i, xb in enumerate(blocks):
            yb = None if ys is None else ys[i]
            parts = [
                client.submit(W.shard_stats, s, xb, yb, workers=[w], pure=False)
                for s, w in zip(self._shards, self.shard_workers_)
            ]
            merged.append(client.submit(W.merge_stats, *parts, pure=False))
        out = client.gather(merged)
        if not out:
            return np.empty(0), np.empty(0), np.empty(0, dtype=np.intp)
        return tuple(np.concatenate(a) for a in zip(*out))

    def predict(self, X):
        """Most probable class of each row, computed shard by shard.

        Parameters
        ----------
        X : dask array, {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        _, _, arg = self._stats(X)
        return self.classes_[arg]

    def _nll(self, X, y):
        lse, s_y, _ = self._stats(X, y)
        return lse - s_y

    def log_loss(self, X, y, sample_weight=None):
        """Exact mean log-loss; per row only (max, sum of exp, true-class
        score) leave each shard.

        Parameters
        ----------
        X : dask array, {array-like, sparse matrix} of shape (n_samples, n_features)
        y : dask array or array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        loss : float
        """
        nll = self._nll(X, y)
        if sample_weight is None:
            return float(nll.mean())
        sw = _check_sample_weight(
            np.asarray(sample_weight), nll[:, None], dtype=np.float64,
            ensure_non_negative=True,
        )
        return float(nll @ sw / sw.sum())

    def objective(self, X, y, sample_weight=None):
        """log_loss + alpha/2 ||W||^2 (the squared norms summed shard by
        shard).

        Parameters
        ----------
        X : dask array, {array-like, sparse matrix} of shape (n_samples, n_features)
        y : dask array or array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        objective : float
        """
        loss = self.log_loss(X, y, sample_weight)
        sq = sum(self._client.gather(
            [self._client.submit(W.shard_sq_norm, s, workers=[w], pure=False)
             for s, w in zip(self._shards, self.shard_workers_)]
        ))
        return loss + 0.5 * self.alpha * sq

    def score(self, X, y, sample_weight=None):
        """Accuracy of ``predict`` (weighted).

        Parameters
        ----------
        X : dask array, {array-like, sparse matrix} of shape (n_samples, n_features)
        y : dask array or array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        score : float
        """
        y = self._labels(y)
        pred = self.predict(X)
        if pred.shape[0] != y.shape[0]:
            raise ValueError(
                f"X has {pred.shape[0]} rows but y has {y.shape[0]} labels."
            )
        sw = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
        return float(np.average(pred == y, weights=sw))

    def predict_topk(self, X, k=5):
        """The ``k`` most probable classes of each row with their exact
        probabilities; each shard sends its own top k per row.

        Parameters
        ----------
        X : dask array, {array-like, sparse matrix} of shape (n_samples, n_features)
        k : int, default=5

        Returns
        -------
        labels : ndarray of shape (n_samples, k)
        proba : ndarray of shape (n_samples, k)
        """
        self._check_fitted()
        K = self.classes_.shape[0]
        if isinstance(k, bool) or not isinstance(k, Integral):
            raise TypeError(f"k must be an int, got {k!r}.")
        if not 1 <= k <= K:
            raise ValueError(f"k must be in [1, {K}], got {k}.")
        client, blocks, _ = self._evaluate_blocks(X)
        merged = []
        for xb in blocks:
            parts = [
                client.submit(W.shard_topk, s, xb, int(k), workers=[w], pure=False)
                for s, w in zip(self._shards, self.shard_workers_)
            ]
            merged.append(client.submit(W.merge_topk, int(k), *parts, pure=False))
        out = client.gather(merged)
        index = np.concatenate([o[0] for o in out])
        proba = np.concatenate([o[1] for o in out])
        return self.classes_[index], proba

    def predict_proba(self, X):
        """Exact class probabilities, as row blocks x class shards.

        The rows' log-partitions are reduced first (per row a few
        numbers per shard); each shard then writes its columns.

        Parameters
        ----------
        X : dask array, {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray or dask array of shape (n_samples, n_classes)
            A dask array (chunks: the row blocks x the class shards, held
            by the shards' workers) when X is one, else a NumPy array.
        """
        lazy = _is_dask_array(X)
        client, blocks, _ = self._evaluate_blocks(X)
        rows = []
        for xb in blocks:
            parts = [
                client.submit(W.shard_stats, s, xb, None, workers=[w], pure=False)
                for s, w in zip(self._shards, self.shard_workers_)
            ]
            lse = client.submit(
                W.merged_lse, client.submit(W.merge_stats, *parts, pure=False),
                pure=False,
            )
            rows.append([
                client.submit(W.shard_proba, s, xb, lse, workers=[w], pure=False)
                for s, w in zip(self._shards, self.shard_workers_)
            ])
        if not lazy:
            out = [np.hstack(client.gather(r)) for r in rows]
            return np.vstack(out) if out else np.empty((0, self.classes_.shape[0]))
        import dask.array as da

        sizes = client.gather([client.submit(W.n_rows, b) for b in blocks])
        dtype = np.result_type(X.dtype, self._dtype)
        return da.block([
            [
                da.from_delayed(f, shape=(n, hi - lo), dtype=dtype)
                for f, (lo, hi) in zip(r, self.class_ranges_)
            ]
            for r, n in zip(rows, sizes)
        ])

    # --------------------------------------------------------- to_local
    def to_local(self):
        """The equivalent single-process :class:`sksoftmax.SoftmaxClassifier`
        (``solver='exact'``), its W gathered from the shards.

        Returns
        -------
        SoftmaxClassifier
            Fitted: ``coef_``, ``intercept_``, ``classes_``,
            ``n_features_in_``; its predictions equal this model's to
            rounding.
        """
        from .._exact import ExactSolver
        from .._softmax import SoftmaxClassifier

        arrays = self._gathered()
        coef = np.concatenate([a[0] for a in arrays])
        intercept = np.concatenate([a[1] for a in arrays])
        clf = SoftmaxClassifier(
            solver="exact",
            alpha=self.alpha,
            max_iter=self.max_iter,
            tol=self.tol,
            n_iter_no_change=self.n_iter_no_change,
            fit_intercept=self.fit_intercept,
            shuffle=self.shuffle,
            random_state=self.random_state,
            n_jobs=self.n_jobs,
        )
        K, D = coef.shape
        clf.classes_ = self.classes_.copy()
        clf.n_features_in_ = D
        clf.solver_ = "exact"
        clf._rng = check_random_state(self.random_state)
        solver = ExactSolver(
            eta=1.0,
            alpha=float(self.alpha),
            fit_intercept=self.fit_intercept,
            n_threads=clf._n_threads(),
        )
        solver.setup(K, D, coef.dtype, intercept)
        solver.Wt[...] = coef.T
        clf._solver = solver
        clf.n_iter_ = getattr(self, "n_iter_", 0)
        clf.loss_curve_ = list(getattr(self, "loss_curve_", []))
        clf.validation_loss_ = None
        clf.best_iter_ = clf.n_iter_
        return clf

    def _gathered(self):
        """Each shard's (coef, intercept), in class order, on the client."""
        if self.__dict__.get("_shards") is None:
            local = self.__dict__.get("_local_shards")
            if local is not None:
                return local
            self._check_fitted()
        return [
            tuple(a) for a in self._client.gather(
                [self._client.submit(W.shard_arrays, s, pure=False)
                 for s in self._shards]
            )
        ]

    def _place_local(self):
        """Scatter an unpickled model's shards over the current client's
        workers (round robin)."""
        local = self.__dict__["_local_shards"]
        client = self._get_client()
        self.shard_workers_ = []
        self._shards = self._place_shards(
            client, [a[0] for a in local], [a[1] for a in local],
            self._workers(client),
        )
        self._client = client
        del self._local_shards

    def __getstate__(self):
        """Pickling gathers the shards to the client (the pickle holds W,
        as any pickled estimator holds its weights); the futures, the
        client and the ``client`` parameter (a connection) are left out.
        The unpickled model predicts on the client current at its first
        use, or gives its W by ``to_local()`` without any client."""
        state = dict(super().__getstate__())
        if state.get("_shards") is not None:
            state["_local_shards"] = self._gathered()
        for key in ("_shards", "_client", "shard_workers_"):
            state.pop(key, None)
        state["client"] = None
        return state

    def __sklearn_clone__(self):
        """An unfitted copy with the same parameters; the ``client`` is
        shared, not copied (a Client cannot be deep-copied)."""
        from sklearn.base import clone

        params = self.get_params(deep=False)
        client = params.pop("client")
        params = {k: clone(v, safe=False) for k, v in params.items()}
        return type(self)(client=client, **params)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.non_deterministic = False
        return tags


def _convergence_warning():
    from sklearn.exceptions import ConvergenceWarning

    return ConvergenceWarning


def _row_block(start, dtype, *pairs):
    """A worker's row block from its (X, y_enc) pieces: one X (CSR or
    dense, ``dtype``), the labels, and each row's view of every class
    block at W = 0 (``start``: the intercepts and the blocks' ranges;
    ``W.initial_partials_of``)."""
    X, y = W.concat_rows(*pairs)
    if sp.issparse(X):
        X = X.astype(dtype, copy=False).tocsr()
    else:
        X = np.ascontiguousarray(X, dtype=dtype)
    y = np.asarray(y, dtype=np.intp)
    return {"X": X, "y": y, "partials": W.initial_partials_of(y, **start)}


__all__ = ["DistributedSoftmaxClassifier"]
