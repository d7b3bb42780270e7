"""Exact, memory-bounded prediction shared by every sksoftmax classifier.

:class:`SoftmaxPredictionMixin` turns a fitted linear model (``coef_`` of
shape (n_classes, n_features), ``intercept_``, ``classes_``) into
scikit-learn's prediction methods plus ``predict_topk``, ``score_topk`` and
``log_loss``, all computed by the kernels of ``_shared/_evaluation`` on
``n_jobs`` threads, blockwise within ``working_memory``, never forming more
than the (n_samples, n_classes) output that a method returns.

``coef_`` may be stored either way round: C-contiguous (n_classes,
n_features), or as the transpose of a C-contiguous (n_features, n_classes)
array (the layout of the exact-gradient solver, where one feature's
weights for all classes are contiguous); the evaluation gathers the
columns a block of rows uses from either.

A model with another link than the softmax (A&R probit and logistic,
eq. 5) overrides ``_log_proba_block``; its probabilities then come from
blocks of scores through that hook.
"""

import warnings
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp
from sklearn import get_config
from sklearn.utils import gen_batches
from sklearn.utils._chunking import get_chunk_n_rows
from sklearn.utils.validation import (
    _check_sample_weight,
    check_is_fitted,
    validate_data,
)

from ._shard_merge import merge_stats, merge_topk
from ._shared._evaluation import (
    FULL_MODES,
    dense_rows_32,
    dense_rows_64,
    gather_columns_32_32,
    gather_columns_32_64,
    gather_columns_64_32,
    gather_columns_64_64,
    plan_block,
    sparse_rows_32,
    sparse_rows_64,
)
from ._shared._openmp import effective_n_threads, openmp_enabled

# the evaluation kernels by (coef_ is float64, result is float64) / dtype
_GATHER = {
    (True, True): gather_columns_64_64,
    (True, False): gather_columns_64_32,
    (False, True): gather_columns_32_64,
    (False, False): gather_columns_32_32,
}
_SPARSE_ROWS = {"64": sparse_rows_64, "32": sparse_rows_32}
_DENSE_ROWS = {"64": dense_rows_64, "32": dense_rows_32}


