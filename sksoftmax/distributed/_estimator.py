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
  row has met every class block. Row weights (``sample_weight`` times
  ``class_weight``) travel with their rows into the kernel's dataset;
  rows of weight 0 are left out of the row blocks.
- held-out rows (``early_stopping``): drawn on the client by
  ``SoftmaxClassifier``'s splitter (``_held_out.split_rows``), taken out
  of the row blocks and kept on the same workers; after each epoch the
  class blocks score them where the blocks are, as in evaluation, and one
  ``_stopping.Stopping`` judges the epoch (keeps the best model, undoes
  a worse one, halves the step, stops). Without held-out rows it judges
  the training objective estimated from the sub-epochs' own scores.

Class blocks move as futures pinned to workers, not as actors: a task's
result is immutable, so a block can be checkpointed, or kept as the best
epoch's while the next ones are computed, the scheduler moves a block
to the worker of its next task by itself (peer to peer, never through the
client), and the sub-epochs of a round run in parallel without any lock.
An actor would hold its block in place and serialise every call through
one worker's event loop.

Faults: after each kept epoch the class blocks and the rows' partial
log-partitions are checkpointed on the client
(``_checkpoint.Checkpoint``: its memory or a directory), beside the best
epoch's when held-out rows keep an earlier one. The client's
waits notice a worker that left the cluster (its pinned tasks would wait
forever) or results cancelled with it; the
fit then rebuilds the row blocks on the workers there, restores the
checkpoint and the loop's state (step, counters, random stream) and runs
on from the last completed epoch, with a RuntimeWarning.

