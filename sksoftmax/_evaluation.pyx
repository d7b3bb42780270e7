# Generated from _evaluation.pyx.tp by setup.py: edit the template.
"""Exact evaluation of a linear softmax model, row by row, on many threads.

Every estimator's ``decision_function``, ``predict``, ``predict_proba``,
``predict_log_proba``, ``predict_topk``, ``log_loss`` and ``score`` reach
these kernels through ``BaseSoftmaxClassifier._evaluate``. One row at a
time, its K scores ``s = W x + b`` are formed in a per-thread scratch
vector and reduced there, so nothing of size (rows, K) exists unless the
caller asked for it (scores, probabilities), and rows are independent:
threads (``prange`` over rows, ``n_threads``) give bitwise the results of
one thread.

Sparse rows (CSR). With W stored (K, D), the K entries a nonzero x_j
multiplies are a column of W, one cache line per class. The rows are
therefore taken in blocks whose used features U fit in ``working_memory``,
and ``gather_columns`` copies W[:, U] once per block into a (|U|, K) array
(W's columns, class-contiguous). A row's scores are then nnz contiguous
axpys of length K (vector instructions), and W is read once per block
instead of once per row and nonzero.

Dense rows. The scores of a block of rows are one BLAS matrix product
(by the caller), reduced here row by row.

Per row (``_finish``): m = max_k s_k, S = sum_k e^{s_k - m} (the exps are
``sks_exp_shifted``, vectorised, in ``_special.pxd``), lse = m + log S, then by
``mode``:

- MODE_SCORES: the scores; MODE_LOG_PROBA: s_k - lse; MODE_PROBA:
  e^{s_k - m} / S;
- MODE_ARGMAX: the first k of largest score (np.argmax's tie rule);
- MODE_NLL: lse - s_y, the row's log-loss;
- MODE_TOPK: the ``topk`` classes of largest probability, computed as
  MODE_PROBA computes it and rounded to the output type, so the classes
  and values are exactly predict_proba's; ties go to the lower class index
  (a stable argsort of -predict_proba).
"""
from cython.parallel cimport parallel, prange, threadid
from libc.math cimport log, INFINITY

import numpy as np

from sksoftmax._special cimport sks_exp_shifted, sks_row_max, sks_row_sum

cdef enum:
    MODE_SCORES = 0
    MODE_LOG_PROBA = 1
    MODE_PROBA = 2
    MODE_ARGMAX = 3
    MODE_NLL = 4
    MODE_TOPK = 5

MODES = {"scores": MODE_SCORES, "log_proba": MODE_LOG_PROBA,
         "proba": MODE_PROBA, "argmax": MODE_ARGMAX, "nll": MODE_NLL,
         "topk": MODE_TOPK}
# modes whose output is a (rows, K) array
FULL_MODES = frozenset(("scores", "log_proba", "proba"))


def plan_block(const Py_ssize_t[::1] indptr, const int[::1] indices,
               Py_ssize_t start, Py_ssize_t max_cols,
               unsigned char[::1] seen):
    """End of the block of CSR rows from ``start`` whose distinct columns
    number at most ``max_cols`` (at least one row, whatever its size).

    ``seen`` (one byte per feature, all zero) is left all zero.
    """
    cdef Py_ssize_t n_rows = indptr.shape[0] - 1
    cdef Py_ssize_t i = start, p, n_cols = 0, new
    with nogil:
        while i < n_rows:
            new = 0
            for p in range(indptr[i], indptr[i + 1]):
                if not seen[indices[p]]:
                    new += 1
            if i > start and n_cols + new > max_cols:
                break
            for p in range(indptr[i], indptr[i + 1]):
                if not seen[indices[p]]:
                    seen[indices[p]] = 1
                    n_cols += 1
            i += 1
        for p in range(indptr[start], indptr[i]):
            seen[indices[p]] = 0
    return i

