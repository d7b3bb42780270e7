"""Next-token prediction on installed third-party source, for the benchmarks.

``make_python_tokens`` builds its rows from the standard library, the
source of the two tokens sets the defaults were measured on. This builds
the same kind of rows (the same tokens, classes, hashed context features
and split by file) from the ``.py`` files of installed third-party
packages instead: code by other authors in other styles, a check of the
defaults on data nobody tuned on (the issue that asked for the front door
reported its figures on such a task). A file is a test file when
``murmurhash3_32(path relative to site-packages, seed=0) % 1000`` is below
``1000 * test_size``, as ``make_python_tokens`` splits the stdlib.

The rows depend on the installed versions of the packages; the benchmark
prints them beside its table.
"""

import importlib.metadata
import importlib.util
import os
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.utils import murmurhash3_32


class PackageMissing(Exception):
    """A package the set is built from is not installed."""


def package_sources(packages):
    """(posix path relative to the packages' parent folder, path) of every
    ``.py`` file of the given top-level packages, sorted."""
    sources = []
    for name in packages:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            raise PackageMissing(f"package {name!r} is not installed")
        for folder in spec.submodule_search_locations:
            root = Path(folder).parent
            for dirpath, _, filenames in os.walk(folder):
                for filename in filenames:
                    if filename.endswith(".py"):
                        path = Path(dirpath) / filename
                        sources.append(
                            (path.relative_to(root).as_posix(), str(path))
                        )
    sources.sort()
    return sources


def package_versions(packages):
    """'name version' of each package, for the benchmark's header."""
    out = []
    for name in packages:
        try:
            out.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            out.append(f"{name} (version unknown)")
    return ", ".join(out)


def thirdparty_tokens(packages, n_classes, *, test_size=0.2,
                      n_features=2**16, context=3, dtype=np.float32):
    """X_train, y_train, X_test, y_test of next-token prediction on the
    packages' source (``make_python_tokens``' rows, other source).

    Raises PackageMissing when a package is not installed.
    """
    from sksoftmax.datasets._python_tokens import _build_python_tokens

    sources = package_sources(packages)
    threshold = round(1000 * test_size)
    is_test = np.array(
        [
            murmurhash3_32(rel, seed=0, positive=True) % 1000 < threshold
            for rel, _ in sources
        ],
        dtype=bool,
    )
    arrays = _build_python_tokens(
        sources, is_test, n_classes, n_features, context
    )
    out = []
    for split in ("train", "test"):
        indptr = arrays[f"indptr_{split}"]
        indices = arrays[f"indices_{split}"]
        X = sp.csr_matrix(
            (np.ones(indices.shape[0], dtype=dtype), indices, indptr),
            shape=(indptr.shape[0] - 1, n_features),
        )
        out += [X, arrays[f"y_{split}"].astype(np.int64)]
    return tuple(out)
