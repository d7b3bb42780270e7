"""The published multi-label data sets: downloaded once, checked,
cached, read by the papers' protocol."""

import numbers
import warnings
from pathlib import Path
from typing import NamedTuple

import numpy as np
from sklearn.datasets import (
    get_data_home,
)

from .. import _fetch
from .._fetch import RemoteFile as _RemoteFile
from ._loaders import _check_int, load_svmlight_pair

# Mulan's own copies of the files (github.com/tsoumakas/mulan, folder
# data/multi-label: the repository of the library that first distributed
# Bibtex, Delicious and Corel5k as files), at a fixed commit so that each
# URL always serves the bytes whose SHA-256 is pinned below (taken from the
# files of that commit; they have not changed since they were added in
# August 2016). Converted, Mulan's Bibtex is byte for byte the text of the
# project's ../shared/data files.
#
# A private attribute, not an environment variable: only the tests change
# it, monkeypatched together with the checksums (their local server serves
# ARFF files written from ../shared/data, not Mulan's bytes), which a URL
# variable alone could not do; users without network place the files by
# hand instead (see the fetchers' Notes).
_MULAN_URL = (
    "https://raw.githubusercontent.com/tsoumakas/mulan/"
    "43f6389095ad71984264db4387a8074b22bc7d4a/data/multi-label/"
)
# Under get_data_home(): <name>_train.svm.gz and <name>_test.svm.gz, the
# layout and format of the project's ../shared/data.
_MULTILABEL_FOLDER = "sksoftmax_multilabel"


class _MultilabelSet(NamedTuple):
    n_features: int
    n_labels: int
    train: _RemoteFile
    test: _RemoteFile


_MULTILABEL_SETS = {
    "bibtex": _MultilabelSet(
        1836,
        159,
        _RemoteFile(
            "bibtex-train.arff",
            "bibtex/bibtex-train.arff",
            "8dcc9de6e0b2cebaec8c1f4fac78431adeeb73cfd3ab879b530a66d366e59174",
        ),
        _RemoteFile(
            "bibtex-test.arff",
            "bibtex/bibtex-test.arff",
            "9b03329cde64d3f994bdf7fbbac3f3b10fe185c311cb9ae725475f59c7f3f922",
        ),
    ),
    "delicious": _MultilabelSet(
        500,
        983,
        _RemoteFile(
            "delicious-train.arff",
            "delicious/delicious-train.arff",
            "030186cdb542ebdd32052fcdbb1ebe30115b3a22518c1b4b198c45eb827aebe1",
        ),
        _RemoteFile(
            "delicious-test.arff",
            "delicious/delicious-test.arff",
            "2dfb01723a819914b0ca83361177ed413ce3f2169851d9f228d4692915d63944",
        ),
    ),
    "corel5k": _MultilabelSet(
        499,
        374,
        _RemoteFile(
            "Corel5k-train-sparse.arff",
            "corel5k/Corel5k-train-sparse.arff",
            "19eb253c447144bea74ffa86b4731a56022addae2ba7d0aab72ad07fdc02e9b3",
        ),
        _RemoteFile(
            "Corel5k-test-sparse.arff",
            "corel5k/Corel5k-test-sparse.arff",
            "e8f8e9cd052c43ba7bdfdf99d242f461fc8c2a03163466d921e576887b51d8a7",
        ),
    ),
}


def _published_file(
    remote,
    folder,
    *,
    download_if_missing,
    n_retries,
    delay,
    not_found,
    offline_hint,
):
    """Path of a verified published file in folder, downloaded if needed."""
    path = folder / remote.filename
    url = _MULAN_URL + remote.path
    if path.is_file():
        actual = _fetch.sha256(path)
        if actual == remote.sha256:
            return path
        message = (
            f"{path} has SHA-256 {actual}, expected {remote.sha256} (the "
            f"file published at {url})"
        )
        if not download_if_missing:
            raise OSError(message + "; download_if_missing is False.")
        warnings.warn(message + ": downloading it again.", stacklevel=4)
    elif not download_if_missing:
        raise OSError(
            f"Data not found and `download_if_missing` is False: {not_found}"
        )
    folder.mkdir(parents=True, exist_ok=True)
    return _fetch.download(
        remote,
        url,
        folder,
        n_retries=n_retries,
        delay=delay,
        offline_hint=offline_hint,
    )


