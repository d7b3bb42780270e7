"""Default settings: does ``SoftmaxClassifier()`` end near the best tuned fit?

For each data set of a registry of different regimes (few to 100,000
classes, sparse and dense, few or many rows per class, real and planted),
the suite measures:

- ``default_seeds`` (on request): the default with ``random_state`` 0 ..
  ``--seeds`` - 1, and the spread of its test log-loss (mean, sd, range):
  the noise of the fit's own randomness, against which a change of the
  default is judged on a set.
- ``default``: ``sksoftmax.SoftmaxClassifier(random_state=0)``, nothing
  else set: test log-loss and top-1 accuracy of the fitted model, CPU
  seconds of ``fit`` (``time.process_time``; the time spent in the epoch
  callback that evaluates the model is subtracted), peak memory of the fit
  (the rise of the process's peak RSS over its RSS before ``fit``: Linux's
  VmHWM, reset through ``/proc/self/clear_refs`` before the fit and after
  each evaluation, so that the evaluations' own arrays do not count; on
  another system ``ru_maxrss`` minus its value before, which misses what
  fits under an earlier peak), the solver it chose (``solver_``) and its
  test log-loss after every epoch against cumulative fit CPU seconds
  (through the private hook ``clf._epoch_callback = fn``, called with the
  model after each epoch).
- ``exact``, ``exact_constant``, ``umax``, ``implicit``, ``scent``,
  ``ar``, ``bound``: each solver's best over a grid of step x L2 penalty.
  The experts are UMaxSoftmaxClassifier, ImplicitSGDClassifier,
  SCENTClassifier, ARSoftmaxClassifier and StochasticBoundClassifier;
  ``exact`` is ``SoftmaxClassifier(solver='exact', early_stopping=False)``
  with its per-feature AdaGrad steps, ``exact_constant`` the same with one
  constant step for every weight (the step rule its race can keep; set
  through the private ``_exact_step_rule``). A grid point
  is a ``partial_fit`` loop (one pass per call, ``classes=`` on the first)
  of up to ``--max-epochs`` epochs, the exact test log-loss recorded after
  every epoch; the point's value is its best epoch (oracle early stopping),
  the solver's value its best point. The steps are ``eta0 = auto x
  factor``, auto being the estimator's own ``eta0='auto'`` value on these
  rows: the point (first alpha, factor 1) starts with ``eta0='auto'`` and,
  after its first call, is pinned to the ``eta0_`` that call chose
  (``set_params(eta0=eta0_)``: later calls would otherwise re-derive it
  from all rows seen so far, which at each call grows by the training
  set); every other point uses ``auto x factor`` as a float from the
  start. Grids (``--grid``): ``small`` factors {1/3, 1, 3} x alpha {0,
  1e-5}; ``full`` {1/10, 1/3, 1, 3, 10} x {0, 1e-6, 1e-5, 1e-4}; or
  ``--eta-factors`` and ``--alphas``. A point that diverges keeps the
  epochs before; a point stops after ``--patience`` epochs without a new
  best (0: never). A solver is skipped on a set (one 'skipped' record with
  the reason) when the estimator refuses it or estimates its epoch beyond
  the package's own budget: StochasticBound warns past about a minute per
  epoch, which the suite turns into a skip before the epoch runs.
- ``logreg``: ``LogisticRegression(solver='lbfgs', C=C, max_iter=
  --lr-max-iter)`` for each C of ``--lr-Cs`` (0.1 ... 10; each C is a
  row), on one BLAS thread, when its memory, estimated as 8 bytes x (4 K
  (D + 1) + 3 n K) (weights, gradient and L-BFGS history; the n x K
  scores, probabilities and gradient), is below ``--lr-max-gb`` (4) and a
  3-iteration probe fit says ``--lr-max-iter`` (500) iterations fit in
  ``--lr-budget`` CPU seconds; otherwise one 'skipped' record with the
  estimate. While the best C is at an end of the grid, C x 3 (or / 3)
  is tried too, at most ``--lr-extend`` (2) more fits.
- ``sgd``: ``SGDClassifier(loss='log_loss', random_state=0)``, defaults
  (one-vs-rest; log-loss of scikit-learn's normalised OvR probabilities),
  when K x D <= ``--sgd-max-params`` and one binary epoch x K x 15 epochs
  fits in ``--sgd-budget`` CPU seconds.
- ``torch`` (when importable): exact softmax, ``nn.EmbeddingBag(D, K,
  mode='sum', sparse=True)`` fed the CSR rows with ``per_sample_weights``,
  plus a bias; SparseAdam on the embedding, Adam on the bias; lr
  ``--torch-lrs`` (1e-2), batches of 512, one thread
  (``torch.set_num_threads(1)``); weights start at zero and the bias at
  the smoothed log class prior (the loop of bench_large_k.py, reused). On
  dense sets a dense (D, K) weight and Adam on both. Test log-loss and
  cumulative CPU seconds after each of ``--torch-epochs`` epochs (default
  ``--max-epochs``), stopping after the epoch that passes
  ``--torch-budget`` CPU seconds; its value is its best epoch.

Grid notes: the experts share ``eta0`` and ``alpha`` but not their
meaning. StochasticBound requires alpha > 0 (its alpha = 0 points are
recorded 'invalid', and its first positive alpha fixes auto); for A&R
(learning_rate 'auto' = 'adagrad') eta0 is rho_0, a per-coordinate scale,
not a step; SCENT's and A&R's 'auto' follow all rows seen by
``partial_fit`` (their horizon factor sqrt(50 K / n) shrinks at every
call: on digits SCENT's went 9.74, 6.89, 5.62 over three calls, where
``fit`` keeps 9.74), hence the pinning above; U-max's and Implicit's
'auto' runs a pilot that depends on alpha (U-max on digits: 0.114 at
alpha 0, 0.038 at 1e-5), so the factors are relative to the 'auto' of the
first alpha, not of each.

Every log-loss but the default's is computed by one exact evaluator
(``bench_large_k.evaluate``: all K classes, blocks of test rows, per-row
loss clipped at -log 1e-12); the default's by its own ``log_loss``. All
training labels are remapped to 0..K-1 (K: classes in the training rows)
and test rows of classes absent from training are dropped (counted in the
header); where a set has more test rows than its cap (20,000; 5,000 at
100,000 classes; ``--test-rows``) every method is evaluated on the same
seeded random subsample. CPU seconds exclude evaluation everywhere.

Data sets (``--sets a,b``; ``--shapes`` prints their sizes and build times)
---------------------------------------------------------------------------
``bibtex`` (fetch_bibtex, unit rows; ../shared/data, else the cache or a
download, else skipped),
``tokens_small`` / ``tokens`` (make_python_tokens, 2,000 / 10,000
classes, millions of rows), ``tokens_thirdparty`` (the same rows from
the source of four installed third-party packages, 8,000 classes, about
90 rows per class, ``_thirdparty_tokens.py``; skipped when one is
missing), ``docstrings_thirdparty`` (docstrings of twenty installed
third-party packages -> their dotted module, about 1,800 classes,
``_thirdparty_docstrings.py``), ``docstrings`` (stdlib docstrings -> module,
TF-IDF, ``_stdlib_docstrings.py``), planted softmax sets of
``make_softmax_classification`` (80/20 seeded split, float32):
``synth_1k_zipf_sparse`` (K = 1,000, Zipf 1 prior, ~20 rows per class),
``synth_1k_flat_dense`` (K = 1,000, flat, 100 rows per class, 50 count
features stored dense, ~45% of them nonzero), ``synth_20k_zipf``
(bench_large_k.py's zipf20k: K = 20,000, Zipf 0.5, ~4 rows per class),
``synth_20k_flat`` (20 rows per class), ``synth_100k_zipf`` (K =
100,000, Zipf 0.5, 200,000 training rows, ~78,000 classes in them),
``synth_100_sparse_many`` (K = 100, 1,000 rows per class, 20,000 sparse
features), two sets beyond the exact solver's first cost bound (about
1e6 and 1.5e6 multiply-adds a row, where 5e5 was the bound):
``synth_50k_wide`` (K = 50,000, Zipf 0.5, ~42,000 classes in 120,000
training rows, 22 nonzeros a row) and ``synth_30k_flat_wide`` (K =
30,000, flat, ~5 rows per class, 2,000 features, ~49 nonzeros a row);
``synth_50k_mid`` (K = 50,000, Zipf 0.5, ~45,000 classes in 160,000
training rows, 2,000 features, 10 nonzeros a row: 5.1e5 multiply-adds
a row, built on 2026-11-27 after the bound of 7.2e5 was fitted, to
check it on a set it was not fitted on); ``digits`` (load_digits / 16,
10 classes, 64 dense features) and ``digits_raw`` (the same unscaled,
0..16: a user who did not scale).
The sizes, nonzeros and build times are in ``--shapes``'s table.

Outputs (``--out-dir``, default benchmarks/results)
--------------------------------------------------
``defaults.jsonl``: one JSON line per (set, method, config), appended as
each finishes (a crash loses nothing; runs accumulate across invocations;
reports keep the newest line of each (set, method, config)), plus one
'dataset' line per set and invocation. ``defaults_<set>.md`` (tables),
``defaults_<set>.png`` (test log-loss against CPU seconds, one curve per
method: each solver's best grid point, PyTorch, the default in bold;
LogisticRegression's C and SGDClassifier as points) and
``defaults_summary.md``: per set, the default's test log-loss, the best
tuned value (grid solvers, exact, LogisticRegression, PyTorch), the
excess ``default / best - 1``, CPU seconds of the default, of
LogisticRegression's best fit and of PyTorch to its best epoch, and PASS
/ FAIL against ``--tolerance`` (2%).

Usage
-----
Run from this folder, so that ``import sksoftmax`` finds the installed
(compiled) package and not the checkout's sources::

    cd benchmarks
    python bench_defaults.py                       # everything (days)
    python bench_defaults.py --sets digits,bibtex --grid small \\
        --max-epochs 3 --out-dir /tmp/defaults     # a smoke test
    python bench_defaults.py --sets tokens --methods default,umax
    python bench_defaults.py --sets bibtex,docstrings --methods default_seeds
    python bench_defaults.py --summary-only        # tables, plots again
    python bench_defaults.py --shapes              # sizes of every set
    python bench_defaults.py --leave-one-out sweep.jsonl

The full suite, one set (or one method) per invocation so that a session
never holds more than one long job; results accumulate in the JSON lines::

    for s in digits digits_raw bibtex docstrings synth_1k_zipf_sparse \\
             synth_1k_flat_dense synth_100_sparse_many synth_20k_zipf \\
             synth_20k_flat synth_100k_zipf synth_50k_wide synth_50k_mid \\
             synth_30k_flat_wide tokens_small tokens tokens_thirdparty \\
             docstrings_thirdparty; do
        python bench_defaults.py --sets $s --grid full --max-epochs 20
    done
    python bench_defaults.py --summary-only

``--n-jobs N`` runs the grid points of a solver (after the first, which
fixes auto) in N worker processes; each fit is on one thread and its CPU
seconds are its own process's. ``--leave-one-out FILE`` reads JSON lines
``{"set": ..., "value": ..., "log_loss": ...}`` (also accepted: "dataset",
"constant" / "config", "test_log_loss"), one per set and value of a
package constant from a sweep, and prints for each set the value chosen on
the other sets (least mean relative excess over each set's best) and the
excess it gives on the left-out set. With ``--within F`` (a cost knob such
as ``tol``, read with each record's ``cpu_s``) the value chosen is the
cheapest whose excess stays within F on every other set.

Optional dependencies: matplotlib (PNG plots), torch (``pip install
torch==2.13.0``, a CPU build; its method is skipped without it).
"""

