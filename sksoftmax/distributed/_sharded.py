"""The sharded model of DistributedSoftmaxClassifier: exact evaluation
with W left on the workers.

Every shard scores a block of rows with the package's evaluation kernels
(``_shared/_evaluation``, mode 'stats') and sends per row its largest
score m_p, sum_k e^{s_k - m_p}, the true-class score and its argmax; the
rows' log-partition, log-loss and argmax over all classes follow exactly.
``predict_topk`` sends the shard's own top k instead; ``predict_proba``
sends, after the per-row log-partitions went back to the shards, the
(rows, K_p) probability blocks it has to return. ``to_local`` gathers the
shards into a ``SoftmaxClassifier``.
"""

from numbers import Integral

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils.validation import _check_sample_weight

from . import _worker as W


class ShardedSoftmaxModel:
    """Prediction of a softmax model whose class shards live on the workers
    (``coef_shards_``, ``class_ranges_``, ``shard_workers_``)."""

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

    @staticmethod
    def _merged_stats(client, blocks, ys, shards, workers):
        """Futures of each row block's (log-partition, true-class score,
        argmax) over all classes: every shard scores the block on its
        worker (``workers``, None: anywhere), one task merges. ``ys``: the
        blocks' encoded labels (arrays or futures), or None."""
        merged = []
        for i, xb in enumerate(blocks):
            yb = None if ys is None else ys[i]
            parts = [
                client.submit(
                    W.shard_stats, s, xb, yb, pure=False,
                    workers=None if w is None else [w],
                )
                for s, w in zip(shards, workers)
            ]
            merged.append(client.submit(W.merge_stats, *parts, pure=False))
        return merged

    def _stats(self, X, y=None):
        client, blocks, ys = self._evaluate_blocks(X, y)
        out = client.gather(self._merged_stats(
            client, blocks, ys, self._shards, self.shard_workers_
        ))
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
        validation = getattr(self, "validation_loss_", None)
        clf.validation_loss_ = None if validation is None else list(validation)
        clf.best_iter_ = getattr(self, "best_iter_", clf.n_iter_)
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


def _is_dask_array(X):
    try:
        import dask.array as da
    except ImportError:  # pragma: no cover - dask is a requirement here
        return False
    return isinstance(X, da.Array)