def _fetch_first_label(
    name, data_home, download_if_missing, normalize, dtype, n_retries, delay
):
    """The cached svmlight pair of a published set, through the protocol."""
    _check_int("n_retries", n_retries, 0)
    if isinstance(delay, bool) or not isinstance(delay, numbers.Real):
        raise TypeError(f"delay must be a number, got {delay!r}")
    if not delay >= 0:
        raise ValueError(f"delay must be >= 0, got {delay}")
    spec = _MULTILABEL_SETS[name]
    folder = Path(get_data_home(data_home)) / _MULTILABEL_FOLDER
    remotes = (spec.train, spec.test)
    published = " and ".join(r.filename for r in remotes)
    converted = [f"{name}_train.svm.gz", f"{name}_test.svm.gz"]
    converted_names = " and ".join(converted)
    not_found = (
        f"{folder} holds neither the converted files {converted_names} nor "
        f"the published files {published}."
    )
    offline_hint = (
        "Without internet access, download "
        + " and ".join(
            f"{_MULAN_URL + r.path} (SHA-256 {r.sha256})" for r in remotes
        )
        + f" on another machine and place them in {folder} as {published}, "
        f"or place the converted files {converted_names} there; then call "
        f"fetch_{name} again (its data_home argument, or the "
        "SCIKIT_LEARN_DATA environment variable, chooses the folder)."
    )
    paths = []
    for remote, target in zip(remotes, converted):
        path = folder / target
        if not path.is_file():
            source = _published_file(
                remote,
                folder,
                download_if_missing=download_if_missing,
                n_retries=n_retries,
                delay=delay,
                not_found=not_found,
                offline_hint=offline_hint,
            )
            try:
                _fetch.arff_to_svmlight(
                    source, path, spec.n_features, spec.n_labels
                )
            except FileNotFoundError:
                # another process fetching at the same time converted and
                # deleted it first
                if not path.is_file():
                    raise
            # The converted file is the cache; the published one is
            # deleted, as scikit-learn's fetchers delete their archives.
            source.unlink(missing_ok=True)
        paths.append(path)
    return load_svmlight_pair(
        *paths, n_features=spec.n_features, normalize=normalize, dtype=dtype
    )


def fetch_bibtex(
    *,
    data_home=None,
    download_if_missing=True,
    normalize=True,
    dtype=np.float64,
    n_retries=3,
    delay=1.0,
):
    """Load Bibtex (1,836 features, 159 labels) as a multi-class problem.

    Bibtex (Katakis, Tsoumakas and Vlahavas, ECML/PKDD 2008 Discovery
    Challenge) tags BibSonomy entries from a binary bag of words. The
    published training and test files are downloaded once and cached;
    :func:`load_svmlight_pair` then applies the papers' protocol (Fagan &
    Iyengar 2018, Sec. 4.1; Ruiz et al. 2018, Sec. 4.2): the first
    (lowest-index) label of each row is its class, rows with no label or
    no nonzero feature are dropped (none in Bibtex).

    Parameters
    ----------
    data_home : str or path-like, default=None
        Folder of the downloads and the cache, as for scikit-learn's
        fetchers (``~/scikit_learn_data``, or ``$SCIKIT_LEARN_DATA`` when
        that variable is set); the files go to its ``sksoftmax_multilabel``
        subfolder.
    download_if_missing : bool, default=True
        If False, raise an OSError when the data are not in the cache
        instead of downloading them.
    normalize : bool, default=True
        Scale each kept row to unit L2 norm (Fagan & Iyengar's protocol);
        False keeps the binary features (Ruiz et al.).
    dtype : {np.float64, np.float32}, default=np.float64
        Dtype of the values of X_train and X_test.
    n_retries : int, default=3
        Number of retries when a download fails on a network error.
    delay : float, default=1.0
        Seconds between those retries.

    Returns
    -------
    X_train : scipy.sparse.csr_matrix of shape (4880, 1836)
        Canonical CSR, int32 indices.
    y_train : ndarray of shape (4880,), dtype int64
        146 distinct classes.
    X_test : scipy.sparse.csr_matrix of shape (2515, 1836)
    y_test : ndarray of shape (2515,), dtype int64
        145 distinct classes, 2 of them absent from y_train.

    Raises
    ------
    OSError
        When a download fails (the message names the URL and the file to
        place by hand), when a published file's SHA-256 is not the pinned
        one (the message gives both; nothing is kept), or when the data are
        not cached and ``download_if_missing`` is False.

    See Also
    --------
    fetch_delicious : 500 features, 983 labels, same source.
    fetch_corel5k : 499 features, 374 labels, same source.
    load_svmlight_pair : The protocol on any train and test svmlight files.

    Notes
    -----
    The published files are Mulan's sparse ARFF files ``bibtex-train.arff``
    (2,292,961 bytes) and ``bibtex-test.arff`` (1,215,637 bytes), from
    the Mulan repository on GitHub (``tsoumakas/mulan``, folder
    ``data/multi-label/bibtex``) at a fixed commit. The papers took Bibtex
    from the Extreme Classification Repository (the same numbers of rows)
    and report 147 and 148 training classes where this gives 146,
    probably from a different order of the labels.

    The first call downloads the two files to
    ``get_data_home(data_home)/sksoftmax_multilabel``, each to a temporary file
    renamed only once its SHA-256 is the one pinned in the package, converts
    them to gzipped svmlight files (``l1,l2,... f:v ...``, zero-based indices,
    the format of the project's own data folder), ``bibtex_train.svm.gz`` and
    ``bibtex_test.svm.gz`` (0.7 MB), and deletes them; later calls read the
    converted files without the network. To work offline, place in that folder
    either the published files under their names above (they are checked and
    converted as if just downloaded) or the converted files.

    Examples
    --------
    The first call downloads 3.5 MB, hence the skips:

    >>> from sksoftmax.datasets import fetch_bibtex
    >>> X, y, X_test, y_test = fetch_bibtex()  # doctest: +SKIP
    >>> X.shape, len(set(y))  # doctest: +SKIP
    ((4880, 1836), 146)
    """
    return _fetch_first_label(
        "bibtex",
        data_home,
        download_if_missing,
        normalize,
        dtype,
        n_retries,
        delay,
    )