import argparse
import importlib.util
import json
import math
import os
import platform
import resource
import sys
import time
import traceback
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from _harness import _peak_rss_bytes, _reset_peak_rss
from bench_large_k import SYNTHETIC as LARGE_K_SYNTHETIC
from bench_large_k import (
    Clock,
    _torch_epoch,
    _torch_model,
    _version,
    evaluate,
    full_columns,
    log_prior,
)
from reproduce_fagan2018 import md_table

RESULTS = Path(__file__).resolve().parent / "results"
JSONL = "defaults.jsonl"
TRAIN_FRACTION = 0.8
DEFAULT_TEST_ROWS = 20_000
TORCH_BATCH = 512


class DatasetUnavailable(Exception):
    """A data set that cannot be built or found here."""


# ================================================================= data
@dataclass
class DataSet:
    """A registry entry: how to build a set and what to expect of it."""

    build: object  # () -> (X_train, y_train, X_test, y_test)
    description: str
    test_rows: int = DEFAULT_TEST_ROWS
    dense: bool = False
    expect: dict = field(default_factory=dict)  # n_features, max_classes...
    # the installed packages the rows are built from: their versions go
    # into the set's facts (``built_from``), as the rows depend on them
    packages: tuple = ()


def _split(X, y, seed=0, fraction=TRAIN_FRACTION):
    perm = np.random.default_rng(seed).permutation(X.shape[0])
    n = int(fraction * X.shape[0])
    return X[perm[:n]], y[perm[:n]], X[perm[n:]], y[perm[n:]]


def _bibtex():
    from _harness import load_bibtex

    try:
        return load_bibtex(normalize=True, dtype=np.float32)
    except OSError as exc:
        raise DatasetUnavailable(str(exc)) from exc


def _tokens(n_classes):
    def build():
        try:
            from sksoftmax.datasets import make_python_tokens
        except ImportError as exc:
            raise DatasetUnavailable(
                "sksoftmax.datasets.make_python_tokens is not in the "
                "installed sksoftmax"
            ) from exc
        return make_python_tokens(n_classes=n_classes, dtype=np.float32)

    return build


def _from_packages(build, packages, *args, **kwargs):
    """``build(packages, ...)``: a set built from installed third-party
    packages, unavailable when one is missing; prints their versions."""
    from _thirdparty_tokens import PackageMissing, package_versions

    try:
        data = build(packages, *args, **kwargs)
    except PackageMissing as exc:
        raise DatasetUnavailable(str(exc)) from exc
    print(f"  built from {package_versions(packages)}")
    return data


THIRDPARTY_PACKAGES = ("tornado", "docutils", "pydantic", "hypothesis")


def _thirdparty_tokens():
    from _thirdparty_tokens import thirdparty_tokens

    return _from_packages(thirdparty_tokens, THIRDPARTY_PACKAGES, 8_000)


DOCSTRING_PACKAGES = (
    "sympy", "networkx", "scipy", "matplotlib", "numba", "dask",
    "distributed", "IPython", "tornado", "docutils", "pydantic",
    "hypothesis", "sphinx", "setuptools", "pygments", "fontTools", "Cython",
    "libcst", "pyarrow", "mpmath",
)


def _thirdparty_docstrings():
    from _thirdparty_docstrings import thirdparty_docstrings_tfidf

    return _from_packages(
        thirdparty_docstrings_tfidf, DOCSTRING_PACKAGES, min_docs=5
    )


def _docstrings():
    from _stdlib_docstrings import docstrings_tfidf

    return docstrings_tfidf(test_size=0.25, random_state=0)


def _synthetic(dense=False, **spec):
    def build():
        from sksoftmax.datasets import make_softmax_classification

        X, y = make_softmax_classification(
            **spec, random_state=0, dtype=np.float32
        )
        if dense:
            X = X.toarray()
        return _split(X, y)

    return build


def _digits(scale):
    def build():
        from sklearn.datasets import load_digits
        from sklearn.model_selection import train_test_split

        X, y = load_digits(return_X_y=True)
        X = X / scale
        X_train, X_test, y_train, y_test = train_test_split(
            X, y, test_size=0.25, stratify=y, random_state=0
        )
        return X_train, y_train, X_test, y_test

    return build


SYNTH = {
    "synth_1k_zipf_sparse": dict(
        n_samples=25_000,
        n_features=10_000,
        n_classes=1_000,
        density=2e-3,
        class_exponent=1.0,
    ),
    "synth_1k_flat_dense": dict(
        n_samples=125_000,
        n_features=50,
        n_classes=1_000,
        density=1.0,
        class_exponent=0.0,
        background_exponent=0.0,  # uniform words: most counts nonzero
    ),
    "synth_20k_zipf": dict(LARGE_K_SYNTHETIC["zipf20k"]),
    "synth_20k_flat": dict(
        n_samples=500_000,
        n_features=10_000,
        n_classes=20_000,
        density=1e-3,
        class_exponent=0.0,
    ),
    "synth_100k_zipf": dict(
        n_samples=250_000,
        n_features=1_000,
        n_classes=100_000,
        density=7e-3,
        class_exponent=0.5,
    ),
    "synth_50k_wide": dict(
        n_samples=150_000,
        n_features=5_000,
        n_classes=50_000,
        density=8e-3,
        class_exponent=0.5,
    ),
    "synth_50k_mid": dict(
        n_samples=200_000,
        n_features=2_000,
        n_classes=50_000,
        density=7e-3,
        class_exponent=0.5,
    ),
    "synth_30k_flat_wide": dict(
        n_samples=200_000,
        n_features=2_000,
        n_classes=30_000,
        density=6e-2,
        class_exponent=0.0,
    ),
    "synth_100_sparse_many": dict(
        n_samples=125_000,
        n_features=20_000,
        n_classes=100,
        density=5e-4,
        class_exponent=0.0,
    ),
}


def _synth_entry(name, description, test_rows=DEFAULT_TEST_ROWS, dense=False):
    spec = SYNTH[name]
    n_train = int(TRAIN_FRACTION * spec["n_samples"])
    return DataSet(
        _synthetic(dense=dense, **spec),
        description
        + " (make_softmax_classification("
        + ", ".join(f"{k}={v}" for k, v in spec.items())
        + "), 80/20 split)",
        test_rows=test_rows,
        dense=dense,
        expect=dict(
            n_train=n_train,
            n_test=spec["n_samples"] - n_train,
            n_features=spec["n_features"],
            max_classes=spec["n_classes"],
        ),
    )


