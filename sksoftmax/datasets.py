"""Data for many-class problems: the papers' svmlight protocol and a generator.

- :func:`load_svmlight_first_label`, :func:`load_svmlight_pair` and
  :func:`load_bibtex` read multi-label svmlight files the way Fagan & Iyengar
  (2018, Sec. 4.1) and Ruiz et al. (2018, Sec. 4.2) do: keep the first
  (lowest-index) label of each row, drop rows with no label or no feature,
  optionally scale rows to unit L2 norm.
- :func:`make_softmax_classification` draws sparse count features and labels
  from a planted model whose posterior is exactly a linear softmax, at
  O(nnz) per row, for up to millions of classes.
"""

import os
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file, load_svmlight_files
from sklearn.preprocessing import normalize as _l2_normalize
from sklearn.utils import check_random_state

__all__ = [
    "load_svmlight_first_label",
    "load_svmlight_pair",
    "load_bibtex",
    "make_softmax_classification",
    "shared_data_dir",
]


def shared_data_dir():
    """The folder of the project's real data, or None when it is absent.

    Looks at ``$SKSOFTMAX_SHARED_DATA`` first, then at ``../shared/data``
    beside the repository checkout that holds this package.

    Returns
    -------
    path : pathlib.Path or None

    Examples
    --------
    >>> from sksoftmax.datasets import shared_data_dir
    >>> shared_data_dir() is None or shared_data_dir().is_dir()
    True
    """
    env = os.environ.get("SKSOFTMAX_SHARED_DATA")
    candidates = [Path(env)] if env else []
    candidates.append(Path(__file__).resolve().parents[2] / "shared" / "data")
    for path in candidates:
        if path.is_dir():
            return path
    return None


def _first_label(X, Y, normalize, dtype):
    """Apply the papers' protocol to a multi-label (X, Y)."""
    X = sp.csr_matrix(X, dtype=dtype)
    has_label = np.fromiter(
        (len(labels) > 0 for labels in Y), dtype=bool, count=len(Y)
    )
    keep = has_label & (np.diff(X.indptr) > 0)
    # svmlight stores labels ascending, so the first is the lowest index
    y = np.array(
        [int(min(labels)) for labels, k in zip(Y, keep) if k], dtype=np.int64
    )
    X = X[keep]
    X.sum_duplicates()
    X.eliminate_zeros()
    # eliminate_zeros may empty a row whose only entries were zeros
    nonempty = np.diff(X.indptr) > 0
    X, y = X[nonempty], y[nonempty]
    if normalize:
        X = _l2_normalize(X, norm="l2", copy=False)
    X.indices = X.indices.astype(np.int32, copy=False)
    X.indptr = (
        X.indptr.astype(np.int32, copy=False) if X.nnz < 2**31 else X.indptr
    )
    X.sort_indices()
    return X, y