class SoftmaxPredictionMixin:
    """Exact prediction from ``coef_``, ``intercept_`` and ``classes_``
    (not for direct use; mixed into every classifier of the package)."""

    # ----------------------------------------------------------- threads
    def _n_threads(self):
        """Threads for ``n_jobs`` (None: 1, -1: every core; ``_openmp``).

        A build without OpenMP runs on one thread; asking for more then
        warns rather than running slower than asked without a word.
        """
        n_jobs = self.n_jobs
        if n_jobs is not None and n_jobs == 0:
            raise ValueError(
                "n_jobs=0 has no meaning; use None (1 thread), -1 (every "
                "core) or a positive number of threads."
            )
        if n_jobs not in (None, 1) and not openmp_enabled():
            warnings.warn(
                "sksoftmax was built without OpenMP: n_jobs is ignored and "
                "everything runs on one thread.",
                UserWarning,
            )
        return effective_n_threads(n_jobs)

    # ----------------------------------------------------------- predict
    # Exact evaluation: the kernels of _evaluation.pyx.tp, row by row on
    # n_jobs threads, temporaries within working_memory. A model with
    # another link than the softmax (A&R probit and logistic, eq. 5)
    # overrides _log_proba_block; its probabilities then come from blocks
    # of scores through that hook.
    def _softmax_link(self):
        return (
            type(self)._log_proba_block
            is SoftmaxPredictionMixin._log_proba_block
        )

    def _blocks(self, n_samples):
        """Row blocks whose temporaries fit in working_memory (the
        per-block hook of a non-softmax link)."""
        chunk = get_chunk_n_rows(
            row_bytes=self._block_row_bytes(), max_n_rows=n_samples
        )
        return gen_batches(n_samples, max(chunk, 1))

    def _block_row_bytes(self):
        """Bytes of the hook's temporaries per row: a few (rows, K)."""
        return 3 * self.classes_.shape[0] * self.coef_.dtype.itemsize

    def _validate_X_predict(self, X):
        check_is_fitted(self, "coef_")
        return validate_data(
            self,
            X,
            accept_sparse="csr",
            dtype=[np.float64, np.float32],
            reset=False,
        )

    def _evaluate(self, X, mode, y_enc=None, k=1):
        """Run the evaluation kernel over validated rows X.

        ``mode`` is one of _evaluation.MODES. Returns the (n, K) array of
        the full modes ('scores', 'log_proba', 'proba') in
        result_type(X, coef_); the row indices of 'argmax'; the float64
        per-row log-losses of 'nll' (labels ``y_enc``); (indices,
        probabilities) of shape (n, k) for 'topk'; for 'stats' the float64
        (n, 3) array of each row's (max score m, sum_k e^{s_k - m}, score
        of ``y_enc``, -inf where it is -1) and the (n,) argmax.
        """
        n_threads = self._n_threads()
        if sp.issparse(X) and mode in _SHARDED_MODES:
            n_shards = self._class_shards(X)
            if n_shards > 1:
                return self._evaluate_by_classes(
                    X, mode, y_enc, k, n_shards, n_threads
                )
        coef = self.coef_
        # stored as W^T (D, K) or as its first K columns (a grown model)
        transposed = not coef.flags.c_contiguous and (
            coef.T.flags.c_contiguous or coef.strides[0] == coef.itemsize
        )
        n, n_classes = X.shape[0], coef.shape[0]
        dtype = np.result_type(X.dtype, coef.dtype)
        name = "64" if dtype == np.float64 else "32"
        itemsize = dtype.itemsize
        b = np.ascontiguousarray(self.intercept_, dtype=dtype)
        y = (
            np.zeros(n, dtype=np.intp)
            if y_enc is None
            else np.ascontiguousarray(y_enc, dtype=np.intp)
        )
        empty = np.empty((0, 0), dtype=dtype)
        out, value = empty, np.empty(0)
        index = np.empty((0, 0), dtype=np.intp)
        if mode in FULL_MODES:
            out = np.empty((n, n_classes), dtype=dtype)
        elif mode == "topk":
            out = np.empty((n, k), dtype=dtype)
            index = np.empty((n, k), dtype=np.intp)
        elif mode == "argmax":
            index = np.empty((n, 1), dtype=np.intp)
        elif mode == "stats":
            # per row (max, sum of exp, score of y) and the argmax
            value = np.empty(3 * n)
            index = np.empty((n, 1), dtype=np.intp)
        else:
            value = np.empty(n)
        width = 3 if mode == "stats" else 1
        budget = max(1, int(get_config()["working_memory"] * 2**20))

        def part(lo, hi):
            return (
                out[lo:hi] if out.shape[0] else out,
                value[width * lo : width * hi] if value.shape[0] else value,
                index[lo:hi] if index.shape[0] else index,
            )

        if sp.issparse(X):
            # blocks of rows whose used columns of W fit in the budget
            data = np.asarray(X.data, dtype=dtype)
            indices = X.indices.astype(np.int32, copy=False)
            indptr = X.indptr.astype(np.intp, copy=False)
            gather = _GATHER[coef.dtype == np.float64, dtype == np.float64]
            kernel = _SPARSE_ROWS[name]
            max_cols = max(1, budget // (n_classes * itemsize))
            seen = np.zeros(X.shape[1], dtype=np.uint8)
            start = 0
            while start < n:
                end = plan_block(indptr, indices, start, max_cols, seen)
                lo, hi = indptr[start], indptr[end]
                cols, local = np.unique(indices[lo:hi], return_inverse=True)
                if transposed:
                    # one contiguous row of coef_.T per used feature
                    WU = np.asarray(
                        coef.T.take(cols, axis=0), dtype=dtype, order="C"
                    )
                else:
                    WU = np.empty((cols.shape[0], n_classes), dtype=dtype)
                    gather(coef, cols.astype(np.intp), WU, n_threads)
                kernel(
                    data[lo:hi],
                    local.astype(np.int32).ravel(),
                    indptr[start : end + 1] - lo,
                    WU,
                    b,
                    mode,
                    y[start:end],
                    *part(start, end),
                    n_threads,
                )
                # freed before the next block's gather: one at a time
                del WU, cols, local
                start = end
        else:
            # BLAS gives a block's scores; the kernel finishes its rows
            X = np.ascontiguousarray(X, dtype=dtype)
            W = coef.astype(dtype, copy=False)
            kernel = _DENSE_ROWS[name]
            rows = max(1, budget // (n_classes * itemsize))
            buf = None
            for block in gen_batches(n, rows):
                o, v, i = part(block.start, block.stop)
                if mode in FULL_MODES:
                    scores = np.dot(X[block], W.T, out=o)
                else:
                    if buf is None:
                        buf = np.empty((min(rows, n), n_classes), dtype)
                    scores = np.dot(
                        X[block], W.T, out=buf[: block.stop - block.start]
                    )
                kernel(scores, b, mode, y[block], o, v, i, n_threads)
        if mode == "argmax":
            return index[:, 0]
        if mode == "nll":
            return value
        if mode == "stats":
            return value.reshape(n, 3), index[:, 0]
        if mode == "topk":
            return index, out
        return out

    def _class_shards(self, X):
        """Class shards for sparse rows X: 1, or as many as make the
        columns X uses of a shard's W fit in ``working_memory``.

        The row-block path gathers the columns a block of rows uses for
        every class, within the budget: at a million classes that is some
        256 columns, a dozen rows of 20 nonzeros, and each block reads
        nearly all of W. By class shards each shard's used columns are
        gathered once for every row: one pass over W in all.
        """
        if getattr(self, "_one_shard", False) or X.shape[0] == 0:
            return 1
        coef = self.coef_
        n_classes = coef.shape[0]
        itemsize = np.result_type(X.dtype, coef.dtype).itemsize
        used = np.count_nonzero(np.bincount(X.indices, minlength=X.shape[1]))
        budget = max(1, int(get_config()["working_memory"] * 2**20))
        need = float(used) * n_classes * itemsize
        if need <= budget:
            return 1
        # shards of at least MIN_SHARD_CLASSES classes (below, a block's
        # gather is cheap and the shards' merge would only round
        # differently from predict_proba's one pass)
        return int(min(np.ceil(need / budget), n_classes // MIN_SHARD_CLASSES))

    def _evaluate_by_classes(self, X, mode, y_enc, k, n_shards, n_threads):
        """``_evaluate`` of a non-full ``mode`` by class shards (views of
        coef_, no copy), each scored once for every row, merged as the
        distributed model merges its workers' shards (``_shard_merge``):
        the log-partition from each shard's (max, sum of exp), the
        true-class score and the argmax (first shard on ties), the top k
        by probability (ties to the lower class)."""
        coef, b = self.coef_, self.intercept_
        n, n_classes = X.shape[0], coef.shape[0]
        size = -(-n_classes // n_shards)
        y = None if y_enc is None else np.asarray(y_enc, dtype=np.intp)
        if mode == "topk":
            rows = np.repeat(np.arange(n), np.diff(X.indptr))
            data = np.asarray(X.data, dtype=np.float64)
        parts = []
        for lo in range(0, n_classes, size):
            hi = min(lo + size, n_classes)
            shard = _ClassShard(coef[lo:hi], b[lo:hi], n_threads)
            if mode == "topk":
                index, proba = shard._evaluate(X, "topk", k=min(k, hi - lo))
                index = index + lo
                # the shard's log-partition: its first class's score minus
                # the log of that class's probability within the shard
                # (as stats (lse, 1, .): one pass over the shard)
                s1 = np.bincount(
                    rows, data * coef[index[rows, 0], X.indices], minlength=n
                ) + b[index[:, 0]]
                with np.errstate(divide="ignore"):
                    lse = s1 - np.log(proba[:, 0].astype(np.float64))
                stats = np.stack([lse, np.ones(n), np.full(n, -np.inf)], 1)
                parts.append((stats, index, proba))
                continue
            local = None
            if y is not None:
                local = np.where((y >= lo) & (y < hi), y - lo, -1)
            stats, arg = shard._evaluate(X, "stats", y_enc=local)
            parts.append((stats, arg + lo))
        if mode == "topk":
            return merge_topk(k, *parts)
        lse, s_y, arg = merge_stats(*parts)
        if mode == "argmax":
            return arg
        if mode == "stats":
            # (m, S, s_y) with m the log-partition and S = 1
            return np.stack([lse, np.ones(n), s_y], axis=1), arg
        return lse - s_y

    def decision_function(self, X):
        """Class scores ``X @ coef_.T + intercept_``.

        For two classes, the log-odds of ``classes_[1]`` (shape
        (n_samples,)), as in scikit-learn's LogisticRegression.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes) or (n_samples,)
        """
        X = self._validate_X_predict(X)
        scores = self._evaluate(X, "scores")
        if scores.shape[1] == 2:
            return scores[:, 1] - scores[:, 0]
        return scores

    def predict_log_proba(self, X):
        """Exact log-probabilities (full softmax over all classes).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``.
        """
        X = self._validate_X_predict(X)
        if self._softmax_link():
            return self._evaluate(X, "log_proba")
        out = np.empty(
            (X.shape[0], self.classes_.shape[0]),
            dtype=np.result_type(X.dtype, self.coef_.dtype),
        )
        for rows in self._blocks(X.shape[0]):
            out[rows] = self._log_proba_block(
                self._evaluate(X[rows], "scores")
            )
        return out

    def _log_proba_block(self, scores):
        """Log-probabilities of every class from a block of scores.

        The softmax here (``scores`` is overwritten; used by the runaway
        check only: evaluation runs the kernels); models with another
        link (A&R probit and logistic, eq. 5) override this one method and
        ``predict_log_proba``, ``predict_proba``, ``predict_topk`` and
        ``log_loss`` follow.
        """
        scores -= logsumexp(scores, axis=1, keepdims=True)
        return scores

    def predict_proba(self, X):
        """Exact class probabilities (full softmax over all classes).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Rows sum to one; columns follow ``classes_``.
        """
        if self._softmax_link():
            return self._evaluate(self._validate_X_predict(X), "proba")
        out = self.predict_log_proba(X)
        np.exp(out, out=out)
        return out

    def predict_topk(self, X, k=5):
        """The ``k`` most probable classes of each row, with their exact
        probabilities, without forming the (n_samples, n_classes) matrix.

        The probabilities are exactly those of ``predict_proba`` (to
        rounding when W's columns that the rows use exceed
        ``working_memory`` at 8,192 classes or more: then scored by class
        shards, each read once); ties go
        to the class that comes first in ``classes_`` (as a stable argsort
        of ``-predict_proba(X)``). Memory: the (n_samples, k) outputs, one
        score vector of n_classes per thread, and W's columns that a block
        of rows uses (within ``working_memory``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        k : int, default=5
            Number of classes per row, 1 <= k <= n_classes.

        Returns
        -------
        labels : ndarray of shape (n_samples, k)
            The classes, most probable first.
        proba : ndarray of shape (n_samples, k)
            Their probabilities.

        Examples
        --------
        >>> from sksoftmax import UMaxSoftmaxClassifier
        >>> from sksoftmax.datasets import make_softmax_classification
        >>> X, y = make_softmax_classification(
        ...     n_samples=500, n_features=50, n_classes=20, random_state=0)
        >>> clf = UMaxSoftmaxClassifier(max_iter=5, random_state=0).fit(X, y)
        >>> labels, proba = clf.predict_topk(X[:3], k=2)
        >>> labels.shape, proba.shape
        ((3, 2), (3, 2))
        >>> bool((proba[:, 0] >= proba[:, 1]).all())
        True
        """
        X = self._validate_X_predict(X)
        k = self._check_k(k, strict=True)
        if self._softmax_link():
            index, proba = self._evaluate(X, "topk", k=k)
            return self.classes_[index], proba
        index = np.empty((X.shape[0], k), dtype=np.intp)
        proba = np.empty(
            (X.shape[0], k), dtype=np.result_type(X.dtype, self.coef_.dtype)
        )
        for rows in self._blocks(X.shape[0]):
            p = self._log_proba_block(self._evaluate(X[rows], "scores"))
            np.exp(p, out=p)
            top = np.argsort(-p, axis=1, kind="stable")[:, :k]
            index[rows] = top
            proba[rows] = np.take_along_axis(p, top, axis=1)
        return self.classes_[index], proba

    def _check_k(self, k, strict):
        n_classes = self.classes_.shape[0]
        if isinstance(k, bool) or not isinstance(k, Integral):
            raise TypeError(f"k must be an int, got {k!r}.")
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}.")
        if k > n_classes:
            if strict:
                raise ValueError(
                    f"k={k} is more than the {n_classes} classes of the "
                    "model."
                )
            warnings.warn(
                f"k={k} is at least the {n_classes} classes of the model: "
                "every label is in the top k.",
                UserWarning,
            )
            k = n_classes
        return int(k)

    def score_topk(self, X, y, k=5, sample_weight=None):
        """Top-k accuracy: the (weighted) fraction of rows whose label is
        among their ``k`` most probable classes.

        As ``predict_topk`` (ties to the earlier class); a label not in
        ``classes_`` counts as a miss. With k >= n_classes every known
        label is a hit (a UserWarning, as scikit-learn's
        ``top_k_accuracy_score``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        k : int, default=5
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        score : float

        Examples
        --------
        >>> from sksoftmax import UMaxSoftmaxClassifier
        >>> from sksoftmax.datasets import make_softmax_classification
        >>> X, y = make_softmax_classification(
        ...     n_samples=500, n_features=50, n_classes=20, random_state=0)
        >>> clf = UMaxSoftmaxClassifier(max_iter=5, random_state=0).fit(X, y)
        >>> bool(clf.score_topk(X, y, k=5) >= clf.score(X, y))
        True
        """
        X = self._validate_X_predict(X)
        k = self._check_k(k, strict=False)
        y = np.asarray(y)
        if y.shape[0] != X.shape[0]:
            raise ValueError(
                f"X has {X.shape[0]} rows but y has {y.shape[0]} labels."
            )
        labels, _ = self.predict_topk(X, k=k)
        hit = (labels == y[:, None]).any(axis=1)
        sw = (
            None
            if sample_weight is None
            else _check_sample_weight(sample_weight, X, dtype=np.float64)
        )
        return float(np.average(hit, weights=sw))

    def predict(self, X):
        """Most probable class of each row.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        X = self._validate_X_predict(X)
        return self.classes_[self._evaluate(X, "argmax")]

    def _log_loss(self, X, y_enc, sample_weight=None):
        """Exact weighted mean log-loss, without an (n, K) array."""
        if self._softmax_link():
            nll = self._evaluate(X, "nll", y_enc=y_enc)
        else:
            nll = np.empty(X.shape[0])
            for rows in self._blocks(X.shape[0]):
                s = self._evaluate(X[rows], "scores")
                logp = self._log_proba_block(s.astype(np.float64, copy=False))
                nll[rows] = -logp[np.arange(s.shape[0]), y_enc[rows]]
        if sample_weight is None:
            return float(nll.mean())
        return float(nll @ sample_weight / sample_weight.sum())

    def log_loss(self, X, y, sample_weight=None):
        """Exact mean log-loss of (X, y), computed without an (n, K) array.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Labels, all in ``classes_``.
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        loss : float
            Weighted mean of -log p(y_i | x_i).
        """
        X = self._validate_X_predict(X)
        y = np.asarray(y)
        lookup = self.__dict__.get("_class_lookup")
        if lookup is not None:
            # classes_ grew out of order (allow_new_classes)
            sorted_labels, codes = lookup
        else:
            sorted_labels, codes = self.classes_, None
        idx = np.searchsorted(sorted_labels, y)
        idx[idx == sorted_labels.shape[0]] = 0
        if not np.array_equal(sorted_labels[idx], y):
            raise ValueError("y contains labels not in classes_.")
        if codes is not None:
            idx = codes[idx]
        sw = (
            None
            if sample_weight is None
            else _check_sample_weight(
                sample_weight, X, dtype=np.float64, ensure_non_negative=True
            )
        )
        return self._log_loss(X, idx, sw)

    def objective(self, X, y, sample_weight=None):
        """Exact penalised training objective: log_loss + alpha/2 ||coef_||^2.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        objective : float
        """
        coef = np.asarray(self.coef_, dtype=np.float64)
        return self.log_loss(X, y, sample_weight) + 0.5 * self.alpha * float(
            np.einsum("ij,ij->", coef, coef)
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


# the fewest classes of a shard of _evaluate_by_classes
MIN_SHARD_CLASSES = 4096
# the modes _evaluate runs by class shards when W's used columns exceed
# working_memory (the full modes return (n, K) arrays: by row blocks)
_SHARDED_MODES = ("nll", "argmax", "stats", "topk")


class _ClassShard(SoftmaxPredictionMixin):
    """Rows lo:hi of a model's (coef_, intercept_), views, evaluated as a
    model of their own (``_evaluate_by_classes``)."""

    _one_shard = True

    def __init__(self, coef, intercept, n_threads):
        self.coef_ = coef
        self.intercept_ = intercept
        self._threads = n_threads

    def _n_threads(self):
        return self._threads