REGISTRY = {
    "bibtex": DataSet(
        _bibtex,
        "Bibtex, first label, unit L2 rows (real, small, sparse)",
        expect=dict(n_train=4880, n_test=2515, n_features=1836),
    ),
    "tokens_small": DataSet(
        _tokens(2_000),
        "stdlib next-token prediction, 2,000 classes (real, millions of "
        "rows, many rows per class, 4 binary features per row)",
        expect=dict(n_features=2**16, max_classes=2_000),
    ),
    "tokens": DataSet(
        _tokens(10_000),
        "stdlib next-token prediction, 10,000 classes (bench_large_k.py's)",
        expect=dict(n_features=2**16, max_classes=10_000),
    ),
    "tokens_thirdparty": DataSet(
        _thirdparty_tokens,
        "next-token prediction on third-party source (tornado, docutils, "
        "pydantic, hypothesis as installed), 8,000 classes (real, built "
        "after the defaults' constants were fixed, about 90 rows per class)",
        expect=dict(n_features=2**16, max_classes=8_000),
        packages=THIRDPARTY_PACKAGES,
    ),
    "docstrings_thirdparty": DataSet(
        _thirdparty_docstrings,
        "docstrings of twenty installed third-party packages -> their "
        "module, TF-IDF (real text, about 1,800 classes of 5 or more "
        "documents, built after the defaults' constants were fixed)",
        expect=dict(),
        packages=DOCSTRING_PACKAGES,
    ),
    "docstrings": DataSet(
        _docstrings,
        "stdlib docstrings -> module, TF-IDF (real text, few rows per "
        "feature, unit rows)",
        expect=dict(),
    ),
    "synth_1k_zipf_sparse": _synth_entry(
        "synth_1k_zipf_sparse", "K = 1,000, Zipf 1 prior, ~20 rows per class"
    ),
    "synth_1k_flat_dense": _synth_entry(
        "synth_1k_flat_dense",
        "K = 1,000, flat, 100 rows per class, dense counts",
        dense=True,
    ),
    "synth_20k_zipf": _synth_entry(
        "synth_20k_zipf", "K = 20,000, Zipf 0.5, ~4 rows per class"
    ),
    "synth_20k_flat": _synth_entry(
        "synth_20k_flat", "K = 20,000, flat, 20 rows per class"
    ),
    "synth_100k_zipf": _synth_entry(
        "synth_100k_zipf",
        "K = 100,000, Zipf 0.5, ~2 rows per class",
        test_rows=5_000,
    ),
    "synth_50k_wide": _synth_entry(
        "synth_50k_wide",
        "K = 50,000, Zipf 0.5, ~3 rows per class, 22 nonzeros a row",
        test_rows=5_000,
    ),
    "synth_50k_mid": _synth_entry(
        "synth_50k_mid",
        "K = 50,000, Zipf 0.5, ~4 rows per class, 10 nonzeros a row",
        test_rows=5_000,
    ),
    "synth_30k_flat_wide": _synth_entry(
        "synth_30k_flat_wide",
        "K = 30,000, flat, ~5 rows per class, 49 nonzeros a row",
        test_rows=5_000,
    ),
    "synth_100_sparse_many": _synth_entry(
        "synth_100_sparse_many",
        "K = 100, flat, 1,000 rows per class, sparse",
    ),
    "digits": DataSet(
        _digits(16.0),
        "load_digits / 16 (dense, 64 features, 10 classes), 75/25 split",
        dense=True,
        expect=dict(n_train=1347, n_test=450, n_features=64, max_classes=10),
    ),
    "digits_raw": DataSet(
        _digits(1.0),
        "load_digits unscaled, 0..16 (a user who did not scale)",
        dense=True,
        expect=dict(n_train=1347, n_test=450, n_features=64, max_classes=10),
    ),
}


def prepare(name, test_rows=None):
    """A registry set with labels 0..K-1, and the facts of its header.

    Returns
    -------
    data : dict
        ``X_train``, ``y_train``, ``X_test``, ``y_test``: CSR (or C
        ndarray for the dense sets), int64 labels in 0..K-1, test rows of
        training classes only, subsampled (seed 0) to the set's cap.
    facts : dict
    """
    entry = REGISTRY[name]
    start = time.perf_counter()
    X, y, X_test, y_test = entry.build()
    build_s = time.perf_counter() - start
    if entry.dense:
        X = np.ascontiguousarray(X.toarray() if sp.issparse(X) else X)
        X_test = np.ascontiguousarray(
            X_test.toarray() if sp.issparse(X_test) else X_test
        )
    else:
        X, X_test = sp.csr_matrix(X), sp.csr_matrix(X_test)
    classes, y = np.unique(y, return_inverse=True)
    pos = np.minimum(np.searchsorted(classes, y_test), classes.size - 1)
    seen = classes[pos] == y_test
    X_test, y_test = X_test[seen], pos[seen]
    n_seen = X_test.shape[0]
    cap = entry.test_rows if test_rows is None else test_rows
    if cap and n_seen > cap:
        keep = np.sort(np.random.default_rng(0).choice(n_seen, cap, False))
        X_test, y_test = X_test[keep], y_test[keep]
    n_classes = classes.size
    counts = np.bincount(y, minlength=n_classes)
    nnz = X.nnz if sp.issparse(X) else np.count_nonzero(X)
    sq = (
        np.asarray(X.multiply(X).sum(axis=1)).ravel()
        if sp.issparse(X)
        else np.einsum("ij,ij->i", X, X)
    )
    facts = dict(
        kind="dataset",
        set=name,
        description=entry.description,
        n_train=int(X.shape[0]),
        n_test=int(X_test.shape[0]),
        n_test_seen=int(n_seen),
        n_test_dropped=int((~seen).sum()),
        n_features=int(X.shape[1]),
        n_classes=int(n_classes),
        nnz_per_row=float(nnz / X.shape[0]),
        rows_per_class=float(X.shape[0] / n_classes),
        mean_sq_norm=float(sq.mean()),
        dense=bool(entry.dense),
        dtype=str(X.dtype),
        prior_log_loss=float(-np.log(counts[y_test] / counts.sum()).mean()),
        log_k=float(np.log(n_classes)),
        build_s=build_s,
    )
    if entry.packages:
        from _thirdparty_tokens import package_versions

        facts["built_from"] = package_versions(entry.packages)
    facts["prepare_s"] = time.perf_counter() - start
    data = dict(
        X_train=X,
        y_train=y.astype(np.int64),
        X_test=X_test,
        y_test=y_test.astype(np.int64),
    )
    return data, facts


def check_shapes(data, facts, expect):
    """Problems with a built set (empty list when it is consistent)."""
    bad = []
    Xtr, Xte = data["X_train"], data["X_test"]
    if Xtr.shape[0] != data["y_train"].shape[0]:
        bad.append("X_train and y_train rows differ")
    if Xte.shape[0] != data["y_test"].shape[0]:
        bad.append("X_test and y_test rows differ")
    if Xtr.shape[1] != Xte.shape[1]:
        bad.append("train and test features differ")
    if data["y_train"].max() != facts["n_classes"] - 1:
        bad.append("training labels are not 0..K-1")
    if data["y_test"].size and data["y_test"].max() >= facts["n_classes"]:
        bad.append("a test label is not a training class")
    for key in ("n_train", "n_features"):
        if key in expect and facts[key] != expect[key]:
            bad.append(f"{key} {facts[key]} != {expect[key]}")
    if "n_test" in expect:
        n_all = facts["n_test_seen"] + facts["n_test_dropped"]
        if n_all != expect["n_test"]:
            bad.append(f"test rows {n_all} != {expect['n_test']}")
    if "max_classes" in expect and facts["n_classes"] > expect["max_classes"]:
        bad.append(f"K {facts['n_classes']} > {expect['max_classes']}")
    return bad


def show_shapes(names, test_rows):
    """Build every set, check it, print its sizes and build time.

    build s: the loader or generator; prep s: that plus the label
    remapping, the test subsample and the statistics of ``prepare``.
    """
    header = (
        f"{'set':<23}{'n_train':>10}{'n_test':>8}{'(all)':>9}{'K':>8}"
        f"{'D':>8}{'nnz/row':>9}{'rows/K':>9}{'dense':>7}{'dtype':>9}"
        f"{'build s':>9}{'prep s':>8}  check"
    )
    print(header, flush=True)
    for name in names:
        try:
            data, facts = prepare(name, test_rows)
        except DatasetUnavailable as exc:
            print(f"{name:<23}unavailable: {exc}", flush=True)
            continue
        bad = check_shapes(data, facts, REGISTRY[name].expect)
        print(
            f"{name:<23}{facts['n_train']:>10}{facts['n_test']:>8}"
            f"{facts['n_test_seen']:>9}{facts['n_classes']:>8}"
            f"{facts['n_features']:>8}{facts['nnz_per_row']:>9.1f}"
            f"{facts['rows_per_class']:>9.1f}{str(facts['dense']):>7}"
            f"{facts['dtype']:>9}{facts['build_s']:>9.1f}"
            f"{facts['prepare_s']:>8.1f}  "
            + ("ok" if not bad else "; ".join(bad)),
            flush=True,
        )
        del data


# ============================================================ recording
class Recorder:
    """Appends one JSON line per finished (set, method, config)."""

    def __init__(self, out_dir, stamp):
        self.path = Path(out_dir) / JSONL
        self.stamp = stamp

    def store(self, record):
        record = dict(record, stamp=self.stamp)
        record.setdefault("kind", "run")
        with open(self.path, "a") as f:
            f.write(json.dumps(record, default=_json_default) + "\n")
        if record["kind"] == "run":
            print(summary_line(record), flush=True)
        return record


def _json_default(x):
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating,)):
        return float(x)
    if isinstance(x, np.ndarray):
        return x.tolist()
    return str(x)


def summary_line(r):
    head = f"= [{r['set']}] {r['method']} {r['config']}: "
    if r.get("best_log_loss") is None:
        return head + f"{r.get('status')}: {r.get('note', '')}"
    where = (
        f"after {r['n_iter']:g} iterations"
        if "n_iter" in r
        else f"at epoch {r.get('best_epoch')}"
    )
    text = (
        f"best test log-loss {r['best_log_loss']:.4f} {where} "
        f"({r.get('best_cpu_s', 0):.2f} CPU s)"
    )
    if r.get("status") != "ok":
        text += f" [{r['status']}: {r.get('note', '')[:120]}]"
    return head + text


def _finish(record, curve):
    """Best epoch of a curve into the record (None when there is none)."""
    finite = [c for c in curve if np.isfinite(c["log_loss"])]
    record["curve"] = curve
    if finite:
        best = min(finite, key=lambda c: c["log_loss"])
        record.update(
            best_log_loss=best["log_loss"],
            best_epoch=best["epoch"],
            best_cpu_s=best["cpu_s"],
            best_top1=best.get("top1"),
            final_log_loss=finite[-1]["log_loss"],
            cpu_s=curve[-1]["cpu_s"],
        )
    else:
        record.update(best_log_loss=None)
    return record


def _progress(set_name, method, config, epoch, cpu_s, loss, best):
    print(
        f"  [{set_name}] {method} {config} epoch {epoch}: test log-loss "
        f"{loss:.4f} (best {best:.4f}), CPU {cpu_s:.2f} s",
        flush=True,
    )