def fetch_delicious(
    *,
    data_home=None,
    download_if_missing=True,
    normalize=True,
    dtype=np.float64,
    n_retries=3,
    delay=1.0,
):
    """Load Delicious (500 features, 983 labels) as a multi-class problem.

    Delicious (Tsoumakas, Katakis and Vlahavas, ECML/PKDD 2008 workshop
    MMD'08) tags web pages bookmarked on del.icio.us from a binary bag of
    words; Fagan & Iyengar (2018, Table 1) use it. The published training
    and test files are downloaded once and cached, then read as
    :func:`fetch_bibtex` reads Bibtex: the first label of each row is its
    class, and the 10 training and 4 test rows with no label are dropped.

    Parameters
    ----------
    data_home : str or path-like, default=None
        Folder of the downloads and the cache, as for scikit-learn's
        fetchers (``~/scikit_learn_data``, or ``$SCIKIT_LEARN_DATA`` when
        that variable is set); the files go to its ``sksoftmax_multilabel``
        subfolder.
    download_if_missing : bool, default=True
        If False, raise an OSError when the data are not in the cache
        instead of downloading them.
    normalize : bool, default=True
        Scale each kept row to unit L2 norm (Fagan & Iyengar's protocol);
        False keeps the binary features (Ruiz et al.).
    dtype : {np.float64, np.float32}, default=np.float64
        Dtype of the values of X_train and X_test.
    n_retries : int, default=3
        Number of retries when a download fails on a network error.
    delay : float, default=1.0
        Seconds between those retries.

    Returns
    -------
    X_train : scipy.sparse.csr_matrix of shape (12910, 500)
        Canonical CSR, int32 indices.
    y_train : ndarray of shape (12910,), dtype int64
        352 distinct classes (the paper reports 350).
    X_test : scipy.sparse.csr_matrix of shape (3181, 500)
    y_test : ndarray of shape (3181,), dtype int64
        241 distinct classes, 19 of them absent from y_train.

    Raises
    ------
    OSError
        When a download fails (the message names the URL and the file to
        place by hand), when a published file's SHA-256 is not the pinned
        one (the message gives both; nothing is kept), or when the data are
        not cached and ``download_if_missing`` is False.

    See Also
    --------
    fetch_bibtex : The same protocol on Bibtex.

    Notes
    -----
    The published files are Mulan's sparse ARFF files
    ``delicious-train.arff`` (3,056,590 bytes) and ``delicious-test.arff``
    (757,565 bytes), from the Mulan repository on GitHub
    (``tsoumakas/mulan``, folder ``data/multi-label/delicious``) at a
    fixed commit.

    The first call downloads the two files to
    ``get_data_home(data_home)/sksoftmax_multilabel``, each to a temporary file
    renamed only once its SHA-256 is the one pinned in the package, converts
    them to gzipped svmlight files (``l1,l2,... f:v ...``, zero-based indices,
    the format of the project's own data folder), ``delicious_train.svm.gz``
    and ``delicious_test.svm.gz``, and deletes them; later calls read the
    converted files without the network. To work offline, place in that folder
    either the published files under their names above (they are checked and
    converted as if just downloaded) or the converted files.

    Examples
    --------
    The first call downloads 3.8 MB, hence the skips:

    >>> from sksoftmax.datasets import fetch_delicious
    >>> X, y, X_test, y_test = fetch_delicious()  # doctest: +SKIP
    >>> X.shape, len(set(y))  # doctest: +SKIP
    ((12910, 500), 352)
    """
    return _fetch_first_label(
        "delicious",
        data_home,
        download_if_missing,
        normalize,
        dtype,
        n_retries,
        delay,
    )


