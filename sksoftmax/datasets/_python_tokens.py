"""A real next-token problem built from the Python standard library's
source files."""

import hashlib
import numbers
import os
import sys
import sysconfig
import tempfile
import token
import tokenize
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import (
    get_data_home,
)
from sklearn.utils import murmurhash3_32

from ._loaders import _INT32_MAX, _canonical_csr, _check_int

# Bump when the tokens, features or stored arrays change, so that caches
# written by an older version are not read as if they were current.
_PYTHON_TOKENS_FORMAT = 1
_PYTHON_TOKENS_FOLDER = "sksoftmax_python_tokens"
# Third-party code installed inside the stdlib folder is not the stdlib.
_THIRD_PARTY_DIRS = frozenset({"site-packages", "dist-packages"})
_BOF = "<BOF>"
_DROPPED_TOKENS = frozenset(
    {
        tokenize.ENCODING,
        tokenize.COMMENT,
        tokenize.NL,
        tokenize.ENDMARKER,
        token.TYPE_COMMENT,
        token.TYPE_IGNORE,
    }
)
_LAYOUT_WORDS = {
    tokenize.NEWLINE: "<NEWLINE>",
    tokenize.INDENT: "<INDENT>",
    tokenize.DEDENT: "<DEDENT>",
}
# Literals frequent enough (indices, ranges, defaults) to be worth a class
# of their own; every other number is "<NUMBER>".
_KEPT_NUMBERS = frozenset({"0", "1", "2"})
# Short strings are mostly keys, names and separators that recur verbatim;
# long ones are prose and would each be a class seen once.
_MAX_STRING_LENGTH = 20


def _token_words(readline):
    """Normalised words of the tokens of one source (see make_python_tokens).

    Raises whatever tokenize raises on a source it cannot read.
    """
    words = []
    append = words.append
    for tok in tokenize.generate_tokens(readline):
        kind, text = tok[0], tok[1]
        if kind in _DROPPED_TOKENS:
            continue
        if kind in _LAYOUT_WORDS:
            append(_LAYOUT_WORDS[kind])
        elif kind == tokenize.NUMBER:
            append(text if text in _KEPT_NUMBERS else "<NUMBER>")
        elif kind == tokenize.STRING:
            append(text if len(text) <= _MAX_STRING_LENGTH else "<STRING>")
        else:
            append(text)
    return words


def _stdlib_sources():
    """(posix path relative to the stdlib, path) of its .py files, sorted."""
    root = sysconfig.get_paths()["stdlib"]
    sources = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in _THIRD_PARTY_DIRS]
        for name in filenames:
            if name.endswith(".py"):
                path = os.path.join(dirpath, name)
                sources.append((Path(path).relative_to(root).as_posix(), path))
    sources.sort()
    return sources


def _test_thousandths(test_size):
    return round(test_size * 1000)


def _python_token_split(test_size):
    """The stdlib sources and, per source, whether it is a test file.

    A hash of the relative path decides, so a file keeps its side whatever
    else is installed, and the split needs no random state.
    """
    sources = _stdlib_sources()
    threshold = _test_thousandths(test_size)
    is_test = np.fromiter(
        (
            murmurhash3_32(rel, seed=0, positive=True) % 1000 < threshold
            for rel, _ in sources
        ),
        dtype=bool,
        count=len(sources),
    )
    return sources, is_test


def _n_feature_columns(context):
    # The (-2, -1) bigram needs two context tokens.
    return context + (context >= 2)


