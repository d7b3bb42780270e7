"""Multi-label svmlight files read as single-label problems (the papers'
protocol)."""

import numbers
import os

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import (
    load_svmlight_file,
    load_svmlight_files,
)
from sklearn.preprocessing import normalize as _l2_normalize

_INT32_MAX = np.iinfo(np.int32).max


def _canonical_csr(X, dtype):
    """Return X as a csr_matrix with summed, sorted entries and small indices.

    The Cython kernels read int32 column indices; int64 stays only where
    int32 cannot count the entries.
    """
    X = sp.csr_matrix(X, dtype=dtype)
    X.sum_duplicates()
    idx_dtype = (
        np.int32
        if X.nnz <= _INT32_MAX and max(X.shape) <= _INT32_MAX
        else np.int64
    )
    # A fresh matrix rather than attribute surgery, so scipy sees consistent
    # index dtypes and recomputes its canonical-format flag from the arrays.
    return sp.csr_matrix(
        (
            X.data,
            X.indices.astype(idx_dtype, copy=False),
            X.indptr.astype(idx_dtype, copy=False),
        ),
        shape=X.shape,
        copy=False,
    )


def _first_label(X, Y, normalize, dtype):
    """Apply the papers' protocol to a multi-label (X, Y) pair."""
    X = sp.csr_matrix(X, dtype=dtype)
    # An explicit "f:0" is not a feature: a row holding only those is empty.
    X.eliminate_zeros()
    n_labels = np.fromiter(map(len, Y), dtype=np.intp, count=len(Y))
    keep = (n_labels > 0) & (np.diff(X.indptr) > 0)
    # scikit-learn returns each row's labels sorted ascending, so min() is
    # both the first label of the file and the lowest index.
    first = np.fromiter(
        (min(labels) for labels, k in zip(Y, keep) if k),
        dtype=np.float64,
        count=int(keep.sum()),
    )
    y = first.astype(np.int64)
    if not np.array_equal(y, first) or (y < 0).any():
        raise ValueError("labels must be non-negative integers")
    if not keep.all():
        X = X[keep]
    if normalize:
        X = _l2_normalize(X, norm="l2", copy=False)
    return _canonical_csr(X, dtype), y


def load_svmlight_first_label(
    path, n_features=None, normalize=False, dtype=np.float64, zero_based=True
):
    """Load a multi-label svmlight file as a multi-class problem.

    Keeps the first (lowest-index) label of each row as its class and drops
    rows with no label or no nonzero feature, as Fagan & Iyengar (2018,
    Sec. 4.1) and Ruiz et al. (2018, Sec. 4.2) do.

    Parameters
    ----------
    path : str or path-like
        A plain or gzipped (``.gz``) or bzip2 (``.bz2``) svmlight file with
        ``l1,l2,... f:v f:v ...`` lines.
    n_features : int, default=None
        Number of features; None infers it from the largest index.
    normalize : bool, default=False
        Scale each kept row to unit L2 norm (Fagan & Iyengar's protocol;
        Ruiz et al. keep the raw values).
    dtype : {np.float64, np.float32}, default=np.float64
        Dtype of the values of X.
    zero_based : bool or "auto", default=True
        Whether feature indices start at zero.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_rows, n_features)
        Canonical CSR (summed duplicates, sorted indices), int32 indices.
    y : ndarray of shape (n_rows,), dtype int64
        The first label of each kept row.

    See Also
    --------
    load_svmlight_pair : A train and a test file with the same features.

    Examples
    --------
    >>> import os, tempfile
    >>> from sksoftmax.datasets import load_svmlight_first_label
    >>> fd, name = tempfile.mkstemp(suffix=".svm")
    >>> _ = os.write(fd, b"3,5 0:1 2:1\\n 1:1\\n2 1:2\\n"); os.close(fd)
    >>> X, y = load_svmlight_first_label(name, n_features=3)
    >>> y.tolist(), X.shape
    ([3, 2], (2, 3))
    >>> os.remove(name)
    """
    X, Y = load_svmlight_file(
        os.fspath(path),
        n_features=n_features,
        multilabel=True,
        zero_based=zero_based,
        dtype=dtype,
    )
    return _first_label(X, Y, normalize, dtype)


def load_svmlight_pair(
    train_path,
    test_path,
    n_features=None,
    normalize=False,
    dtype=np.float64,
    zero_based=True,
):
    """Load a train and a test svmlight file with the same number of features.

    Both files go through the protocol of
    :func:`load_svmlight_first_label` with the same options.

    Parameters
    ----------
    train_path, test_path : str or path-like
        Plain or compressed multi-label svmlight files.
    n_features : int, default=None
        None uses the largest feature index found in either file.
    normalize : bool, default=False
        Scale each kept row to unit L2 norm.
    dtype : {np.float64, np.float32}, default=np.float64
        Dtype of the values of X_train and X_test.
    zero_based : bool or "auto", default=True
        Whether feature indices start at zero ("auto" decides for both files
        together).

    Returns
    -------
    X_train : scipy.sparse.csr_matrix of shape (n_train, n_features)
    y_train : ndarray of shape (n_train,), dtype int64
    X_test : scipy.sparse.csr_matrix of shape (n_test, n_features)
    y_test : ndarray of shape (n_test,), dtype int64

    Examples
    --------
    >>> import os, tempfile
    >>> from sksoftmax.datasets import load_svmlight_pair
    >>> names = []
    >>> for text in (b"0 1:1\\n1 0:1\\n", b"1 4:1\\n"):
    ...     fd, name = tempfile.mkstemp(suffix=".svm")
    ...     _ = os.write(fd, text); os.close(fd); names.append(name)
    >>> Xtr, ytr, Xte, yte = load_svmlight_pair(*names)
    >>> Xtr.shape, Xte.shape
    ((2, 5), (1, 5))
    >>> for name in names:
    ...     os.remove(name)
    """
    Xtr, Ytr, Xte, Yte = load_svmlight_files(
        [os.fspath(train_path), os.fspath(test_path)],
        n_features=n_features,
        multilabel=True,
        zero_based=zero_based,
        dtype=dtype,
    )
    return (
        *_first_label(Xtr, Ytr, normalize, dtype),
        *_first_label(Xte, Yte, normalize, dtype),
    )

def _check_int(name, value, low, high=None):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {value!r}")
    if value < low or (high is not None and value > high):
        bounds = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"{name} must be {bounds}, got {value}")