# ================================================================ memory
class PeakMemory:
    """Peak memory of a fit above the RSS before it, evaluations excluded.

    Linux: VmHWM of /proc/self/status, reset through /proc/self/clear_refs
    (before the fit and after each evaluation; the peak before each
    evaluation is kept). Elsewhere: ru_maxrss minus its value before.
    """

    def __init__(self):
        try:
            self.base = _reset_peak_rss()
            self.method = (
                "peak RSS rise during fit (Linux VmHWM reset by "
                "/proc/self/clear_refs; evaluations excluded)"
            )
            self.linux = True
        except OSError:
            self.base = self._maxrss()
            self.method = "ru_maxrss rise during fit (evaluations included)"
            self.linux = False
        self.peak = self.base

    @staticmethod
    def _maxrss():
        scale = 1 if sys.platform == "darwin" else 1024
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale

    def mark(self):
        """Keep the peak so far (call before an evaluation)."""
        now = _peak_rss_bytes() if self.linux else self._maxrss()
        self.peak = max(self.peak, now)

    def reset(self):
        """Forget an evaluation's peak (call after it)."""
        if self.linux:
            _reset_peak_rss()

    def rise_mb(self):
        self.mark()
        return max(self.peak - self.base, 0) / 2**20


# ============================================================== methods
EXPERTS = {
    "exact": (
        "SoftmaxClassifier",
        dict(solver="exact", early_stopping=False),
    ),
    # the exact solver with one constant step for every weight (the rule
    # the step-rule race can keep) instead of per-feature AdaGrad
    "exact_constant": (
        "SoftmaxClassifier",
        dict(solver="exact", early_stopping=False),
    ),
    "umax": ("UMaxSoftmaxClassifier", {}),
    "implicit": ("ImplicitSGDClassifier", {}),
    "scent": ("SCENTClassifier", {}),
    "ar": ("ARSoftmaxClassifier", {}),
    "bound": ("StochasticBoundClassifier", {}),
}
# private attributes a method sets on its estimator after construction
PRIVATE = {"exact_constant": {"_exact_step_rule": "constant"}}
METHODS = ("default", "default_seeds", *EXPERTS, "logreg", "sgd", "torch")
TUNED = (*EXPERTS, "logreg", "torch")  # what "the best tuned value" spans
GRIDS = {
    "small": dict(factors=(1 / 3, 1.0, 3.0), alphas=(0.0, 1e-5)),
    "full": dict(
        factors=(0.1, 1 / 3, 1.0, 3.0, 10.0),
        alphas=(0.0, 1e-6, 1e-5, 1e-4),
    ),
}
SGD_EPOCHS_GUESS = 15


def _factor_text(f):
    for num, den in ((1, 3), (1, 10), (1, 30)):
        if abs(f - num / den) < 1e-9:
            return f"{num}/{den}"
    return f"{f:g}"


def grid_config(factor, alpha):
    return f"eta0=auto*{_factor_text(factor)} alpha={alpha:g}"


def _estimator_class(method):
    import sksoftmax

    name, fixed = EXPERTS[method]
    cls = getattr(sksoftmax, name, None)
    if cls is None:
        raise DatasetUnavailable(
            f"sksoftmax.{name} is not in the installed sksoftmax "
            f"({sksoftmax.__file__})"
        )
    return cls, fixed


def model_scores(clf, data, n_classes):
    """(log-loss, top-1) on the test rows: the common exact evaluator on
    coef_ / intercept_, or the estimator's own methods without them."""
    X, y = data["X_test"], data["y_test"]
    if hasattr(clf, "coef_") and hasattr(clf, "intercept_"):
        W_T, b = full_columns(
            np.asarray(clf.coef_),
            np.asarray(clf.intercept_),
            clf.classes_,
            n_classes,
        )
        loss, top1, _ = evaluate(W_T, b, X, y)
        return float(loss), float(top1)
    return float(clf.log_loss(X, y)), float(clf.score(X, y))


def run_point(data, facts, method, eta0, alpha, factor, opts):
    """One grid point: a partial_fit loop; its JSON record."""
    from sklearn.utils._param_validation import InvalidParameterError
    from threadpoolctl import threadpool_limits

    from sksoftmax import DivergenceError

    threadpool_limits(1, user_api="blas")  # also in a --n-jobs worker
    set_name, K = facts["set"], facts["n_classes"]
    config = grid_config(factor, alpha)
    record = dict(
        set=set_name,
        method=method,
        config=config,
        factor=factor,
        alpha=alpha,
        eta0=None if eta0 == "auto" else eta0,
        max_epochs=opts["max_epochs"],
        status="ok",
    )
    cls, fixed = _estimator_class(method)
    clf = cls(**fixed, eta0=eta0, alpha=alpha, random_state=0)
    for attr, value in PRIVATE.get(method, {}).items():
        setattr(clf, attr, value)
    try:
        clf._validate_params()
    except InvalidParameterError as exc:
        record.update(status="invalid", note=str(exc)[:300])
        return _finish(record, [])
    X, y = data["X_train"], data["y_train"]
    classes = np.arange(K)
    clock, curve, best = Clock(), [], np.inf
    warnings.simplefilter("ignore")
    for epoch in range(1, opts["max_epochs"] + 1):
        try:
            with warnings.catch_warnings():
                # the estimator's own "this will take long" (StochasticBound
                # past about a minute per epoch): a skip, before the epoch
                warnings.filterwarnings(
                    "error",
                    message=r".*estimated [\d,.]+ s per epoch",
                    category=UserWarning,
                )
                with clock:
                    clf.partial_fit(
                        X, y, classes=classes if epoch == 1 else None
                    )
        except UserWarning as exc:
            record.update(status="refused", note=str(exc)[:400])
            break
        except DivergenceError as exc:
            record.update(status="diverged", note=str(exc)[:300])
            if epoch == 1:
                _note_auto(record, clf, eta0)
            break
        except (ValueError, MemoryError) as exc:
            if epoch > 1:
                raise
            record.update(status="refused", note=str(exc)[:400])
            break
        if epoch == 1:
            _note_auto(record, clf, eta0)
            if eta0 == "auto" and record.get("eta0_auto") is not None:
                # pinned: later calls would re-derive 'auto' from all the
                # rows seen so far
                clf.set_params(eta0=record["eta0_auto"])
        loss, top1 = model_scores(clf, data, K)
        curve.append(
            dict(epoch=epoch, cpu_s=clock.cpu, log_loss=loss, top1=top1)
        )
        if not np.isfinite(loss):
            record.update(status="diverged", note="non-finite test log-loss")
            break
        best = min(best, loss)
        _progress(set_name, method, config, epoch, clock.cpu, loss, best)
        best_epoch = min(curve, key=lambda c: c["log_loss"])["epoch"]
        if opts["patience"] and epoch - best_epoch >= opts["patience"]:
            record["note"] = (
                f"stopped: {opts['patience']} epochs without a new best"
            )
            break
    return _finish(record, curve)


def _note_auto(record, clf, eta0):
    used = getattr(clf, "eta0_", None)
    if used is not None:
        record["eta0_used"] = float(used)
        if eta0 == "auto":
            record["eta0_auto"] = float(used)
            record["eta0"] = float(used)


def _ordered_factors(factors):
    """1 first (it fixes auto), then the others by distance from 1."""
    rest = sorted(
        {float(f) for f in factors} - {1.0}, key=lambda f: abs(math.log(f))
    )
    return [1.0, *rest]


def run_grid(method, data, facts, args, rec):
    """Every point of one solver's grid on one set."""
    try:
        _estimator_class(method)
    except DatasetUnavailable as exc:
        rec.store(_skip(facts, method, "grid", str(exc)))
        return
    opts = dict(max_epochs=args.max_epochs, patience=args.patience)
    factors = _ordered_factors(args.eta_factors)
    print(
        f"\n-- [{facts['set']}] {method}: grid eta0 = auto x "
        f"{{{', '.join(_factor_text(f) for f in factors)}}} x alpha "
        f"{{{', '.join(f'{a:g}' for a in args.alphas)}}}, up to "
        f"{args.max_epochs} epochs each",
        flush=True,
    )
    center, jobs = None, []
    for alpha in args.alphas:
        if center is not None:
            jobs += [(center * f, alpha, f) for f in factors]
            continue
        r = rec.store(run_point(data, facts, method, "auto", alpha, 1.0, opts))
        if r["status"] == "refused":
            print(f"  {method} skipped on {facts['set']}: {r['note']}")
            return
        center = r.get("eta0_auto")
        if center is not None:
            print(f"  {method}: auto eta0 = {center:.4g}", flush=True)
            jobs += [(center * f, alpha, f) for f in factors[1:]]
    if center is None:
        print(f"  {method}: no grid point ran on {facts['set']}")
        return
    if args.n_jobs == 1:
        for eta0, alpha, f in jobs:
            rec.store(run_point(data, facts, method, eta0, alpha, f, opts))
        return
    from joblib import Parallel, delayed

    for r in Parallel(n_jobs=args.n_jobs, return_as="generator_unordered")(
        delayed(run_point)(data, facts, method, eta0, alpha, f, opts)
        for eta0, alpha, f in jobs
    ):
        rec.store(r)


def _skip(facts, method, config, note, status="skipped"):
    return dict(
        set=facts["set"],
        method=method,
        config=config,
        status=status,
        note=note,
        best_log_loss=None,
    )