def _hashed_features(ids, starts, words, n_features, context):
    """Hashed feature columns of every token position, before dedupe.

    Parameters
    ----------
    ids : ndarray of shape (n_tokens,), int32
        Word ids of the tokens of all files, concatenated; ``words[0]`` is
        the beginning-of-file word, which no file holds.
    starts : ndarray of shape (n_files,)
        Index in ids of each file's first token, increasing.
    words : list of str
        The word of each id.

    Returns
    -------
    cols : ndarray of shape (n_tokens, _n_feature_columns(context)), int32
        Row i holds the columns of the context that predicts token i.
    """
    n = ids.shape[0]
    offset = np.arange(n) - np.repeat(starts, np.diff(np.append(starts, n)))
    n_words = len(words)
    cols = np.empty((n, _n_feature_columns(context)), dtype=np.int32)
    before = {}
    for k in range(1, context + 1):
        prev = np.zeros(n, dtype=ids.dtype)
        prev[k:] = ids[: max(n - k, 0)]
        prev[offset < k] = 0
        if k <= 2:  # kept for the bigram
            before[k] = prev
        # One hash per word and position rather than per token: the stdlib
        # has about 40 tokens per distinct word.
        tag = f"-{k}="
        table = np.fromiter(
            (murmurhash3_32(tag + w, seed=0, positive=True) for w in words),
            dtype=np.int64,
            count=n_words,
        )
        cols[:, k - 1] = (table % n_features)[prev]
    if context >= 2:
        pairs, inverse = np.unique(
            before[2].astype(np.int64) * n_words + before[1],
            return_inverse=True,
        )
        table = np.fromiter(
            (
                murmurhash3_32(
                    f"-2-1={words[a]} {words[b]}", seed=0, positive=True
                )
                for a, b in zip(
                    (pairs // n_words).tolist(), (pairs % n_words).tolist()
                )
            ),
            dtype=np.int64,
            count=pairs.shape[0],
        )
        cols[:, context] = (table % n_features)[inverse]
    return cols


def _binary_pattern(cols):
    """CSR (indptr, indices) of the distinct columns of each row of cols."""
    cols = np.sort(cols, axis=1)
    first = np.ones(cols.shape, dtype=bool)
    first[:, 1:] = cols[:, 1:] != cols[:, :-1]
    indptr = np.zeros(cols.shape[0] + 1, dtype=np.int64)
    np.cumsum(first.sum(axis=1), out=indptr[1:])
    # Row-major boolean indexing keeps each row's columns sorted.
    return indptr, cols[first]


def _token_rows(source, n_features=2**16, context=3):
    """Words of one source text and the binary features of each position.

    The single-file path of :func:`make_python_tokens`, for testing: row i
    of the pattern is the context that predicts ``words[i]``.

    Returns
    -------
    words : list of str
    indptr, indices : ndarray
        CSR pattern of shape (len(words), n_features), values all one.
    """
    lines = iter(source.splitlines(keepends=True))
    words = _token_words(lambda: next(lines, ""))
    vocab = {_BOF: 0}
    ids = np.array(
        [vocab.setdefault(w, len(vocab)) for w in words], dtype=np.int32
    )
    cols = _hashed_features(
        ids, np.zeros(1, dtype=np.int64), list(vocab), n_features, context
    )
    return (words, *_binary_pattern(cols))


def _build_python_tokens(sources, is_test, n_classes, n_features, context):
    """Tokenize the sources into the arrays that make_python_tokens caches."""
    vocab = {_BOF: 0}
    ids, starts, file_is_test = [], [], []
    for (_, path), test in zip(sources, is_test):
        try:
            with tokenize.open(path) as f:
                words = _token_words(f.readline)
        # IndentationError is a SyntaxError; a bad coding cookie raises
        # SyntaxError from tokenize.open.
        except (SyntaxError, tokenize.TokenError, UnicodeDecodeError):
            continue
        starts.append(len(ids))
        file_is_test.append(test)
        ids.extend([vocab.setdefault(w, len(vocab)) for w in words])
    # int32 word ids (the stdlib has about 10**5 distinct words) halve every
    # per-token array of the feature hashing.
    ids = np.array(ids, dtype=np.int32)
    starts = np.array(starts, dtype=np.int64)
    words = list(vocab)
    del vocab
    lengths = np.diff(np.append(starts, ids.shape[0]))
    in_test = np.repeat(np.array(file_is_test, dtype=bool), lengths)

    counts = np.bincount(ids[~in_test], minlength=len(words))
    n_seen = int(np.count_nonzero(counts))
    if n_seen < n_classes:
        raise ValueError(
            f"n_classes={n_classes} is more than the {n_seen} distinct "
            "tokens of the training files"
        )
    # Only the words tied with the n_classes-th count or above can be
    # classes; sort those few by (count desc, word) in Python.
    cutoff = np.partition(counts, counts.shape[0] - n_classes)[
        counts.shape[0] - n_classes
    ]
    candidates = np.flatnonzero(counts >= cutoff).tolist()
    candidates.sort(key=lambda v: (-counts[v], words[v]))
    order = np.array(candidates[:n_classes], dtype=np.int64)
    rank = np.full(len(words), -1, dtype=np.int64)
    rank[order] = np.arange(n_classes)

    labels = rank[ids]
    cols = _hashed_features(ids, starts, words, n_features, context)
    arrays = {"classes": np.array([words[v] for v in order], dtype=str)}
    for split, side in (("train", ~in_test), ("test", in_test)):
        rows = side & (labels >= 0)
        indptr, indices = _binary_pattern(cols[rows])
        arrays[f"indptr_{split}"] = indptr
        arrays[f"indices_{split}"] = indices
        arrays[f"y_{split}"] = labels[rows]
    return arrays


def _python_tokens_cache_path(sources, data_home, params):
    digest = hashlib.sha256()
    for rel, path in sources:
        size = os.path.getsize(path)
        digest.update(f"{rel}\t{size}\n".encode("utf-8", "surrogateescape"))
    version = ".".join(map(str, sys.version_info[:3]))
    name = "-".join(
        [f"python{version}", digest.hexdigest()[:16]]
        + [f"{k}{v}" for k, v in params]
        + [f"v{_PYTHON_TOKENS_FORMAT}"]
    )
    folder = Path(get_data_home(data_home)) / _PYTHON_TOKENS_FOLDER
    return folder / f"{name}.npz"


def _save_atomically(path, arrays):
    path.parent.mkdir(parents=True, exist_ok=True)
    # A run killed while writing leaves a stray temporary file, never a
    # truncated cache under the final name.
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez_compressed(f, **arrays)
        os.replace(tmp, path)
    except BaseException:
        os.remove(tmp)
        raise



def make_python_tokens(
    n_classes=10000,
    *,
    n_features=2**16,
    context=3,
    test_size=0.2,
    dtype=np.float32,
    data_home=None,
    return_classes=False,
):
    """Next-token prediction on the running Python's standard library.

    A real problem with many classes that needs no download: each row is
    the hashed context of a token of a stdlib source file, its label the
    token. The classes are the ``n_classes`` most frequent tokens of the
    training files.

    **Tokens.** Every ``*.py`` file under ``sysconfig.get_paths()["stdlib"]``
    except inside ``site-packages`` and ``dist-packages`` folders, in the
    order of its posix path relative to that folder, goes through
    :func:`tokenize.generate_tokens`; a file that does not tokenize
    (SyntaxError, bad encoding, ...) is left out. Comments, blank-line NL,
    encoding and end-marker tokens are dropped. NEWLINE, INDENT and DEDENT
    become the words ``<NEWLINE>``, ``<INDENT>`` and ``<DEDENT>``; a number
    is ``<NUMBER>`` unless it is written ``0``, ``1`` or ``2``; a string
    literal of more than 20 characters (prefix and quotes included) is
    ``<STRING>``, a shorter one its exact source text; every other token
    (names, keywords, operators and, from Python 3.12, the parts of an
    f-string) is its exact text.

    **Split.** By file, so no source is in both: a file is a test file when
    ``murmurhash3_32(relative_path, seed=0, positive=True) % 1000`` is
    below ``round(1000 * test_size)``.

    **Classes.** The ``n_classes`` words most frequent in the training
    files, ties broken by the word (Python string order); label = rank, so
    class 0 is the most frequent. Every token of either split whose word is
    a class gives one row; the other tokens give none (they still serve as
    context).

    **Features.** For a token preceded by ``t[-1], t[-2], ...`` in its
    file (``<BOF>`` before the file's first token), binary indicators of
    the strings ``"-1=" + t[-1]``, ..., ``"-{context}=" + t[-context]`` and,
    when ``context >= 2``, the bigram ``"-2-1=" + t[-2] + " " + t[-1]``,
    each hashed to column ``murmurhash3_32(s, seed=0, positive=True) %
    n_features``. Strings hashed to the same column give one entry of 1.

    The first call tokenizes the whole stdlib (tens of seconds) and stores
    the result in ``get_data_home(data_home)/sksoftmax_python_tokens``;
    later calls with the same parameters read it back. The cache file's
    name holds the Python version, a hash of the stdlib's file names and
    sizes, ``n_classes``, ``n_features``, ``context`` and ``test_size`` in
    thousandths.

    Parameters
    ----------
    n_classes : int, default=10000
        Number of classes, at least 2 and at most the number of distinct
        words of the training files.
    n_features : int, default=2**16
        Number of hashed feature columns, in [1, 2**31 - 1].
    context : int, default=3
        Number of preceding tokens seen, at least 1.
    test_size : float in (0, 1), default=0.2
        Share of the files hashed to the test split (in thousandths, rounded;
        it must round to between 1 and 999).
    dtype : {np.float32, np.float64}, default=np.float32
        Dtype of the values of X_train and X_test.
    data_home : str or path-like, default=None
        Folder of the cache, as for scikit-learn's fetchers
        (``~/scikit_learn_data`` or ``$SCIKIT_LEARN_DATA`` by default).
    return_classes : bool, default=False
        Also return the word of each class.

    Returns
    -------
    X_train : scipy.sparse.csr_matrix of shape (n_train, n_features)
        Canonical CSR, int32 indices, all values 1, at most
        ``context + 1`` nonzeros per row.
    y_train : ndarray of shape (n_train,), dtype int64
        Class of each row, in [0, n_classes); every class occurs.
    X_test : scipy.sparse.csr_matrix of shape (n_test, n_features)
    y_test : ndarray of shape (n_test,), dtype int64
    classes : ndarray of shape (n_classes,), dtype str
        Only with ``return_classes``: the word of each class label.

    Raises
    ------
    TypeError
        When a numeric parameter has the wrong type.
    ValueError
        When a parameter is out of range, or when the training files hold
        fewer than ``n_classes`` distinct words (after tokenizing).

    Notes
    -----
    With the default parameters (CPython 3.11) the task has about 4.0
    million training rows and 0.8 million test rows, 4 nonzeros per row,
    every class in the training rows and about half of them in the test
    rows (rare words are mostly names local to a few files). The classes
    are steeply skewed: ``<NEWLINE>`` (class 0) alone is about a tenth of
    the rows, and the most frequent hundred classes hold about four
    fifths. Other Python versions tokenize a different standard library,
    so their rows differ. The first call peaks near 0.65 GB of memory;
    reading the cache back takes under a second.

    Examples
    --------
    The first call tokenizes the whole standard library (tens of seconds),
    too slow for a doctest, hence the skips:

    >>> from sksoftmax.datasets import make_python_tokens
    >>> X, y, X_test, y_test, classes = make_python_tokens(
    ...     1000, n_features=2**12, return_classes=True)  # doctest: +SKIP
    >>> X.shape[1], int(y.max()) < 1000  # doctest: +SKIP
    (4096, True)
    >>> classes[:3].tolist()  # doctest: +SKIP
    ['<NEWLINE>', '(', ')']
    """
    _check_int("n_classes", n_classes, 2)
    _check_int("n_features", n_features, 1, _INT32_MAX)
    _check_int("context", context, 1)
    if isinstance(test_size, bool) or not isinstance(test_size, numbers.Real):
        raise TypeError(f"test_size must be a float, got {test_size!r}")
    if not (0 < test_size < 1 and 0 < _test_thousandths(test_size) < 1000):
        raise ValueError(
            "test_size must be in (0, 1) and round to between 1 and 999 "
            f"thousandths, got {test_size}"
        )
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}")

    sources, is_test = _python_token_split(test_size)
    path = _python_tokens_cache_path(
        sources,
        data_home,
        [
            ("k", n_classes),
            ("f", n_features),
            ("c", context),
            ("t", _test_thousandths(test_size)),
        ],
    )
    if path.is_file():
        with np.load(path, allow_pickle=False) as npz:
            arrays = dict(npz)
    else:
        arrays = _build_python_tokens(
            sources, is_test, n_classes, n_features, context
        )
        _save_atomically(path, arrays)

    result = []
    for split in ("train", "test"):
        indptr = arrays[f"indptr_{split}"]
        X = sp.csr_matrix(
            (
                np.ones(indptr[-1], dtype=dtype),
                arrays[f"indices_{split}"],
                indptr,
            ),
            shape=(indptr.shape[0] - 1, n_features),
        )
        result += [_canonical_csr(X, dtype), arrays[f"y_{split}"]]
    if return_classes:
        result.append(arrays["classes"])
    return tuple(result)
