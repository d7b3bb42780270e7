"""The project's real data for the tests, read without the network.

The data live in ``../shared/data`` beside the checkout (or in the folder
named by ``$SKSOFTMAX_SHARED_DATA``): gzipped multi-label svmlight files,
the very format and names that :func:`sksoftmax.datasets.fetch_bibtex`
caches. A test copies them into a temporary data home and calls the fetcher
with ``download_if_missing=False``, so that it reads them as a cache.
"""

import os
import shutil
from pathlib import Path

import pytest

from sksoftmax import datasets
from sksoftmax.datasets import _fetchers

BIBTEX_FILES = ("bibtex_train.svm.gz", "bibtex_test.svm.gz")


def shared_data_dir():
    """The folder of the project's real data, or None when absent.

    ``$SKSOFTMAX_SHARED_DATA`` first, then ``../shared/data`` beside the
    checkout; only an existing folder counts.
    """
    candidates = []
    env = os.environ.get("SKSOFTMAX_SHARED_DATA")
    if env:
        candidates.append(Path(env).expanduser())
    # <checkout>/tests/_data.py -> <checkout>/../shared/data
    candidates.append(Path(__file__).resolve().parents[2] / "shared" / "data")
    for path in candidates:
        if path.is_dir():
            return path
    return None


def shared_file(name):
    """Path of one shared file; skips the test when it is absent."""
    folder = shared_data_dir()
    if folder is None or not (folder / name).is_file():
        pytest.skip(f"{name} is not in ../shared/data")
    return folder / name


def shared_data_home(data_home, names=BIBTEX_FILES):
    """Copy shared files where the fetchers look for their cache.

    Returns ``data_home``, to pass as the fetchers' ``data_home``; skips
    the test when a file is absent.
    """
    folder = Path(data_home) / _fetchers._MULTILABEL_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copyfile(shared_file(name), folder / name)
    return Path(data_home)


def fetch_shared_bibtex(data_home, **params):
    """fetch_bibtex on the shared files, offline."""
    return datasets.fetch_bibtex(
        data_home=shared_data_home(data_home),
        download_if_missing=False,
        **params,
    )