def gather_columns_64_64(const double[:, ::1] W,
                                      const Py_ssize_t[::1] cols,
                                      double[:, ::1] WU, int n_threads):
    """WU[j, k] = W[k, cols[j]]: the used columns of W, class-contiguous.

    A transpose of the gathered columns, in tiles of 64 classes x 256
    columns (``cols`` ascending): a tile reads 64 rows of W forward and
    writes 256 runs of 64 contiguous entries of WU, so neither side jumps
    a page per element (measured, 8,361 of 65,536 columns x 10,000
    classes: 0.65-0.7 s against 0.97 s for tiles of 16 classes x every
    column; W is read about whole either way, one cache line per 16
    columns).
    """
    cdef Py_ssize_t K = W.shape[0], n_cols = cols.shape[0]
    cdef Py_ssize_t n_ktiles = (K + 63) // 64
    cdef Py_ssize_t n_jtiles = (n_cols + 255) // 256
    cdef Py_ssize_t tile, k, k0, k1, j, j0, j1
    for tile in prange(n_ktiles * n_jtiles, nogil=True, schedule="static",
                       num_threads=n_threads):
        k0 = (tile // n_jtiles) * 64
        k1 = min(k0 + 64, K)
        j0 = (tile % n_jtiles) * 256
        j1 = min(j0 + 256, n_cols)
        for k in range(k0, k1):
            for j in range(j0, j1):
                WU[j, k] = <double>W[k, cols[j]]

def gather_columns_32_64(const float[:, ::1] W,
                                      const Py_ssize_t[::1] cols,
                                      double[:, ::1] WU, int n_threads):
    """WU[j, k] = W[k, cols[j]]: the used columns of W, class-contiguous.

    A transpose of the gathered columns, in tiles of 64 classes x 256
    columns (``cols`` ascending): a tile reads 64 rows of W forward and
    writes 256 runs of 64 contiguous entries of WU, so neither side jumps
    a page per element (measured, 8,361 of 65,536 columns x 10,000
    classes: 0.65-0.7 s against 0.97 s for tiles of 16 classes x every
    column; W is read about whole either way, one cache line per 16
    columns).
    """
    cdef Py_ssize_t K = W.shape[0], n_cols = cols.shape[0]
    cdef Py_ssize_t n_ktiles = (K + 63) // 64
    cdef Py_ssize_t n_jtiles = (n_cols + 255) // 256
    cdef Py_ssize_t tile, k, k0, k1, j, j0, j1
    for tile in prange(n_ktiles * n_jtiles, nogil=True, schedule="static",
                       num_threads=n_threads):
        k0 = (tile // n_jtiles) * 64
        k1 = min(k0 + 64, K)
        j0 = (tile % n_jtiles) * 256
        j1 = min(j0 + 256, n_cols)
        for k in range(k0, k1):
            for j in range(j0, j1):
                WU[j, k] = <double>W[k, cols[j]]


cdef inline void _finish_64(
        double* s, double* e, Py_ssize_t K, int mode, Py_ssize_t y,
        double* out_row, double* out_value, Py_ssize_t* out_index,
        Py_ssize_t topk) noexcept nogil:
    """Reduce one row's scores ``s`` as ``mode`` says (``e``: K scratch).

    ``out_row`` holds K values (full modes) or ``topk`` probabilities
    (MODE_TOPK, with ``out_index``'s topk classes); MODE_NLL writes
    ``out_value[0]``, MODE_ARGMAX ``out_index[0]``.
    """
    cdef Py_ssize_t k, a
    cdef double m, total, lse, inv
    cdef double v
    if mode == MODE_SCORES:
        for k in range(K):
            out_row[k] = <double>s[k]
        return
    if mode == MODE_ARGMAX:
        a = 0
        m = s[0]
        for k in range(1, K):
            if s[k] > m:
                m = s[k]
                a = k
        out_index[0] = a
        return
    m = sks_row_max(s, K)
    if m == INFINITY or m == -INFINITY:
        # an infinite score, or all -inf: the shift would make inf - inf
        # (NaN), as scipy's logsumexp does; kept NaN so it is seen
        m = 0.0
    sks_exp_shifted(s, e, K, m)
    total = sks_row_sum(e, K)
    if mode == MODE_LOG_PROBA or mode == MODE_NLL:
        lse = m + log(total)
        if mode == MODE_NLL:
            out_value[0] = lse - s[y]
            return
        for k in range(K):
            out_row[k] = <double>(s[k] - lse)
        return
    inv = 1.0 / total
    if mode == MODE_PROBA:
        for k in range(K):
            out_row[k] = <double>(e[k] * inv)
        return
    # MODE_TOPK: out_row[:topk] sorted descending; a value enters only if
    # strictly above the current last, and after the equal ones already
    # there, so ties keep class order
    for a in range(topk):
        out_row[a] = -1
        out_index[a] = -1
    for k in range(K):
        v = <double>(e[k] * inv)
        if not v > out_row[topk - 1]:
            continue
        a = topk - 1
        while a > 0 and v > out_row[a - 1]:
            out_row[a] = out_row[a - 1]
            out_index[a] = out_index[a - 1]
            a -= 1
        out_row[a] = v
        out_index[a] = k


def sparse_rows_64(const double[::1] data, const int[::1] local,
                         const Py_ssize_t[::1] indptr,
                         const double[:, ::1] WU,
                         const double[::1] b, str mode_name,
                         const Py_ssize_t[::1] y, double[:, ::1] out,
                         double[::1] out_value, Py_ssize_t[:, ::1] out_index,
                         int n_threads):
    """Evaluate the CSR rows (data, local, indptr) against ``WU``.

    ``local`` indexes rows of WU (the block's gathered columns); ``indptr``
    starts at 0. Outputs by mode: ``out`` (rows, K) for the full modes,
    (rows, topk) probabilities for MODE_TOPK; ``out_value`` (rows,) for
    MODE_NLL (needs ``y``); ``out_index`` (rows, 1) for MODE_ARGMAX,
    (rows, topk) for MODE_TOPK. Unused outputs may be empty.
    """
    cdef int mode = MODES[mode_name]
    cdef Py_ssize_t n_rows = indptr.shape[0] - 1, K = WU.shape[1]
    cdef Py_ssize_t topk = out.shape[1] if mode == MODE_TOPK else 0
    cdef Py_ssize_t i, p, k, yi
    cdef double* s
    cdef double* e
    cdef double xv
    cdef const double* w
    cdef double* out_row
    cdef Py_ssize_t* idx_row
    cdef double* val
    # a score vector and its exps per thread
    cdef double[:, ::1] scratch = np.empty((max(n_threads, 1), 2 * K))
    with nogil, parallel(num_threads=n_threads):
        s = &scratch[threadid(), 0]
        e = &scratch[threadid(), K]
        for i in prange(n_rows, schedule="dynamic", chunksize=64):
            for k in range(K):
                s[k] = b[k]
            for p in range(indptr[i], indptr[i + 1]):
                xv = data[p]
                w = &WU[local[p], 0]
                for k in range(K):
                    s[k] = s[k] + xv * w[k]
            out_row = NULL
            idx_row = NULL
            val = NULL
            yi = 0
            if mode == MODE_NLL:
                val = &out_value[i]
                yi = y[i]
            elif mode == MODE_ARGMAX or mode == MODE_TOPK:
                idx_row = &out_index[i, 0]
            if mode != MODE_NLL and mode != MODE_ARGMAX:
                out_row = &out[i, 0]
            _finish_64(s, e, K, mode, yi, out_row, val, idx_row, topk)
    return None


def dense_rows_64(double[:, ::1] scores,
                        const double[::1] b, str mode_name,
                        const Py_ssize_t[::1] y, double[:, ::1] out,
                        double[::1] out_value, Py_ssize_t[:, ::1] out_index,
                        int n_threads):
    """Finish rows whose scores x.W^T (without b) a BLAS product gave.

    Outputs as in ``sparse_rows``; for the full modes ``out`` may be
    ``scores`` itself (each row is read before it is written).
    """
    cdef int mode = MODES[mode_name]
    cdef Py_ssize_t n_rows = scores.shape[0], K = scores.shape[1]
    cdef Py_ssize_t topk = out.shape[1] if mode == MODE_TOPK else 0
    cdef Py_ssize_t i, k, yi
    cdef double* s
    cdef double* e
    cdef double* out_row
    cdef Py_ssize_t* idx_row
    cdef double* val
    cdef double[:, ::1] scratch = np.empty((max(n_threads, 1), 2 * K))
    with nogil, parallel(num_threads=n_threads):
        s = &scratch[threadid(), 0]
        e = &scratch[threadid(), K]
        for i in prange(n_rows, schedule="dynamic", chunksize=64):
            for k in range(K):
                s[k] = <double>scores[i, k] + b[k]
            out_row = NULL
            idx_row = NULL
            val = NULL
            yi = 0
            if mode == MODE_NLL:
                val = &out_value[i]
                yi = y[i]
            elif mode == MODE_ARGMAX or mode == MODE_TOPK:
                idx_row = &out_index[i, 0]
            if mode != MODE_NLL and mode != MODE_ARGMAX:
                out_row = &out[i, 0]
            _finish_64(s, e, K, mode, yi, out_row, val, idx_row, topk)
    return None

def gather_columns_64_32(const double[:, ::1] W,
                                      const Py_ssize_t[::1] cols,
                                      float[:, ::1] WU, int n_threads):
    """WU[j, k] = W[k, cols[j]]: the used columns of W, class-contiguous.

    A transpose of the gathered columns, in tiles of 64 classes x 256
    columns (``cols`` ascending): a tile reads 64 rows of W forward and
    writes 256 runs of 64 contiguous entries of WU, so neither side jumps
    a page per element (measured, 8,361 of 65,536 columns x 10,000
    classes: 0.65-0.7 s against 0.97 s for tiles of 16 classes x every
    column; W is read about whole either way, one cache line per 16
    columns).
    """
    cdef Py_ssize_t K = W.shape[0], n_cols = cols.shape[0]
    cdef Py_ssize_t n_ktiles = (K + 63) // 64
    cdef Py_ssize_t n_jtiles = (n_cols + 255) // 256
    cdef Py_ssize_t tile, k, k0, k1, j, j0, j1
    for tile in prange(n_ktiles * n_jtiles, nogil=True, schedule="static",
                       num_threads=n_threads):
        k0 = (tile // n_jtiles) * 64
        k1 = min(k0 + 64, K)
        j0 = (tile % n_jtiles) * 256
        j1 = min(j0 + 256, n_cols)
        for k in range(k0, k1):
            for j in range(j0, j1):
                WU[j, k] = <float>W[k, cols[j]]

def gather_columns_32_32(const float[:, ::1] W,
                                      const Py_ssize_t[::1] cols,
                                      float[:, ::1] WU, int n_threads):
    """WU[j, k] = W[k, cols[j]]: the used columns of W, class-contiguous.

    A transpose of the gathered columns, in tiles of 64 classes x 256
    columns (``cols`` ascending): a tile reads 64 rows of W forward and
    writes 256 runs of 64 contiguous entries of WU, so neither side jumps
    a page per element (measured, 8,361 of 65,536 columns x 10,000
    classes: 0.65-0.7 s against 0.97 s for tiles of 16 classes x every
    column; W is read about whole either way, one cache line per 16
    columns).
    """
    cdef Py_ssize_t K = W.shape[0], n_cols = cols.shape[0]
    cdef Py_ssize_t n_ktiles = (K + 63) // 64
    cdef Py_ssize_t n_jtiles = (n_cols + 255) // 256
    cdef Py_ssize_t tile, k, k0, k1, j, j0, j1
    for tile in prange(n_ktiles * n_jtiles, nogil=True, schedule="static",
                       num_threads=n_threads):
        k0 = (tile // n_jtiles) * 64
        k1 = min(k0 + 64, K)
        j0 = (tile % n_jtiles) * 256
        j1 = min(j0 + 256, n_cols)
        for k in range(k0, k1):
            for j in range(j0, j1):
                WU[j, k] = <float>W[k, cols[j]]


cdef inline void _finish_32(
        double* s, double* e, Py_ssize_t K, int mode, Py_ssize_t y,
        float* out_row, double* out_value, Py_ssize_t* out_index,
        Py_ssize_t topk) noexcept nogil:
    """Reduce one row's scores ``s`` as ``mode`` says (``e``: K scratch).

    ``out_row`` holds K values (full modes) or ``topk`` probabilities
    (MODE_TOPK, with ``out_index``'s topk classes); MODE_NLL writes
    ``out_value[0]``, MODE_ARGMAX ``out_index[0]``.
    """
    cdef Py_ssize_t k, a
    cdef double m, total, lse, inv
    cdef float v
    if mode == MODE_SCORES:
        for k in range(K):
            out_row[k] = <float>s[k]
        return
    if mode == MODE_ARGMAX:
        a = 0
        m = s[0]
        for k in range(1, K):
            if s[k] > m:
                m = s[k]
                a = k
        out_index[0] = a
        return
    m = sks_row_max(s, K)
    if m == INFINITY or m == -INFINITY:
        # an infinite score, or all -inf: the shift would make inf - inf
        # (NaN), as scipy's logsumexp does; kept NaN so it is seen
        m = 0.0
    sks_exp_shifted(s, e, K, m)
    total = sks_row_sum(e, K)
    if mode == MODE_LOG_PROBA or mode == MODE_NLL:
        lse = m + log(total)
        if mode == MODE_NLL:
            out_value[0] = lse - s[y]
            return
        for k in range(K):
            out_row[k] = <float>(s[k] - lse)
        return
    inv = 1.0 / total
    if mode == MODE_PROBA:
        for k in range(K):
            out_row[k] = <float>(e[k] * inv)
        return
    # MODE_TOPK: out_row[:topk] sorted descending; a value enters only if
    # strictly above the current last, and after the equal ones already
    # there, so ties keep class order
    for a in range(topk):
        out_row[a] = -1
        out_index[a] = -1
    for k in range(K):
        v = <float>(e[k] * inv)
        if not v > out_row[topk - 1]:
            continue
        a = topk - 1
        while a > 0 and v > out_row[a - 1]:
            out_row[a] = out_row[a - 1]
            out_index[a] = out_index[a - 1]
            a -= 1
        out_row[a] = v
        out_index[a] = k


def sparse_rows_32(const float[::1] data, const int[::1] local,
                         const Py_ssize_t[::1] indptr,
                         const float[:, ::1] WU,
                         const float[::1] b, str mode_name,
                         const Py_ssize_t[::1] y, float[:, ::1] out,
                         double[::1] out_value, Py_ssize_t[:, ::1] out_index,
                         int n_threads):
    """Evaluate the CSR rows (data, local, indptr) against ``WU``.

    ``local`` indexes rows of WU (the block's gathered columns); ``indptr``
    starts at 0. Outputs by mode: ``out`` (rows, K) for the full modes,
    (rows, topk) probabilities for MODE_TOPK; ``out_value`` (rows,) for
    MODE_NLL (needs ``y``); ``out_index`` (rows, 1) for MODE_ARGMAX,
    (rows, topk) for MODE_TOPK. Unused outputs may be empty.
    """
    cdef int mode = MODES[mode_name]
    cdef Py_ssize_t n_rows = indptr.shape[0] - 1, K = WU.shape[1]
    cdef Py_ssize_t topk = out.shape[1] if mode == MODE_TOPK else 0
    cdef Py_ssize_t i, p, k, yi
    cdef double* s
    cdef double* e
    cdef double xv
    cdef const float* w
    cdef float* out_row
    cdef Py_ssize_t* idx_row
    cdef double* val
    # a score vector and its exps per thread
    cdef double[:, ::1] scratch = np.empty((max(n_threads, 1), 2 * K))
    with nogil, parallel(num_threads=n_threads):
        s = &scratch[threadid(), 0]
        e = &scratch[threadid(), K]
        for i in prange(n_rows, schedule="dynamic", chunksize=64):
            for k in range(K):
                s[k] = b[k]
            for p in range(indptr[i], indptr[i + 1]):
                xv = data[p]
                w = &WU[local[p], 0]
                for k in range(K):
                    s[k] = s[k] + xv * w[k]
            out_row = NULL
            idx_row = NULL
            val = NULL
            yi = 0
            if mode == MODE_NLL:
                val = &out_value[i]
                yi = y[i]
            elif mode == MODE_ARGMAX or mode == MODE_TOPK:
                idx_row = &out_index[i, 0]
            if mode != MODE_NLL and mode != MODE_ARGMAX:
                out_row = &out[i, 0]
            _finish_32(s, e, K, mode, yi, out_row, val, idx_row, topk)
    return None


def dense_rows_32(float[:, ::1] scores,
                        const float[::1] b, str mode_name,
                        const Py_ssize_t[::1] y, float[:, ::1] out,
                        double[::1] out_value, Py_ssize_t[:, ::1] out_index,
                        int n_threads):
    """Finish rows whose scores x.W^T (without b) a BLAS product gave.

    Outputs as in ``sparse_rows``; for the full modes ``out`` may be
    ``scores`` itself (each row is read before it is written).
    """
    cdef int mode = MODES[mode_name]
    cdef Py_ssize_t n_rows = scores.shape[0], K = scores.shape[1]
    cdef Py_ssize_t topk = out.shape[1] if mode == MODE_TOPK else 0
    cdef Py_ssize_t i, k, yi
    cdef double* s
    cdef double* e
    cdef float* out_row
    cdef Py_ssize_t* idx_row
    cdef double* val
    cdef double[:, ::1] scratch = np.empty((max(n_threads, 1), 2 * K))
    with nogil, parallel(num_threads=n_threads):
        s = &scratch[threadid(), 0]
        e = &scratch[threadid(), K]
        for i in prange(n_rows, schedule="dynamic", chunksize=64):
            for k in range(K):
                s[k] = <double>scores[i, k] + b[k]
            out_row = NULL
            idx_row = NULL
            val = NULL
            yi = 0
            if mode == MODE_NLL:
                val = &out_value[i]
                yi = y[i]
            elif mode == MODE_ARGMAX or mode == MODE_TOPK:
                idx_row = &out_index[i, 0]
            if mode != MODE_NLL and mode != MODE_ARGMAX:
                out_row = &out[i, 0]
            _finish_32(s, e, K, mode, yi, out_row, val, idx_row, topk)
    return None