def load_svmlight_first_label(
    path, n_features=None, normalize=False, dtype=np.float64, zero_based=True
):
    """Load a multi-label svmlight file as a multi-class problem.

    Keeps the first (lowest-index) label of each row as its class and drops
    rows with no label or no nonzero feature (Fagan & Iyengar 2018, Sec. 4.1).

    Parameters
    ----------
    path : str or path-like
        A plain or gzipped svmlight file with ``l1,l2,... f:v ...`` lines.
    n_features : int, default=None
        Number of features; None infers it from the file.
    normalize : bool, default=False
        Scale each row to unit L2 norm (Fagan & Iyengar's protocol; Ruiz et
        al. keep the raw values).
    dtype : {np.float64, np.float32}, default=np.float64
    zero_based : bool or "auto", default=True
        Whether feature indices start at zero.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_rows, n_features)
        Canonical CSR with int32 indices.
    y : ndarray of shape (n_rows,), int64

    Examples
    --------
    >>> from sksoftmax.datasets import load_svmlight_first_label
    >>> import io, tempfile, os
    >>> fd, name = tempfile.mkstemp(suffix=".svm")
    >>> _ = os.write(fd, b"3,5 0:1 2:1\\n 1:1\\n2 1:2\\n"); os.close(fd)
    >>> X, y = load_svmlight_first_label(name, n_features=3)
    >>> y.tolist(), X.shape
    ([3, 2], (2, 3))
    >>> os.remove(name)
    """
    X, Y = load_svmlight_file(
        str(path),
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

    Parameters
    ----------
    train_path, test_path : str or path-like
    n_features : int, default=None
        None uses the largest feature index of the two files.
    normalize, dtype, zero_based
        As in :func:`load_svmlight_first_label`.

    Returns
    -------
    X_train, y_train, X_test, y_test

    Examples
    --------
    >>> from sksoftmax.datasets import load_svmlight_pair, shared_data_dir
    >>> d = shared_data_dir()
    >>> if d is not None:
    ...     Xtr, ytr, Xte, yte = load_svmlight_pair(
    ...         d / "bibtex_train.svm.gz", d / "bibtex_test.svm.gz")
    ...     assert Xtr.shape[1] == Xte.shape[1]
    """
    Xtr, Ytr, Xte, Yte = load_svmlight_files(
        [str(train_path), str(test_path)],
        n_features=n_features,
        multilabel=True,
        zero_based=zero_based,
        dtype=dtype,
    )
    return (
        *_first_label(Xtr, Ytr, normalize, dtype),
        *_first_label(Xte, Yte, normalize, dtype),
    )


def load_bibtex(normalize=True, dtype=np.float64):
    """Bibtex (1,836 features, 159 labels) from ``../shared/data``.

    Parameters
    ----------
    normalize : bool, default=True
        Unit L2 rows (Fagan & Iyengar); False keeps the binary features
        (Ruiz et al.).
    dtype : {np.float64, np.float32}, default=np.float64

    Returns
    -------
    X_train, y_train, X_test, y_test
        4,880 and 2,515 rows before the protocol drops empty rows; the
        training set has 146 classes.

    Raises
    ------
    FileNotFoundError
        When the shared data folder or the files are absent.

    Examples
    --------
    >>> from sksoftmax.datasets import load_bibtex
    >>> try:
    ...     X, y, _, _ = load_bibtex()
    ... except FileNotFoundError:
    ...     pass
    """
    folder = shared_data_dir()
    names = ("bibtex_train.svm.gz", "bibtex_test.svm.gz")
    if folder is None or not all((folder / n).is_file() for n in names):
        raise FileNotFoundError(
            "Bibtex not found: expected ../shared/data/bibtex_train.svm.gz "
            "and bibtex_test.svm.gz beside the repository, or a folder named "
            "by $SKSOFTMAX_SHARED_DATA."
        )
    return load_svmlight_pair(
        folder / names[0],
        folder / names[1],
        n_features=1836,
        normalize=normalize,
        dtype=dtype,
    )


def make_softmax_classification(
    n_samples=1000,
    n_features=1000,
    n_classes=100,
    density=0.01,
    *,
    n_informative=5,
    topic_weight=0.5,
    background_exponent=1.0,
    class_exponent=0.0,
    random_state=None,
    return_coef=False,
    dtype=np.float64,
):
    """Sparse counts and labels from a planted, exactly softmax, model.

    The class comes first: y ~ prior, with prior_k proportional to
    (k + 1)^-class_exponent (uniform by default). Then a bag of
    L = 1 + Poisson(density * n_features - 1) words: each word is, with
    probability ``topic_weight``, one of the ``n_informative`` topic features
    S_y of the class (drawn at random per class), otherwise a feature from a
    shared Zipf-like background bg_j proportional to
    (j + 1)^-background_exponent.
    The features are the word counts. Since p(x | y = k) is multinomial with
    theta_kj = (1 - lam) bg_j + lam c_kj / n_informative (c_kj the times j is
    in S_k), and L does not depend on the class, Bayes' rule gives exactly

        p(y = k | x) = softmax_k(x . w_k + b_k),
        w_kj = log(theta_kj / ((1 - lam) bg_j))   (nonzero on S_k only),
        b_k = log prior_k.

    Binarising or normalising the counts would break this exactness, so the
    counts are returned as they are. Drawing costs O(nnz) per row and
    O(n_classes * n_informative) in all: a million classes is cheap.

    Parameters
    ----------
    n_samples, n_features, n_classes : int
    density : float, default=0.01
        Expected fraction of nonzero features per row (words per row, before
        repeats are merged).
    n_informative : int, default=5
        Topic features per class.
    topic_weight : float in (0, 1), default=0.5
        Probability that a word comes from the class's topic.
    background_exponent : float, default=1.0
        Zipf exponent of the background word distribution.
    class_exponent : float, default=0.0
        Zipf exponent of the class prior (0: uniform).
    random_state : int, RandomState instance or None, default=None
    return_coef : bool, default=False
        Also return the true coefficients.
    dtype : {np.float64, np.float32}, default=np.float64

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_samples, n_features)
        Word counts, canonical CSR with int32 indices; no empty row.
    y : ndarray of shape (n_samples,), int64
    coef : scipy.sparse.csr_matrix of shape (n_classes, n_features)
        Only with ``return_coef``.
    intercept : ndarray of shape (n_classes,)
        Only with ``return_coef``.

    Examples
    --------
    >>> from sksoftmax.datasets import make_softmax_classification
    >>> X, y = make_softmax_classification(100, 50, 10, density=0.1,
    ...                                    random_state=0)
    >>> X.shape, int(y.max()) < 10
    ((100, 50), True)
    """
    if not 0 < topic_weight < 1:
        raise ValueError(f"topic_weight must be in (0, 1), got {topic_weight}")
    if n_classes < 2 or n_features < 1 or n_samples < 1 or n_informative < 1:
        raise ValueError(
            "need n_classes >= 2 and positive n_samples, "
            "n_features, n_informative"
        )
    if not 0 < density <= 1:
        raise ValueError(f"density must be in (0, 1], got {density}")
    rng = np.random.default_rng(
        check_random_state(random_state).randint(0, 2**31 - 1)
    )
    lam = float(topic_weight)

    bg = np.arange(1, n_features + 1, dtype=np.float64) ** -float(
        background_exponent
    )
    bg /= bg.sum()
    bg_cdf = np.cumsum(bg)
    prior = np.arange(1, n_classes + 1, dtype=np.float64) ** -float(
        class_exponent
    )
    prior /= prior.sum()
    topics = rng.integers(0, n_features, size=(n_classes, n_informative))

    y = np.searchsorted(np.cumsum(prior), rng.random(n_samples) * (1 - 1e-12))
    y = np.minimum(y, n_classes - 1).astype(np.int64)
    lengths = 1 + rng.poisson(max(density * n_features - 1.0, 0.0), n_samples)
    rows = np.repeat(np.arange(n_samples), lengths)
    from_topic = rng.random(rows.shape[0]) < lam
    words = np.minimum(
        np.searchsorted(bg_cdf, rng.random(rows.shape[0])), n_features - 1
    )
    slot = rng.integers(0, n_informative, size=int(from_topic.sum()))
    words[from_topic] = topics[y[rows[from_topic]], slot]
    X = sp.csr_matrix(
        (np.ones(rows.shape[0], dtype=dtype), (rows, words)),
        shape=(n_samples, n_features),
    )
    X.sum_duplicates()
    X.indices = X.indices.astype(np.int32, copy=False)
    if not return_coef:
        return X, y

    # c_kj: multiplicity of j in S_k, as a sparse (K, D) count matrix
    counts = sp.csr_matrix(
        (
            np.ones(topics.size),
            (np.repeat(np.arange(n_classes), n_informative), topics.ravel()),
        ),
        shape=(n_classes, n_features),
    )
    counts.sum_duplicates()
    cols = counts.indices
    counts.data = np.log1p(
        lam * counts.data / (n_informative * (1 - lam) * bg[cols])
    )
    return X, y, counts, np.log(prior)