def run_default(data, facts, args, rec):
    """SoftmaxClassifier(random_state=0): fit, curve, memory, solver_."""
    try:
        from sksoftmax import SoftmaxClassifier
    except ImportError:
        import sksoftmax

        rec.store(
            _skip(
                facts,
                "default",
                "SoftmaxClassifier()",
                "sksoftmax.SoftmaxClassifier cannot be imported from the "
                f"installed sksoftmax ({sksoftmax.__file__}); it is being "
                "written: run again when it exists, or leave 'default' out "
                "of --methods",
                status="unavailable",
            )
        )
        return
    set_name = facts["set"]
    X, y = data["X_train"], data["y_train"]
    Xt, yt = data["X_test"], data["y_test"]
    clf = SoftmaxClassifier(random_state=0)
    curve, state = [], dict(cb=0.0)
    memory = None

    def callback(model):
        enter = time.process_time()
        memory.mark()
        loss = float(model.log_loss(Xt, yt))
        cpu = enter - state["start"] - state["cb"]
        # the held-out loss of this epoch (none for a refit's epochs)
        held = model.validation_loss_ or []
        held = float(held[-1]) if len(held) > len(curve) - refits(curve) \
            else None
        curve.append(dict(epoch=len(curve) + 1, cpu_s=cpu, log_loss=loss,
                          held_out=held))
        best = min(c["log_loss"] for c in curve)
        _progress(set_name, "default", "", len(curve), cpu, loss, best)
        memory.reset()
        state["cb"] += time.process_time() - enter

    clf._epoch_callback = callback
    print(f"\n-- [{set_name}] default: SoftmaxClassifier(random_state=0)")
    warnings.simplefilter("ignore")
    memory = PeakMemory()
    state["start"] = time.process_time()
    clf.fit(X, y)
    cpu = time.process_time() - state["start"] - state["cb"]
    peak_mb = memory.rise_mb()
    loss = float(clf.log_loss(Xt, yt))
    top1 = float(clf.score(Xt, yt))
    params = {k: repr(v) for k, v in clf.get_params().items()}
    record = dict(
        set=set_name,
        method="default",
        config="SoftmaxClassifier()",
        status="ok",
        log_loss=loss,
        top1=top1,
        fit_cpu_s=cpu,
        callback_cpu_s=state["cb"],
        peak_mb=peak_mb,
        memory_method=memory.method,
        solver_=str(getattr(clf, "solver_", None)),
        step_rule_=getattr(clf, "step_rule_", None),
        eta0_=_float_or_none(getattr(clf, "eta0_", None)),
        n_iter_=_float_or_none(getattr(clf, "n_iter_", None)),
        params=params,
    )
    if not curve:
        record["note"] = "the epoch callback was never called"
    _finish(record, curve)
    # the default is judged on the model fit returns, not its best epoch
    record.update(best_curve_log_loss=record.get("best_log_loss"))
    record.update(
        best_log_loss=loss, final_log_loss=loss, best_top1=top1, cpu_s=cpu
    )
    record["best_cpu_s"] = cpu
    record["best_epoch"] = len(curve) or None
    record.update(finishing(curve, cpu))
    rec.store(record)
    print(
        f"  default: solver_={record['solver_']} "
        f"(step_rule_={record['step_rule_']}), test log-loss {loss:.4f}, "
        f"top-1 {top1:.4f}, fit {cpu:.2f} CPU s, peak +{peak_mb:.0f} MB"
    )


def run_default_seeds(data, facts, args, rec):
    """``SoftmaxClassifier(random_state=s)`` for s in 0 .. --seeds - 1: the
    test log-loss's spread over the fit's own randomness (the split, the
    row orders, the pilot's draws), against which a change of the default
    is judged on this set."""
    from sksoftmax import SoftmaxClassifier

    set_name = facts["set"]
    losses = []
    for seed in range(args.seeds):
        warnings.simplefilter("ignore")
        start = time.process_time()
        clf = SoftmaxClassifier(random_state=seed).fit(
            data["X_train"], data["y_train"]
        )
        cpu = time.process_time() - start
        loss = float(clf.log_loss(data["X_test"], data["y_test"]))
        losses.append(loss)
        rec.store(
            dict(
                set=set_name,
                method="default_seeds",
                config=f"SoftmaxClassifier(random_state={seed})",
                status="ok",
                log_loss=loss,
                fit_cpu_s=cpu,
                n_iter_=_float_or_none(getattr(clf, "n_iter_", None)),
                step_rule_=getattr(clf, "step_rule_", None),
            )
        )
        print(f"  seed {seed}: test log-loss {loss:.4f}, {cpu:.1f} CPU s")
    losses = np.array(losses)
    sd = losses.std(ddof=1) if losses.size > 1 else 0.0
    print(
        f"  default over {args.seeds} seeds: mean {losses.mean():.4f}, "
        f"sd {sd:.4f} ({100 * sd / losses.mean():.2f}%), "
        f"range {losses.min():.4f} - {losses.max():.4f}"
    )