Pickling gathers the shards (``__getstate__``); the unpickled model puts
them back on the current client's workers at its first use.
"""

import inspect
import math
import os
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils import check_array, check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import _check_sample_weight

from .._class_prior import prior_frequencies
from .._class_weight import weigh_fit_rows
from .._held_out import (
    MAX_VALIDATION_ROWS,
    NoHeldOutRows,
    check_n_held_out,
    fit_without_held_out,
    split_rows,
)
from .._parameters import keyword_init
from .._softmax import SoftmaxClassifier
from . import _worker as W
from ._checkpoint import Checkpoint
from ._dsmlr import DSMLRFit
from ._sharded import ShardedSoftmaxModel, _is_dask_array

# The front door's parameters this estimator takes too: their defaults and
# validation are SoftmaxClassifier's.
SHARED = (
    "eta0",
    "alpha",
    "max_iter",
    "tol",
    "early_stopping",
    "validation_fraction",
    "n_iter_no_change",
    "fit_intercept",
    "shuffle",
    "random_state",
    "n_jobs",
    "verbose",
    "class_weight",
)
_FRONT_DOOR = inspect.signature(SoftmaxClassifier).parameters


class DistributedSoftmaxClassifier(
    DSMLRFit, ShardedSoftmaxModel, ClassifierMixin, BaseEstimator
):
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
        (:ref:`distributed`). Halved after an epoch that is undone (worse
        than the best) and, with held-out rows, after an epoch that does
        not improve on the best.
    alpha : float, default=0.0
        L2 penalty: the objective is log-loss + alpha/2 ||W||^2.
    max_iter : int, default=100
        Epochs at most.
    tol : float or None, default=1e-3
        An epoch improves when the monitored loss (the held-out log-loss
        with ``early_stopping``, else the training objective) falls below
        the best by more than ``tol`` times the best (a relative
        tolerance). None: run ``max_iter`` epochs (a worse epoch is still
        undone).
    early_stopping : 'auto' or bool, default='auto'
        True: hold out ``validation_fraction`` of the rows (at most
        10,000), score their weighted log-loss after every epoch where the
        class blocks are, undo an epoch worse than the best beyond the
        noise of those rows, and return the best epoch's model (its
        blocks kept on the workers meanwhile: a second copy of W). 'auto':
        the same where the data has rows to spare; otherwise (too few
        rows, or one row per class) a warning and the stopping on the
        training objective, where True raises a ValueError. False: every
        row trains, the stopping is on the training objective.
    validation_fraction : float, default=0.1
        Share of the rows held out by ``early_stopping``: each class's
        share of its latest rows in the order given, as
        ``SoftmaxClassifier`` holds them out.
    n_iter_no_change : int, default=8
        Stop after this many epochs in a row without improvement.
    fit_intercept : bool, default=True
    shuffle : bool, default=True
        Visit the rows of each sub-epoch in a random order.
    random_state : int, RandomState instance or None, default=None
    n_jobs : int or None, default=None
        Threads of each shard's evaluation on its worker.
    checkpoint : bool or str, default=True
        Where ``fit`` keeps the class shards of the last completed epoch
        (and of the best one, with held-out rows), from which it resumes
        (with a warning) after a lost worker: True,
        the client's memory; a directory, files there (the client then
        holds one shard at a time); False, nowhere (a lost worker fails
        the fit). See :ref:`distributed_faults`.
    client : distributed.Client or None, default=None
        None: the current client (``distributed.get_client()``).
    verbose : int, default=0
        1: one line per epoch (its seconds, the objective, the held-out
        log-loss, the step).
    class_weight : dict, 'balanced' or None, default=None
        Weights of the classes, multiplying ``sample_weight`` (as in
        ``SoftmaxClassifier``): a dict ``{label: weight}`` (missing
        labels weigh 1); 'balanced': ``n / (n_classes * n_k)``, n_k a
        class's summed sample weight over the rows given to ``fit``.

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
        Each kept epoch's (weighted) training objective, estimated from
        the scores the sub-epochs computed (no extra pass).
    validation_loss_ : list of float or None
        With held-out rows, each kept epoch's weighted log-loss on them
        (aligned with ``loss_curve_``); the model returned has the lowest,
        unless no epoch beat the starting model's. None without.
    best_iter_ : int
        The epoch whose model is returned (counted as ``n_iter_``; 0: the
        starting model, W = 0 at the class prior).

    Notes
    -----
    With held-out rows the workers keep the best epoch's model beside the
    current one while a later epoch is current: DS-MLR its class blocks
    (up to a second copy of W over the cluster; ``checkpoint=True`` then
    keeps both epochs on the client), mixing its W and each worker's
    solver state (one more W per worker).

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
        **{name: SoftmaxClassifier._parameter_constraints[name] for name in SHARED},
        "checkpoint": ["boolean", str, os.PathLike],
        "client": "no_validation",
    }

    __init__ = keyword_init(
        {"n_shards": None, "strategy": "dsmlr", "checkpoint": True, "client": None},
        shared={name: _FRONT_DOOR[name].default for name in SHARED},
    )

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
    def fit(self, X, y, sample_weight=None):
        """Fit the model by DS-MLR (or parameter mixing) on the cluster.

        Parameters
        ----------
        X : dask array, {array-like, sparse matrix} of shape (n_samples, n_features)
            Dense or scipy.sparse blocks; float32 is kept.
        y : dask array or array-like of shape (n_samples,)
        sample_weight : dask array or array-like of shape (n_samples,), default=None
            Non-negative row weights (a weight of 2 counts a row twice),
            multiplied by the weights of ``class_weight``. Like ``y``, a
            dask array is brought to the client.

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
        _, sizes = self._split_labels(client, blocks, y)
        classes, y_enc = np.unique(y, return_inverse=True)
        if classes.shape[0] < 2:
            raise ValueError(
                "The training data must contain samples of at least 2 "
                f"classes; got {classes.shape[0]}."
            )
        if hasattr(sample_weight, "compute"):
            sample_weight = sample_weight.compute()
        sample_weight = _check_sample_weight(
            sample_weight, y, dtype=np.float64, ensure_non_negative=True
        )
        sample_weight = weigh_fit_rows(self, classes, y_enc, sample_weight)
        K = classes.shape[0]
        held_out = self._held_out_split(y_enc, sample_weight, K)
        train = np.ones(y.shape[0], dtype=bool)
        if held_out is not None:
            train[held_out] = False
        if not np.any(sample_weight[train] > 0):
            raise ValueError(
                "sample_weight gives every training row zero weight."
            )
        P = min(P, K, len(sizes) if len(sizes) >= 1 else 1, max(1, y.shape[0]))
        n_features = client.submit(W.n_columns, blocks[0], pure=False).result()
        self.classes_ = classes
        self.n_features_in_ = int(n_features)
        self._dtype = dtype
        cuts = np.linspace(0, K, P + 1).astype(int)
        self.class_ranges_ = [(int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:])]
        # the intercepts at the log class prior of the training rows
        # (SoftmaxClassifier's start)
        counts = np.bincount(
            y_enc[train], weights=sample_weight[train], minlength=K
        )
        if self.fit_intercept:
            intercept = np.log(prior_frequencies(counts, 1.0))
        else:
            intercept = np.zeros(K)
        intercept = intercept.astype(dtype)
        # the class blocks start at zero, made on their workers by tasks
        self.shard_workers_ = [
            workers[p % len(workers)] for p in range(len(self.class_ranges_))
        ]
        plan = self._row_plan(sizes, y_enc, sample_weight, held_out, P)
        rows, partials, held = self._place_rows(
            client, blocks, plan, dtype, intercept
        )
        # the rows hold their own copy: the input blocks are released
        del blocks
        # the starting model's loss (W = 0, intercepts c: a row's log-loss
        # is log sum_k e^{c_k} - c_y): on the held-out rows, or the
        # training objective; an epoch above it is undone like any worse
        c = intercept.astype(np.float64)
        start_rows = np.logaddexp.reduce(c) - c[y_enc]
        if held is None:
            start = (np.average(start_rows[train], weights=sample_weight[train]),)
        else:
            start = start_rows[plan["held_out"]]
            start = (float(start @ plan["p"]), start)
        # the held-out rows' indices (their order: the losses' gathered)
        self._held_out_rows = None if held is None else plan["held_out"]
        eta = self._eta(client, rows, partials, P, dtype, intercept)
        if self.strategy == "mixing":
            del partials
            shards = self._zero_shards(client, dtype, intercept)
            self._fit_mixing(client, rows, shards, intercept, K, P, eta, start,
                             held)
            self._client = client
            return self
        ckpt = None
        if self.checkpoint is not False:
            ckpt = Checkpoint(
                None if self.checkpoint is True else os.fspath(self.checkpoint)
            )
        # what a resumption after a lost worker needs to rebuild the rows
        source = (X, plan, dtype, intercept, n_blocks)
        # handed over in a list that _fit_epochs empties: this frame keeps
        # no future (which would keep its data on the workers)
        rows = [rows, partials]
        del partials
        try:
            self._fit_epochs(client, rows, eta, P, ckpt, source, held, start)
        finally:
            if ckpt is not None:
                ckpt.close()
        self._client = client
        return self

    def _held_out_split(self, y_enc, sample_weight, n_classes):
        """The held-out rows of ``early_stopping`` (sorted indices), drawn
        by ``SoftmaxClassifier``'s splitter (each class's share of its
        latest rows, every class keeping a training row); None without
        (``early_stopping=False``, or 'auto' on data with no rows to
        spare, with a warning)."""
        if not self.early_stopping:
            return None
        n = y_enc.shape[0]
        n_val = min(int(np.ceil(self.validation_fraction * n)),
                    MAX_VALIDATION_ROWS)
        try:
            check_n_held_out(n, n_val, self.validation_fraction)
            # no refit follows: the held-out rows are drawn as test rows are
            val, train = split_rows(
                y_enc, n_classes, n_val, check_random_state(self.random_state),
                keep_class_rows=False,
            )
            if sample_weight[train].sum() <= 0:
                check_n_held_out(n, n_val, self.validation_fraction,
                                 trainable=False)
        except NoHeldOutRows as exc:
            # SoftmaxClassifier's warning ('auto'), or its error (True, or
            # a validation_fraction of the user's)
            fit_without_held_out(self, exc)
            return None
        return val

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


__all__ = ["DistributedSoftmaxClassifier"]
