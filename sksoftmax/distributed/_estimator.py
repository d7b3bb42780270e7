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
- fit (DS-MLR, Raman et al. 2019): P row blocks, each with its rows'
  b_i = log a_i, stay on their workers; in inner round r worker p runs
  the sub-epoch of ``_dsmlr_fast`` on class block (p + r) mod P, which
  then moves on to worker p - 1 (a ring), as the future of the task that
  updated it. After P rounds every row has met every class block and its
  b_i is set in closed form from the blocks' partial log-partitions.

Class blocks move as futures pinned to workers, not as actors: a task's
result is immutable, so the blocks of an epoch's start are still there to
undo a worse epoch, the scheduler moves a block to the worker of its next
task by itself (peer to peer, never through the client), the sub-epochs
of a round run in parallel without any lock, and a lost worker's futures
are recomputed by the scheduler from their lineage. An actor would hold
its block in place and serialise every call through one worker's event
loop, and would be lost with its worker.
"""

import math
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

from .._shared._codes import Status
from . import _worker as W

# eta0='auto': the step is this over the rows' mean ||x||^2 (+ 1 with an
# intercept): a row's step then moves its scores by about this much
ETA_AUTO = 0.5
# AdaGrad's epsilon, the exact solver's
EPS = 1e-8


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
    learning_rate : {'adagrad', 'constant'}, default='adagrad'
        DS-MLR's steps: the exact solver's per-feature AdaGrad-norm steps
        eta0 / sqrt(eps + G_j) (state kept per class block), or one
        constant step eta0. 'mixing' always runs the exact solver.
    eta0 : 'auto' or float, default='auto'
        The step; 'auto': the exact solver's step without pilot (1.0),
        or 0.5 / mean(||x||^2 + 1) with learning_rate='constant'. Halved
        after an epoch that raised the objective (that epoch is undone).
    alpha : float, default=0.0
        L2 penalty: the objective is log-loss + alpha/2 ||W||^2.
    max_iter : int, default=100
        Epochs at most.
    tol : float or None, default=1e-4
        An epoch improves when the objective falls by more than ``tol``.
        None: run ``max_iter`` epochs (a worse epoch is still undone).
    n_iter_no_change : int, default=8
        Stop after this many epochs without improvement.
    fit_intercept : bool, default=True
    shuffle : bool, default=True
        Visit the rows of each sub-epoch in a random order.
    random_state : int, RandomState instance or None, default=None
    n_jobs : int or None, default=None
        Threads of each shard's evaluation on its worker.
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
        "learning_rate": [StrOptions({"adagrad", "constant"})],
        "eta0": [StrOptions({"auto"}), Interval(Real, 0, None, closed="neither")],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left"), None],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "fit_intercept": ["boolean"],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
        "client": "no_validation",
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        *,
        n_shards=None,
        strategy="dsmlr",
        learning_rate="adagrad",
        eta0="auto",
        alpha=0.0,
        max_iter=100,
        tol=1e-4,
        n_iter_no_change=8,
        fit_intercept=True,
        shuffle=True,
        random_state=None,
        n_jobs=None,
        client=None,
        verbose=0,
    ):
        self.n_shards = n_shards
        self.strategy = strategy
        self.learning_rate = learning_rate
        self.eta0 = eta0
        self.alpha = alpha
        self.max_iter = max_iter
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.fit_intercept = fit_intercept
        self.shuffle = shuffle
        self.random_state = random_state
        self.n_jobs = n_jobs
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
        workers = sorted(client.scheduler_info()["workers"])
        if not workers:
            raise ValueError("the dask cluster has no workers.")
        return workers

    def _check_fitted(self):
        if self.__dict__.get("_shards") is None:
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
        P = self.n_shards or len(workers)
        blocks, dtype = self._row_blocks(client, X, P)
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
        shards = [
            client.submit(
                W.zero_shard, b - a, n_features, dtype, intercept[a:b].copy(),
                a, self.n_jobs, self.learning_rate == "adagrad",
                workers=[w], pure=False,
            )
            for (a, b), w in zip(self.class_ranges_, self.shard_workers_)
        ]
        # row blocks: the input blocks assigned round robin to P workers,
        # concatenated there with their encoded labels
        bounds = np.concatenate([[0], np.cumsum(sizes)])
        rows, b_rows = [], []
        lse0 = float(np.logaddexp.reduce(intercept.astype(np.float64)))
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
                _row_block, lse0, dtype, *pairs, workers=[w], pure=False
            )
            rows.append(r)
            b_rows.append(client.submit(W.initial_b, r, workers=[w], pure=False))
        if self.strategy == "mixing":
            self._fit_mixing(client, rows, shards, intercept, y_enc, K, P)
            self._client = client
            return self
        eta = self._eta(client, rows)
        # the objective at the start (W = 0, intercepts c): the log-loss
        # sum_i (log sum_k e^{c_k} - c_{y_i}) / n; an epoch above it is
        # undone like any worse epoch
        start = float(np.mean(lse0 - intercept.astype(np.float64)[y_enc]))
        self._fit_epochs(client, rows, b_rows, shards, eta, P, start)
        self._client = client
        return self

    def _fit_mixing(self, client, rows, shards, intercept, y_enc, K, P):
        """Iterative parameter mixing: every worker runs one epoch of the
        exact solver on its rows from the mixed W, then W and b are
        averaged (one W per worker travels each way per epoch)."""
        from .._softmax import ETA_NO_PILOT

        workers = self.shard_workers_
        rng = check_random_state(self.random_state)
        eta = ETA_NO_PILOT if self.eta0 == "auto" else float(self.eta0)
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
            new_mixed = client.submit(W.mix_average, *results, pure=False)
            sums = client.gather(
                [client.submit(W.mix_summary, r, pure=False) for r in results]
            )
            loss = sum(s[0] for s in sums) / max(sum(s[1] for s in sums), 1e-300)
            sq = client.submit(W.mixed_sq_norm, new_mixed, pure=False).result()
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
        stalled = self.tol is not None and objective > best - self.tol
        return True, min(best, objective), eta, no_change + 1 if stalled else 0

    def _warn_max_iter(self):
        """The ConvergenceWarning of a fit that used up ``max_iter``."""
        if self.max_iter > 1 and self.tol is not None:
            warnings.warn(
                f"DistributedSoftmaxClassifier: max_iter={self.max_iter} "
                "reached before the objective stopped improving.",
                _convergence_warning(),
            )

    def _eta(self, client, rows):
        if self.eta0 != "auto":
            return float(self.eta0)
        if self.learning_rate == "adagrad":
            from .._softmax import ETA_NO_PILOT

            return ETA_NO_PILOT
        sums = client.gather([client.submit(_sq_norm_sum, r) for r in rows])
        n = sum(s[1] for s in sums)
        mean = sum(s[0] for s in sums) / max(n, 1) + float(self.fit_intercept)
        return ETA_AUTO / max(mean, 1e-12)

    def _fit_epochs(self, client, rows, b_rows, shards, eta, P, start):
        rng = check_random_state(self.random_state)
        workers = self.shard_workers_
        best = start
        no_change = 0
        self.loss_curve_ = []
        self.n_iter_ = 0
        self.eta_ = eta
        for epoch in range(self.max_iter):
            tic = time.perf_counter()
            seeds = rng.randint(0, 2**63 - 1, size=(P, P), dtype=np.int64)
            blocks = list(shards)
            parts = [[] for _ in range(P)]
            for r in range(P):
                new = [None] * P
                for p in range(P):
                    q = (p + r) % P
                    opts = {
                        "eta": eta,
                        "alpha": float(self.alpha),
                        "fit_intercept": bool(self.fit_intercept),
                        "shuffle": bool(self.shuffle),
                        "seed": int(seeds[p, r]),
                        "adagrad": self.learning_rate == "adagrad",
                        "eps": EPS,
                    }
                    res = client.submit(
                        W.subepoch, rows[p], blocks[q], b_rows[p], opts,
                        workers=[workers[p]], pure=False,
                    )
                    new[q] = client.submit(
                        W.first, res, workers=[workers[p]], pure=False
                    )
                    parts[p].append(
                        client.submit(W.second, res, workers=[workers[p]], pure=False)
                    )
                blocks = new
            ends = [
                client.submit(W.end_epoch, rows[p], *parts[p], workers=[workers[p]],
                              pure=False)
                for p in range(P)
            ]
            summaries = client.gather(
                [client.submit(W.end_summary, e, pure=False) for e in ends]
            )
            status = max(s[2] for s in summaries)
            if status != Status.STATUS_OK:
                objective = np.inf
            else:
                sq = sum(client.gather(
                    [client.submit(W.shard_sq_norm, b, pure=False) for b in blocks]
                ))
                loss = sum(s[0] for s in summaries) / sum(s[1] for s in summaries)
                objective = loss + 0.5 * self.alpha * sq
            self.n_iter_ = epoch + 1
            # a worse epoch (or an overflow) is undone: the blocks and b_i
            # of its start are still held
            accepted, best, eta, no_change = self._judge_epoch(
                epoch, tic, objective, best, eta, no_change
            )
            if accepted:
                shards = blocks
                b_rows = [
                    client.submit(W.row_b, e, workers=[workers[p]], pure=False)
                    for p, e in enumerate(ends)
                ]
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
        self._shards = shards

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

        self._check_fitted()
        arrays = self._client.gather(
            [self._client.submit(W.shard_arrays, s, pure=False) for s in self._shards]
        )
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


def _row_block(lse0, dtype, *pairs):
    """A worker's row block from its (X, y_enc) pieces: one X (CSR or
    dense, ``dtype``), the labels, and b_i = -log sum_k exp(c_k) (W = 0)."""
    X, y = W.concat_rows(*pairs)
    if sp.issparse(X):
        X = X.astype(dtype, copy=False).tocsr()
    else:
        X = np.ascontiguousarray(X, dtype=dtype)
    return {"X": X, "y": np.asarray(y, dtype=np.intp),
            "b": np.full(X.shape[0], -lse0)}


def _sq_norm_sum(rows):
    X = rows["X"]
    if sp.issparse(X):
        return float(X.multiply(X).sum()), X.shape[0]
    return float(np.einsum("ij,ij->", X, X, dtype=np.float64)), X.shape[0]


__all__ = ["DistributedSoftmaxClassifier"]
