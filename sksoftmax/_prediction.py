"""Exact, memory-bounded prediction shared by every sksoftmax classifier.

:class:`SoftmaxPredictionMixin` turns a fitted linear model (``coef_`` of
shape (n_classes, n_features), ``intercept_``, ``classes_``) into
scikit-learn's prediction methods plus ``predict_topk``, ``score_topk`` and
``log_loss``, all computed by the kernels of ``_shared/_evaluation`` on
``n_jobs`` threads, blockwise within ``working_memory``, never forming more
than the (n_samples, n_classes) output that a method returns. The top k,
argmax, log-loss and per-row statistics of sparse rows are computed by
the class-block kernel of ``_shared/_class_blocks`` (``_by_class_blocks``
below), which reads W in place.

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

from ._shared._class_blocks import (
    BLOCK,
    class_blocks_32_32,
    class_blocks_32_64,
    class_blocks_64_64,
)
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
_CSR_TYPES = (sp.csr_matrix, sp.csr_array)
_FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
# the class-block kernels by (coef_ is float64, result is float64)
_CLASS_BLOCKS = {
    (False, False): class_blocks_32_32,
    (False, True): class_blocks_32_64,
    (True, True): class_blocks_64_64,
}
# classes per task of the class-block kernel (its sums are taken chunk by
# chunk: a constant, so that no result depends on threads or row passes)
CLASS_CHUNK = 256 * BLOCK
# the most features of a group of rows scored together against a
# class-major W (its per-thread tile: 64 x this many weights)
MAX_TILE_COLS = 4096
# the modes of sparse rows scored by class blocks (the full modes return
# (n, K) arrays: by row blocks)
# from this many rows in a pass, a feature-major W's segments are copied
# into a tile per block (one pass of many streams) before the rows read them
COPY_ROWS = 8
_CLASS_BLOCK_MODES = frozenset(("nll", "argmax", "stats", "topk"))
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
        if (
            type(X) in _CSR_TYPES
            and X.dtype in _FLOAT_DTYPES
            and X.shape[0] > 0
            and X.shape[1] == self.__dict__.get("n_features_in_", -1)
            and "feature_names_in_" not in self.__dict__
            and np.isfinite(X.data).all()
        ):
            # a fitted model and CSR rows as validate_data would return
            # them: the one-row call (serving) skips its generic checks,
            # which cost more than scoring a row at small K
            return X
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
        if sp.issparse(X) and mode in _CLASS_BLOCK_MODES:
            return _by_class_blocks(
                self.coef_, self.intercept_, X, mode, y_enc, k, n_threads
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

        The classes of largest score, ties to the class that comes first
        in ``classes_`` (a stable argsort of the scores), with the
        probabilities of ``predict_proba`` to rounding. Sparse rows are
        scored by blocks of 64 classes against W where it is (no copy;
        float32 models in float32 arithmetic), with a running top k per
        row: see the user guide's "Prediction at large K" for the layouts
        and the memory. Memory: the (n_samples, k) outputs and a few
        numbers per row, within ``working_memory``.

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


def _class_block_layout(coef):
    """(W, ld, feature_major) for the class-block kernel, without a copy
    where coef_ is stored either way the package stores it: C-contiguous
    (K, D) (class-major), or the transpose of (D, >= K) rows
    (feature-major, the exact solver's ``Wt``); any other layout is
    copied to C order."""
    size = coef.itemsize
    if coef.flags.c_contiguous:
        return coef, coef.shape[1], False
    s0, s1 = coef.strides
    if s0 == size and s1 % size == 0 and s1 // size >= coef.shape[0]:
        return coef.T, s1 // size, True
    coef = np.ascontiguousarray(coef)
    return coef, coef.shape[1], False


def _by_class_blocks(coef, intercept, X, mode, y_enc, k, n_threads):
    """``_evaluate`` of a mode of _CLASS_BLOCK_MODES on CSR rows X, by the
    class-block kernel (``_shared/_class_blocks``): per row its top k
    (k = 1 for 'argmax' and 'stats'), log-partition (not for 'argmax')
    and true-class score, in passes of rows whose per-row state fits in
    working_memory. W is read in place (``_class_block_layout``)."""
    n, n_classes = X.shape[0], coef.shape[0]
    dtype = np.result_type(X.dtype, coef.dtype)
    W, ld, feature_major = _class_block_layout(coef)
    kernel = _CLASS_BLOCKS[coef.dtype == np.float64, dtype == np.float64]
    # (a block cut short reads only its own classes: no padding, so no
    # O(K) copy per call when the intercepts have the arithmetic's type)
    bias = np.ascontiguousarray(intercept, dtype=dtype)
    heap = k if mode == "topk" else (0 if mode == "nll" else 1)
    need_lse = mode != "argmax"
    with_y = y_enc is not None and mode in ("nll", "stats")
    n_chunks = -(-n_classes // CLASS_CHUNK)
    # per row: the chunks' (m, S), each thread's heap and the outputs
    row_bytes = 16 * n_chunks * need_lse + heap * (
        16 * n_threads + dtype.itemsize * n_threads + 16
    ) + 32
    budget = max(1, int(get_config()["working_memory"] * 2**20))
    rows = max(1, budget // row_bytes)
    lse = np.empty(n if need_lse else 0)
    sy = np.full(n, -np.inf)
    top_index = np.empty((n, heap), dtype=np.intp)
    top_score = np.empty((n, heap))
    y = (
        np.ascontiguousarray(y_enc, dtype=np.intp)
        if with_y
        else np.empty(0, dtype=np.intp)
    )
    indptr_all = X.indptr.astype(np.intp, copy=False)
    indices_all = X.indices.astype(np.intp, copy=False)
    data_all = X.data.astype(dtype, copy=False)
    for start in range(0, n, rows):
        end = min(n, start + rows)
        lo, hi = indptr_all[start], indptr_all[end]
        indptr = indptr_all[start : end + 1] - lo
        indices = indices_all[lo:hi]
        groups = _row_groups(
            indptr, indices, X.shape[1], feature_major, n_chunks, n_threads
        )
        cols, cols_ptr, local = _group_columns(
            indptr, indices, groups, X.shape[1]
        )
        copy = feature_major and end - start >= COPY_ROWS
        # a class-major tile of every feature when the rows use many
        dense = (
            not feature_major
            and X.shape[1] <= MAX_TILE_COLS
            and 4 * cols.shape[0] >= X.shape[1]
        )
        if dense:
            off = indices * BLOCK
        else:
            off = indices * ld if feature_major and not copy else local * BLOCK
        kernel(
            W, ld, feature_major, n_classes, bias, data_all[lo:hi], off,
            indptr, groups, cols, cols_ptr, y[start:end] if with_y else y,
            heap, need_lse, CLASS_CHUNK,
            lse[start:end] if need_lse else lse, sy[start:end],
            top_index[start:end], top_score[start:end], n_threads, copy,
            dense,
        )
    if mode == "argmax":
        return top_index[:, 0]
    if mode == "nll":
        return lse - sy
    if mode == "stats":
        # (the largest score, the sum of exps below it, the true score)
        m = top_score[:, 0]
        with np.errstate(invalid="ignore", over="ignore"):
            total = np.exp(lse - m)
        return np.stack([m, total, sy], axis=1), top_index[:, 0]
    with np.errstate(invalid="ignore", over="ignore"):
        proba = np.exp(top_score - lse[:, None]).astype(dtype, copy=False)
    return top_index, proba


def _row_groups(
    indptr, indices, n_features, feature_major, n_chunks, n_threads
):
    """Bounds of the groups of rows scored together: against a
    class-major W, rows whose distinct features number at most
    MAX_TILE_COLS (the tile); then, when the chunks of classes are fewer
    than the threads can share, each group in pieces."""
    n = indptr.shape[0] - 1
    if feature_major or indices.shape[0] <= MAX_TILE_COLS:
        bounds = [0, n]
    else:
        seen = np.zeros(n_features, dtype=np.uint8)
        idx32 = indices.astype(np.int32)
        bounds = [0]
        while bounds[-1] < n:
            bounds.append(
                plan_block(indptr, idx32, bounds[-1], MAX_TILE_COLS, seen)
            )
    pieces = -(-4 * n_threads // n_chunks) if n_threads > 1 else 1
    if pieces > 1:
        bounds = np.unique(np.concatenate([
            np.linspace(a, b, min(pieces, max(1, (b - a) // 8)) + 1)
            .astype(np.intp)
            for a, b in zip(bounds[:-1], bounds[1:])
        ]))
    return np.asarray(bounds, dtype=np.intp)


def _group_columns(indptr, indices, groups, n_features):
    """Each group's distinct features (ascending, ``cols[cols_ptr[g]:
    cols_ptr[g + 1]]``) and each nonzero's position among its group's."""
    n_groups = groups.shape[0] - 1
    if n_groups == 1:
        cols, local = np.unique(indices, return_inverse=True)
        ptr = np.array([0, cols.shape[0]], dtype=np.intp)
        return cols, ptr, local.ravel()
    gid = np.repeat(np.arange(n_groups), np.diff(indptr[groups]))
    key = gid * n_features + indices
    keys, inverse = np.unique(key, return_inverse=True)
    cols_ptr = np.searchsorted(
        keys, np.arange(n_groups + 1) * n_features
    ).astype(np.intp)
    return keys % n_features, cols_ptr, inverse - cols_ptr[gid]