def fetch_corel5k(
    *,
    data_home=None,
    download_if_missing=True,
    normalize=True,
    dtype=np.float64,
    n_retries=3,
    delay=1.0,
):
    """Load Corel5k (499 features, 374 labels) as a multi-class problem.

    Corel5k (Duygulu, Barnard, de Freitas and Forsyth, ECCV 2002)
    annotates 5,000 Corel images with words; each image is a binary vector
    of 499 clusters of region features. The published training and test
    files are downloaded once and cached, then read as :func:`fetch_bibtex`
    reads Bibtex: the first label of each row is its class (no row is
    dropped).

    Parameters
    ----------
    data_home : str or path-like, default=None
        Folder of the downloads and the cache, as for scikit-learn's
        fetchers (``~/scikit_learn_data``, or ``$SCIKIT_LEARN_DATA`` when
        that variable is set); the files go to its ``sksoftmax_multilabel``
        subfolder.
    download_if_missing : bool, default=True
        If False, raise an OSError when the data are not in the cache
        instead of downloading them.
    normalize : bool, default=True
        Scale each kept row to unit L2 norm (Fagan & Iyengar's protocol);
        False keeps the binary features (Ruiz et al.).
    dtype : {np.float64, np.float32}, default=np.float64
        Dtype of the values of X_train and X_test.
    n_retries : int, default=3
        Number of retries when a download fails on a network error.
    delay : float, default=1.0
        Seconds between those retries.

    Returns
    -------
    X_train : scipy.sparse.csr_matrix of shape (4500, 499)
        Canonical CSR, int32 indices.
    y_train : ndarray of shape (4500,), dtype int64
        116 distinct classes.
    X_test : scipy.sparse.csr_matrix of shape (500, 499)
    y_test : ndarray of shape (500,), dtype int64
        53 distinct classes, 5 of them absent from y_train.

    Raises
    ------
    OSError
        When a download fails (the message names the URL and the file to
        place by hand), when a published file's SHA-256 is not the pinned
        one (the message gives both; nothing is kept), or when the data are
        not cached and ``download_if_missing`` is False.

    See Also
    --------
    fetch_bibtex : The same protocol on Bibtex.

    Notes
    -----
    The published files are Mulan's sparse ARFF files
    ``Corel5k-train-sparse.arff`` (339,535 bytes) and
    ``Corel5k-test-sparse.arff`` (60,876 bytes), from the Mulan repository
    on GitHub (``tsoumakas/mulan``, folder ``data/multi-label/corel5k``) at
    a fixed commit.

    The first call downloads the two files to
    ``get_data_home(data_home)/sksoftmax_multilabel``, each to a temporary file
    renamed only once its SHA-256 is the one pinned in the package, converts
    them to gzipped svmlight files (``l1,l2,... f:v ...``, zero-based indices,
    the format of the project's own data folder), ``corel5k_train.svm.gz`` and
    ``corel5k_test.svm.gz``, and deletes them; later calls read the converted
    files without the network. To work offline, place in that folder either the
    published files under their names above (they are checked and converted as
    if just downloaded) or the converted files.

    Examples
    --------
    The first call downloads 0.4 MB, hence the skips:

    >>> from sksoftmax.datasets import fetch_corel5k
    >>> X, y, X_test, y_test = fetch_corel5k()  # doctest: +SKIP
    >>> X.shape, len(set(y))  # doctest: +SKIP
    ((4500, 499), 116)
    """
    return _fetch_first_label(
        "corel5k",
        data_home,
        download_if_missing,
        normalize,
        dtype,
        n_retries,
        delay,
    )