def _float_or_none(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def logreg_gb(n, D, K):
    """lbfgs memory estimate: weights, gradient, history; n x K arrays."""
    return 8 * (4 * K * (D + 1) + 3 * n * K) / 2**30


def run_logreg(data, facts, args, rec):
    """LogisticRegression(lbfgs) for each C, when memory and time allow."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression
    from threadpoolctl import threadpool_limits

    warnings.simplefilter("ignore", ConvergenceWarning)
    n, D, K = facts["n_train"], facts["n_features"], facts["n_classes"]
    X, y = data["X_train"], data["y_train"]
    print(f"\n-- [{facts['set']}] logreg: LogisticRegression(lbfgs)")
    gb = logreg_gb(n, D, K)
    if gb > args.lr_max_gb:
        rec.store(
            _skip(
                facts,
                "logreg",
                "all C",
                f"skipped: needs about {gb:.3g} GB (8 bytes x (4 K (D+1) + "
                f"3 n K)) > --lr-max-gb {args.lr_max_gb:g}",
            )
        )
        return
    with threadpool_limits(1), Clock() as probe:
        LogisticRegression(C=1.0, max_iter=3).fit(X, y)
    estimate = probe.cpu / 3 * args.lr_max_iter
    if estimate > args.lr_budget:
        rec.store(
            _skip(
                facts,
                "logreg",
                "all C",
                f"skipped: {args.lr_max_iter} iterations estimated at "
                f"{estimate:.0f} CPU s per C (3-iteration probe "
                f"{probe.cpu:.1f} s) > --lr-budget {args.lr_budget:g}",
            )
        )
        return
    Cs, losses = sorted(args.lr_Cs), {}
    pending, extra = list(Cs), args.lr_extend
    while pending:
        C = pending.pop(0)
        losses[C] = _logreg_fit(data, facts, args, rec, C)
        if pending:
            continue
        # the best C at an end of the grid: one more C beyond it (x3)
        done = sorted(losses)
        best = min(done, key=losses.get)
        if extra > 0 and best in (done[0], done[-1]) and len(done) > 1:
            nxt = best * 3 if best == done[-1] else best / 3
            print(f"  best C={best:g} at the grid's end: C={nxt:g} too")
            pending.append(nxt)
            extra -= 1


def _logreg_fit(data, facts, args, rec, C):
    """One LogisticRegression fit; its test log-loss (stored)."""
    from sklearn.linear_model import LogisticRegression
    from threadpoolctl import threadpool_limits

    K = facts["n_classes"]
    clf = LogisticRegression(C=C, solver="lbfgs", max_iter=args.lr_max_iter)
    clock = Clock()
    with threadpool_limits(1), clock:
        clf.fit(data["X_train"], data["y_train"])
    W_T, b = full_columns(clf.coef_, clf.intercept_, clf.classes_, K)
    loss, top1, _ = evaluate(W_T, b, data["X_test"], data["y_test"])
    record = dict(
        set=facts["set"],
        method="logreg",
        config=f"C={C:g}",
        C=C,
        status="ok",
        n_iter=int(np.max(clf.n_iter_)),
        max_iter=args.lr_max_iter,
    )
    if record["n_iter"] >= args.lr_max_iter:
        record["note"] = f"max_iter={args.lr_max_iter} reached"
    curve = [
        dict(epoch=1, cpu_s=clock.cpu, log_loss=float(loss), top1=float(top1))
    ]
    rec.store(_finish(record, curve))
    return float(loss)


def run_sgd(data, facts, args, rec):
    """SGDClassifier(log_loss) with defaults (one-vs-rest)."""
    from sklearn.linear_model import SGDClassifier

    warnings.simplefilter("ignore")
    D, K = facts["n_features"], facts["n_classes"]
    X, y = data["X_train"], data["y_train"]
    print(f"\n-- [{facts['set']}] sgd: SGDClassifier(loss='log_loss')")
    if K * D > args.sgd_max_params:
        rec.store(
            _skip(
                facts,
                "sgd",
                "defaults",
                f"skipped: K x D = {K * D:.3g} > --sgd-max-params "
                f"{args.sgd_max_params:g}",
            )
        )
        return
    with Clock() as one:
        SGDClassifier(loss="log_loss", max_iter=1, tol=None).fit(X, y == 0)
    estimate = one.cpu * K * SGD_EPOCHS_GUESS
    if estimate > args.sgd_budget:
        rec.store(
            _skip(
                facts,
                "sgd",
                "defaults",
                f"skipped: one-vs-rest over {K} classes estimated at "
                f"{estimate:.0f} CPU s > --sgd-budget {args.sgd_budget:g}",
            )
        )
        return
    clf = SGDClassifier(loss="log_loss", random_state=0)
    clock = Clock()
    with clock:
        clf.fit(X, y)
    W_T, b = full_columns(clf.coef_, clf.intercept_, clf.classes_, K)
    b = b.astype(np.float64)
    loss, top1, _ = evaluate(
        W_T, b, data["X_test"], data["y_test"], link="ovr"
    )
    record = dict(
        set=facts["set"],
        method="sgd",
        config="defaults",
        status="ok",
        n_iter=float(np.max(clf.n_iter_)),
    )
    curve = [
        dict(epoch=1, cpu_s=clock.cpu, log_loss=float(loss), top1=float(top1))
    ]
    rec.store(_finish(record, curve))


def _torch_dense_model(torch, n_features, n_classes, y, lr):
    W = torch.nn.Parameter(torch.zeros(n_features, n_classes))
    bias = torch.nn.Parameter(
        torch.from_numpy(log_prior(y, n_classes).astype(np.float32))
    )
    return W, bias, (torch.optim.Adam([W, bias], lr=lr),)


def _torch_dense_epoch(torch, model, X, y, generator):
    W, bias, (opt,) = model
    loss_fn = torch.nn.CrossEntropyLoss()
    perm = torch.randperm(X.shape[0], generator=generator)
    Xp, yp = X[perm], y[perm]
    loss = None
    for start in range(0, X.shape[0], TORCH_BATCH):
        stop = min(start + TORCH_BATCH, X.shape[0])
        loss = loss_fn(Xp[start:stop] @ W + bias, yp[start:stop])
        opt.zero_grad()
        loss.backward()
        opt.step()
    return float(loss.detach())


def run_torch(data, facts, args, rec):
    """PyTorch exact softmax (bench_large_k.py's loop), per lr."""
    if importlib.util.find_spec("torch") is None:
        rec.store(
            _skip(
                facts,
                "torch",
                "all lr",
                "torch is not installed (pip install torch==2.13.0)",
                status="unavailable",
            )
        )
        return
    import torch

    torch.set_num_threads(1)
    K = facts["n_classes"]
    X, y = data["X_train"], data["y_train"]
    epochs = args.torch_epochs or args.max_epochs
    dense = not sp.issparse(X)
    if dense:
        X = torch.from_numpy(np.ascontiguousarray(X, dtype=np.float32))
        y_t = torch.from_numpy(y)
    else:
        X = sp.csr_matrix(X, dtype=np.float32)
    for lr in args.torch_lrs:
        config = f"lr={lr:g} batch={TORCH_BATCH} threads=1"
        print(f"\n-- [{facts['set']}] torch {config}", flush=True)
        torch.manual_seed(0)
        generator = torch.Generator().manual_seed(0)
        if dense:
            model = _torch_dense_model(torch, X.shape[1], K, y, lr)
        else:
            model = _torch_model(torch, X.shape[1], K, y, lr)
        record = dict(
            set=facts["set"],
            method="torch",
            config=config,
            lr=lr,
            status="ok",
            max_epochs=epochs,
            optimizer="Adam (dense)" if dense else "SparseAdam + Adam",
        )
        clock, curve, best = Clock(), [], np.inf
        for epoch in range(1, epochs + 1):
            with clock:
                if dense:
                    last = _torch_dense_epoch(torch, model, X, y_t, generator)
                else:
                    last = _torch_epoch(torch, model, X, y, generator)
            if not np.isfinite(last):
                record.update(
                    status="diverged", note="training loss not finite"
                )
                break
            W, bias = model[0], model[1]
            weight = W.weight if hasattr(W, "weight") else W
            loss, top1, _ = evaluate(
                weight.detach().numpy(),
                bias.detach().numpy(),
                data["X_test"],
                data["y_test"],
            )
            curve.append(
                dict(
                    epoch=epoch,
                    cpu_s=clock.cpu,
                    log_loss=float(loss),
                    top1=float(top1),
                )
            )
            best = min(best, loss)
            _progress(
                facts["set"], "torch", config, epoch, clock.cpu, loss, best
            )
            if clock.cpu > args.torch_budget:
                record["note"] = (
                    f"stopped after {clock.cpu:.0f} CPU s > --torch-budget"
                )
                break
        rec.store(_finish(record, curve))


# =============================================================== report
def _same_rows(before, after):
    """Whether two facts records of a set describe the same rows: the same
    shape, and the same package versions where both record them (records
    before ``built_from`` existed have none)."""
    shape = ("n_train", "n_test", "n_features", "n_classes")
    if any(before.get(k) != after.get(k) for k in shape):
        return False
    built = before.get("built_from"), after.get("built_from")
    return None in built or built[0] == built[1]


def load_records(path):
    """Newest facts per set; newest record per (set, method, config)
    measured on the rows of those facts."""
    facts, runs = {}, {}
    if not Path(path).exists():
        return facts, runs
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            r = json.loads(line)
            if r.get("kind") == "dataset":
                before = facts.get(r["set"])
                if before is not None and not _same_rows(before, r):
                    # other rows (e.g. the packages a set is built from
                    # changed): the runs measured on the old ones go
                    runs = {k: v for k, v in runs.items() if k[0] != r["set"]}
                facts[r["set"]] = r
            elif r.get("kind") == "run":
                runs[(r["set"], r["method"], r["config"])] = r
    return facts, runs


def by_set(runs, set_name):
    return {(m, c): r for (s, m, c), r in runs.items() if s == set_name}


def best_of(records, method):
    """The best record of a method (lowest best_log_loss), or None."""
    ok = [
        r
        for (m, _), r in records.items()
        if m == method and r.get("best_log_loss") is not None
    ]
    return min(ok, key=lambda r: r["best_log_loss"], default=None)


def _fmt(x, spec=".4f"):
    return "" if x is None else format(x, spec)


def set_report(set_name, facts, records, tolerance):
    """The markdown of one set."""
    lines = [f"## {set_name}", ""]
    if facts:
        lines += [
            f"{facts['description']}.",
            "",
            f"{facts['n_train']} training rows, {facts['n_test']} test rows "
            f"evaluated ({facts['n_test_seen']} of training classes, "
            f"{facts['n_test_dropped']} dropped), K = {facts['n_classes']}, "
            f"D = {facts['n_features']}, {facts['nnz_per_row']:.1f} nonzeros "
            f"per row, {facts['rows_per_class']:.1f} rows per class, "
            f"{'dense' if facts['dense'] else 'sparse'} {facts['dtype']}. "
            f"Class-prior test log-loss {facts['prior_log_loss']:.4f}; "
            f"log K = {facts['log_k']:.4f}.",
            "",
            facts.get("environment", ""),
            "",
        ]
    default = records.get(("default", "SoftmaxClassifier()"))
    best = overall_best(records)
    lines += ["### Default and each method's best", ""]
    rows = []
    if default is not None:
        rows.append(
            [
                "default",
                f"SoftmaxClassifier() -> solver_={default.get('solver_')}",
                _fmt(default.get("best_log_loss")),
                _fmt(_excess(default, best), "+.2%"),
                _fmt(default.get("best_top1")),
                default.get("best_epoch") or "",
                _fmt(default.get("fit_cpu_s"), ".2f"),
                _fmt(default.get("peak_mb"), ".0f"),
                _status(default),
            ]
        )
    for method in METHODS[1:]:
        r = best_of(records, method)
        if r is None:
            skipped = [x for (m, _), x in records.items() if m == method]
            for x in skipped:
                rows.append(
                    [method, x["config"], "", "", "", "", "", "", _status(x)]
                )
            continue
        rows.append(
            [
                method,
                _config_text(r),
                _fmt(r["best_log_loss"]),
                _fmt(_excess(r, best), "+.2%"),
                _fmt(r.get("best_top1")),
                (
                    f"n_iter {r['n_iter']:g}"
                    if "n_iter" in r
                    else r.get("best_epoch") or ""
                ),
                _fmt(r.get("best_cpu_s"), ".2f"),
                "",
                _status(r),
            ]
        )
    lines.append(
        md_table(
            [
                "method",
                "config (best)",
                "test log-loss",
                "vs best tuned",
                "top-1",
                "epoch (best)",
                "CPU s (to best)",
                "peak MB",
                "status",
            ],
            rows or [["", "", "", "", "", "", "", "", ""]],
        )
    )
    lines.append("")
    if default is not None and default.get("memory_method"):
        lines += [f"Peak MB: {default['memory_method']}.", ""]
    if best is not None:
        lines += [
            f"Best tuned: {best['method']} {_config_text(best)}, "
            f"{best['best_log_loss']:.4f}."
            + (
                f" Default {default['best_log_loss']:.4f}: "
                f"{_excess(default, best):+.2%} -> "
                f"{'PASS' if _excess(default, best) <= tolerance else 'FAIL'}"
                f" (tolerance {tolerance:.0%})."
                if default is not None
                and default.get("best_log_loss") is not None
                else ""
            ),
            "",
        ]
    if default is not None and default.get("curve"):
        lines += ["### Default, per epoch", ""]
        lines.append(
            md_table(
                ["epoch", "CPU s", "test log-loss"],
                [
                    [c["epoch"], f"{c['cpu_s']:.2f}", f"{c['log_loss']:.4f}"]
                    for c in default["curve"]
                ],
            )
        )
        lines.append("")
    for method in EXPERTS:
        grid = grid_matrix(records, method)
        if grid:
            lines += [
                f"### {method}: best epoch's test log-loss (epoch) per grid "
                "point",
                "",
                grid,
                "",
            ]
    lr_rows = [
        [
            r["config"],
            _fmt(r.get("best_log_loss")),
            _fmt(r.get("best_top1")),
            _fmt(r.get("best_cpu_s"), ".2f"),
            r.get("n_iter", ""),
            _status(r),
        ]
        for (m, _), r in sorted(
            records.items(), key=lambda kv: kv[1].get("C") or 0
        )
        if m == "logreg"
    ]
    if lr_rows:
        lines += ["### LogisticRegression(lbfgs), each C", ""]
        lines.append(
            md_table(
                [
                    "C",
                    "test log-loss",
                    "top-1",
                    "fit CPU s",
                    "n_iter",
                    "status",
                ],
                lr_rows,
            )
        )
        lines.append("")
    return "\n".join(lines)


def _status(r):
    status = r.get("status", "")
    note = r.get("note", "")
    if status == "ok" and not note:
        return "ok"
    return f"{status}: {note}"[:160].replace("|", "/").replace("\n", " ")


def _config_text(r):
    if r["method"] in EXPERTS and r.get("eta0") is not None:
        return f"{r['config']} (eta0={r['eta0']:.3g})"
    return r["config"]


def _excess(r, best):
    if r is None or best is None or r.get("best_log_loss") is None:
        return None
    return r["best_log_loss"] / best["best_log_loss"] - 1.0


def overall_best(records):
    """The best tuned record of the set (grid solvers, logreg, torch)."""
    cands = [best_of(records, m) for m in TUNED]
    cands = [c for c in cands if c is not None]
    return min(cands, key=lambda r: r["best_log_loss"], default=None)


def grid_matrix(records, method):
    """Rows alpha, columns factor: best loss (epoch) or the status."""
    points = [
        r for (m, _), r in records.items() if m == method and "factor" in r
    ]
    if not points:
        return ""
    factors = sorted({r["factor"] for r in points})
    alphas = sorted({r["alpha"] for r in points})
    cell = {(r["alpha"], r["factor"]): r for r in points}
    rows = []
    for a in alphas:
        row = [f"{a:g}"]
        for f in factors:
            r = cell.get((a, f))
            if r is None:
                row.append("")
            elif r.get("best_log_loss") is None:
                row.append(r.get("status", "?"))
            else:
                mark = "" if r["status"] == "ok" else f" {r['status']}"
                row.append(
                    f"{r['best_log_loss']:.4f} ({r['best_epoch']}){mark}"
                )
        rows.append(row)
    auto = next((r["eta0_auto"] for r in points if r.get("eta0_auto")), None)
    head = ["alpha \\ eta0"] + [f"auto*{_factor_text(f)}" for f in factors]
    text = md_table(head, rows)
    if auto is not None:
        text += f"\n\nauto eta0 = {auto:.4g}"
    return text


def plot_set(path, set_name, facts, records, tolerance):
    """Test log-loss against CPU seconds: one curve per method."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        print("matplotlib not installed (pip install matplotlib): no PNG")
        return False
    fig, ax = plt.subplots(figsize=(9, 5.5))
    colours = dict(zip(METHODS, plt.get_cmap("tab20").colors))
    for method in (*EXPERTS, "torch"):
        r = best_of(records, method)
        if r is None or not r.get("curve"):
            continue
        c = [p for p in r["curve"] if np.isfinite(p["log_loss"])]
        ax.plot(
            [max(p["cpu_s"], 1e-3) for p in c],
            [p["log_loss"] for p in c],
            color=colours[method],
            ls="--",
            marker=".",
            label=f"{method} best: {r['config']}",
        )
    for method, marker in (("logreg", "s"), ("sgd", "D")):
        pts = [
            r
            for (m, _), r in records.items()
            if m == method and r.get("best_log_loss") is not None
        ]
        for r in pts:
            ax.plot(
                max(r["best_cpu_s"], 1e-3),
                r["best_log_loss"],
                marker=marker,
                color=colours[method],
                ls="none",
            )
            ax.annotate(
                r["config"],
                (max(r["best_cpu_s"], 1e-3), r["best_log_loss"]),
                fontsize=6,
                xytext=(3, 3),
                textcoords="offset points",
            )
        if pts:
            ax.plot(
                [],
                [],
                marker=marker,
                color=colours[method],
                ls="none",
                label={
                    "logreg": "LogisticRegression(lbfgs), each C",
                    "sgd": "SGDClassifier(log_loss) OvR",
                }[method],
            )
    default = records.get(("default", "SoftmaxClassifier()"))
    if default is not None and default.get("best_log_loss") is not None:
        c = default.get("curve") or []
        if c:
            ax.plot(
                [max(p["cpu_s"], 1e-3) for p in c],
                [p["log_loss"] for p in c],
                color="black",
                lw=2.5,
                marker="o",
                ms=4,
                label=f"SoftmaxClassifier() [{default.get('solver_')}]",
            )
        ax.plot(
            max(default["fit_cpu_s"], 1e-3),
            default["best_log_loss"],
            marker="*",
            ms=14,
            color="black",
            ls="none",
            label="SoftmaxClassifier() fitted",
        )
    best = overall_best(records)
    if best is not None:
        ax.axhline(
            best["best_log_loss"] * (1 + tolerance),
            color="green",
            ls=":",
            lw=1,
            label=f"best tuned + {tolerance:.0%}",
        )
    if facts:
        ax.axhline(
            facts["prior_log_loss"],
            color="grey",
            ls=":",
            lw=1.5,
            label="class prior",
        )
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="fit CPU seconds (one thread, evaluation excluded)",
        ylabel="test log-loss (exact; log scale)",
        title=f"{set_name}"
        + (
            f": K = {facts['n_classes']}, n = {facts['n_train']}"
            if facts
            else ""
        ),
    )
    if best is not None:
        # from just below the best to above the prior and the default
        lo = best["best_log_loss"]
        tops = [lo * 1.2]
        if facts:
            tops.append(facts["prior_log_loss"])
        if default is not None and default.get("best_log_loss") is not None:
            tops.append(default["best_log_loss"])
        hi = max(tops)
        ax.set_ylim(lo / 1.05, hi * 1.15)
    plain = matplotlib.ticker.FormatStrFormatter("%.3g")
    ax.yaxis.set_major_formatter(plain)
    ax.yaxis.set_minor_formatter(plain)
    ax.tick_params(axis="y", which="minor", labelsize=7)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def refits(curve):
    """Epochs of ``curve`` without a held-out loss (a refit's)."""
    return sum(c.get("held_out") is None for c in curve)


def finishing(curve, fit_cpu):
    """How long the default ran past its result: the held-out loss the
    fit kept (the least of its epochs'), the fit CPU at which the held-out
    loss first came within 0.5% of it, and the fit's CPU over that (the
    issue's "finishing" figure; at most 1.5 is the target)."""
    held = [(c["cpu_s"], c["held_out"]) for c in curve
            if c.get("held_out") is not None]
    if not held:
        return {}
    kept = min(v for _, v in held)
    within = next(t for t, v in held if v <= 1.005 * kept)
    return dict(
        held_out_kept=kept,
        cpu_within_half_percent=within,
        finishing=fit_cpu / within if within > 0 else None,
    )


def summary_table(all_facts, runs, tolerance):
    """Per set: default vs best tuned, CPU seconds, PASS / FAIL."""
    sets = [s for s in REGISTRY if any(k[0] == s for k in runs)]
    sets += sorted({k[0] for k in runs} - set(sets))
    rows, verdicts = [], []
    for s in sets:
        records = by_set(runs, s)
        default = records.get(("default", "SoftmaxClassifier()"))
        best = overall_best(records)
        lr = best_of(records, "logreg")
        tr = best_of(records, "torch")
        excess = _excess(default, best)
        verdict = (
            ""
            if excess is None
            else ("PASS" if excess <= tolerance else "FAIL")
        )
        if verdict:
            verdicts.append(verdict)
        k = all_facts.get(s, {}).get("n_classes", "")
        rows.append(
            [
                s,
                k,
                _fmt(default.get("best_log_loss") if default else None),
                (default or {}).get("solver_", "") or "",
                _fmt(best["best_log_loss"] if best else None),
                f"{best['method']} {_config_text(best)}" if best else "",
                _fmt(excess, "+.2%") if excess is not None else "",
                _fmt((default or {}).get("fit_cpu_s"), ".1f"),
                _fmt((default or {}).get("finishing"), ".2f"),
                _fmt(lr.get("best_cpu_s") if lr else None, ".1f"),
                _fmt(tr.get("best_cpu_s") if tr else None, ".1f"),
                verdict or (_status(default) if default else "no default run"),
            ]
        )
    text = md_table(
        [
            "set",
            "K",
            "default log-loss",
            "solver_",
            "best tuned",
            "best method",
            "default / best - 1",
            "default CPU s",
            "fit CPU / CPU to within 0.5% held-out",
            "logreg best CPU s",
            "torch CPU s to best",
            f"within {tolerance:.0%}",
        ],
        rows or [[""] * 12],
    )
    tail = (
        f"\n\n{verdicts.count('PASS')} PASS, {verdicts.count('FAIL')} FAIL "
        f"of {len(verdicts)} sets with a default run."
    )
    return text + tail


def write_reports(out_dir, tolerance, sets=None):
    """defaults_<set>.md / .png for the given sets, and the summary."""
    out_dir = Path(out_dir)
    all_facts, runs = load_records(out_dir / JSONL)
    if not runs:
        print(f"no records in {out_dir / JSONL}")
        return
    names = sorted({k[0] for k in runs}) if sets is None else sets
    for s in names:
        records = by_set(runs, s)
        if not records:
            continue
        facts = all_facts.get(s)
        text = set_report(s, facts, records, tolerance)
        (out_dir / f"defaults_{s}.md").write_text(text + "\n")
        plotted = plot_set(
            out_dir / f"defaults_{s}.png", s, facts, records, tolerance
        )
        print(
            f"wrote {out_dir / f'defaults_{s}.md'}"
            + (" and .png" if plotted else "")
        )
    summary = (
        "# Default settings against the best tuned fit\n\n"
        "Test log-loss of `SoftmaxClassifier(random_state=0)` against the "
        "lowest of every solver's grid (oracle early stopping), "
        "LogisticRegression's best C and PyTorch's best epoch "
        "(benchmarks/bench_defaults.py).\n\n"
        + summary_table(all_facts, runs, tolerance)
        + "\n"
    )
    (out_dir / "defaults_summary.md").write_text(summary)
    print("\n" + summary)
    print(f"wrote {out_dir / 'defaults_summary.md'}")


# ========================================================= leave-one-out
def _loo_value(r):
    for key in ("value", "constant", "config"):
        if key in r:
            return r[key]
    raise KeyError("a record needs 'value' (or 'constant' / 'config')")


def _sort_key(v):
    try:
        return (0, float(v), "")
    except (TypeError, ValueError):
        return (1, 0.0, str(v))


def leave_one_out(path, within=None):
    """Print the leave-one-dataset-out choice of a package constant.

    ``within`` (a cost knob, such as the stopping tolerance, whose
    cheapest value is never the most accurate): among the values whose
    excess over each set's best stays within ``within`` on every set
    chosen on, the one of least mean CPU seconds (each record's
    ``cpu_s``, relative to the set's most expensive value); without
    ``within``, the value of least mean excess.
    """
    loss, cpu = {}, {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            r = json.loads(line)
            s = r.get("set", r.get("dataset"))
            value = _loo_value(r)
            ll = r.get("log_loss", r.get("test_log_loss"))
            if s is None or ll is None:
                continue
            loss[(s, json.dumps(value))] = float(ll)
            if r.get("cpu_s") is not None:
                cpu[(s, json.dumps(value))] = float(r["cpu_s"])
    sets = sorted({s for s, _ in loss})
    values = sorted(
        {v for _, v in loss}, key=lambda v: _sort_key(json.loads(v))
    )
    best = {s: min(loss[(t, v)] for (t, v) in loss if t == s) for s in sets}

    def excess(s, v):
        return loss[(s, v)] / best[s] - 1.0

    def cost(s, v):
        top = max(cpu[(t, w)] for (t, w) in cpu if t == s)
        return cpu[(s, v)] / top if top > 0 else 0.0

    def choose(on):
        cands = [v for v in values if all((s, v) in loss for s in on)]
        if not cands:
            return None, None
        mean = {v: np.mean([excess(s, v) for s in on]) for v in cands}
        if within is not None:
            ok = [
                v for v in cands
                if all((s, v) in cpu for s in on)
                and max(excess(s, v) for s in on) <= within
            ]
            if ok:
                v = min(ok, key=lambda v: np.mean([cost(s, v) for s in on]))
                return v, mean[v]
        v = min(cands, key=mean.get)
        return v, mean[v]

    print(
        f"{len(sets)} sets, {len(values)} values of the constant "
        f"({', '.join(json.loads(v).__repr__() for v in values)})"
        + (
            f"; the cheapest value within {within:.2%} of each set's best "
            "on every set chosen on"
            if within is not None
            else ""
        )
        + "\n"
    )
    rows, held = [], []
    for s in sets:
        others = [t for t in sets if t != s]
        v, mean = choose(others)
        own = min(
            (v2 for (t, v2) in loss if t == s), key=lambda v2: loss[(s, v2)]
        )
        if v is None or (s, v) not in loss:
            rows.append([s, "", "", "", json.loads(own), f"{best[s]:.4f}"])
            continue
        held.append(excess(s, v))
        rows.append(
            [
                s,
                json.loads(v),
                f"{mean:+.2%}",
                f"{excess(s, v):+.2%}",
                json.loads(own),
                f"{best[s]:.4f}",
            ]
        )
    print(
        md_table(
            [
                "left-out set",
                "value chosen on the others",
                "its mean excess there",
                "excess on the left-out set",
                "the set's own best value",
                "its best log-loss",
            ],
            rows,
        )
    )
    v, mean = choose(sets)
    if v is not None:
        print(
            f"\nChosen on all sets: {json.loads(v)!r} (mean excess "
            f"{mean:+.2%}, worst {max(excess(s, v) for s in sets):+.2%})."
        )
    if held:
        print(
            f"Left-out excess: mean {np.mean(held):+.2%}, worst "
            f"{max(held):+.2%}."
        )


# ================================================================= main
def environment():
    import scipy
    import sklearn

    import sksoftmax

    return (
        f"{platform.machine()}, {os.cpu_count()} cores, "
        f"{platform.platform()}; Python {platform.python_version()}, numpy "
        f"{np.__version__}, scipy {scipy.__version__}, scikit-learn "
        f"{sklearn.__version__}, sksoftmax {sksoftmax.__version__}"
        + (
            f", torch {_version('torch')}"
            if importlib.util.find_spec("torch")
            else ""
        )
    )


def run_set(name, args, rec):
    print(f"\n==== {name}: building", flush=True)
    try:
        data, facts = prepare(name, args.test_rows)
    except DatasetUnavailable as exc:
        print(f"{name} skipped: {exc}", flush=True)
        return False
    bad = check_shapes(data, facts, REGISTRY[name].expect)
    if bad:
        print(f"  warning: {'; '.join(bad)}")
    facts["environment"] = environment()
    rec.store(facts)
    print(
        f"  {facts['n_train']} train / {facts['n_test']} test rows, K = "
        f"{facts['n_classes']}, D = {facts['n_features']}, "
        f"{facts['nnz_per_row']:.1f} nnz/row ({facts['build_s']:.1f} s to "
        f"build); class prior {facts['prior_log_loss']:.4f}",
        flush=True,
    )
    runners = {
        "default": run_default,
        "default_seeds": run_default_seeds,
        "logreg": run_logreg,
        "sgd": run_sgd,
        "torch": run_torch,
    }
    for method in args.methods:
        try:
            if method in EXPERTS:
                run_grid(method, data, facts, args, rec)
            else:
                runners[method](data, facts, args, rec)
        except Exception as exc:  # one method's failure is recorded
            traceback.print_exc()
            rec.store(
                _skip(
                    facts,
                    method,
                    "SoftmaxClassifier()" if method == "default" else "error",
                    f"{type(exc).__name__}: {exc}"[:400],
                    status="error",
                )
            )
    return True


def _csv(kind):
    def parse(text):
        items = [t.strip() for t in text.split(",") if t.strip()]
        return [kind(t) for t in items]

    return parse


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--sets",
        type=_csv(str),
        default=list(REGISTRY),
        help=f"comma-separated, of: {', '.join(REGISTRY)}",
    )
    p.add_argument(
        "--methods",
        type=_csv(str),
        default=list(METHODS),
        help=f"comma-separated, of: {', '.join(METHODS)}",
    )
    p.add_argument("--grid", choices=sorted(GRIDS), default="full")
    p.add_argument(
        "--eta-factors",
        type=_csv(float),
        help="comma-separated multiples of the auto eta0 (overrides --grid)",
    )
    p.add_argument(
        "--alphas",
        type=_csv(float),
        help="comma-separated L2 penalties (overrides --grid)",
    )
    p.add_argument("--max-epochs", type=int, default=20)
    p.add_argument(
        "--patience",
        type=int,
        default=5,
        help="stop a grid point after this many epochs without a new best "
        "(0: run every epoch)",
    )
    p.add_argument(
        "--n-jobs",
        type=int,
        default=1,
        help="grid points run in this many worker processes",
    )
    p.add_argument("--out-dir", type=Path, default=RESULTS)
    p.add_argument(
        "--test-rows",
        type=int,
        help="cap on test rows evaluated (0: all; default per set)",
    )
    p.add_argument("--tolerance", type=float, default=0.02)
    p.add_argument(
        "--seeds",
        type=int,
        default=5,
        help="fits of method default_seeds (random_state 0 .. seeds - 1)",
    )
    p.add_argument(
        "--lr-Cs", type=_csv(float), default=[0.1, 0.3, 1.0, 3.0, 10.0]
    )
    p.add_argument(
        "--lr-extend",
        type=int,
        default=2,
        help="extra C values (x3 or /3) tried while the best C is at an "
        "end of the grid",
    )
    p.add_argument("--lr-max-iter", type=int, default=500)
    p.add_argument("--lr-max-gb", type=float, default=4.0)
    p.add_argument(
        "--lr-budget",
        type=float,
        default=3600.0,
        help="CPU s of one LogisticRegression fit",
    )
    p.add_argument("--sgd-max-params", type=float, default=5e7)
    p.add_argument("--sgd-budget", type=float, default=3600.0)
    p.add_argument("--torch-lrs", type=_csv(float), default=[1e-2])
    p.add_argument(
        "--torch-epochs",
        type=int,
        help="PyTorch epochs (default: --max-epochs)",
    )
    p.add_argument(
        "--torch-budget",
        type=float,
        default=7200.0,
        help="stop PyTorch after the epoch that passes this many CPU s",
    )
    p.add_argument(
        "--summary-only",
        action="store_true",
        help="rebuild the tables, plots and summary from the JSON lines",
    )
    p.add_argument(
        "--shapes",
        action="store_true",
        help="build each set, print its sizes and build time; no fitting",
    )
    p.add_argument(
        "--leave-one-out",
        type=Path,
        metavar="JSONL",
        help="print the leave-one-set-out table of a constant's sweep",
    )
    p.add_argument(
        "--within",
        type=float,
        default=None,
        metavar="FRACTION",
        help="with --leave-one-out, a cost knob: choose the cheapest value "
        "(mean cpu_s) whose excess stays within FRACTION on every set",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="CI's smoke run: every method on digits, a grid of one step "
        "and one penalty, two epochs, to a temporary folder",
    )
    args = p.parse_args(argv)
    if args.quick:
        import tempfile

        args.sets, args.max_epochs = ["digits"], 2
        args.eta_factors, args.alphas = [1.0], [0.0]
        args.lr_Cs, args.torch_epochs = [1.0], 2
        args.out_dir = Path(tempfile.mkdtemp(prefix="defaults_quick_"))
    unknown = [s for s in args.sets if s not in REGISTRY]
    if unknown:
        p.error(f"unknown sets {unknown}; choose from {list(REGISTRY)}")
    unknown = [m for m in args.methods if m not in METHODS]
    if unknown:
        p.error(f"unknown methods {unknown}; choose from {list(METHODS)}")
    grid = GRIDS[args.grid]
    args.eta_factors = args.eta_factors or list(grid["factors"])
    args.alphas = (
        args.alphas if args.alphas is not None else list(grid["alphas"])
    )
    if any(f <= 0 for f in args.eta_factors):
        p.error("--eta-factors must be positive")
    return args


def main(argv=None):
    args = parse_args(argv)
    if args.leave_one_out:
        leave_one_out(args.leave_one_out, args.within)
        return 0
    if args.shapes:
        show_shapes(args.sets, args.test_rows)
        return 0
    args.out_dir.mkdir(parents=True, exist_ok=True)
    if not args.summary_only:
        from threadpoolctl import threadpool_limits

        # one BLAS thread: CPU seconds are those of one core's work
        threadpool_limits(1, user_api="blas")
        if "default" in args.methods:
            import sksoftmax

            if not hasattr(sksoftmax, "SoftmaxClassifier"):
                print(
                    "note: sksoftmax.SoftmaxClassifier is not in the "
                    f"installed sksoftmax ({sksoftmax.__file__}; not written "
                    "yet?): 'default' and 'exact' are recorded as "
                    "unavailable",
                    flush=True,
                )
        rec = Recorder(args.out_dir, time.strftime("%Y%m%dT%H%M%S"))
        start = time.perf_counter()
        done = [s for s in args.sets if run_set(s, args, rec)]
        write_reports(args.out_dir, args.tolerance, done)
        print(f"\n{time.perf_counter() - start:.0f} s in all")
        return 0
    write_reports(args.out_dir, args.tolerance)
    return 0


if __name__ == "__main__":
    sys.exit(main())
