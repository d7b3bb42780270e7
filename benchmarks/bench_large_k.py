"""Many classes: sksoftmax against PyTorch, fastText and scikit-learn.

The head-to-head a practitioner would run before choosing a tool for a
softmax classifier with thousands of classes on sparse features. For each
dataset and method it records, epoch by epoch: the training CPU seconds
(``time.process_time``, evaluation excluded; summed over threads for the
multi-threaded PyTorch run), the training wall seconds, the exact test
log-loss over ALL classes, top-1 and top-5 test accuracy, and peak RSS.

Datasets (``--datasets``)
-------------------------
- ``tokens``: ``sksoftmax.datasets.make_python_tokens(n_classes=10000)``,
  next-token prediction on the standard library's source: 3,970,873
  training and 810,429 test rows, 65,536 hashed binary features, about 4
  nonzeros per row (W is 2.6 GB in float32). Skipped with a message when
  the installed sksoftmax does not have the function.
- ``bibtex``: ``fetch_bibtex(normalize=True, dtype=np.float32)``, read
  from the shared data folder when it is there (first label, unit L2
  rows).
- ``zipf20k``, ``zipf100k``: ``make_softmax_classification`` with a Zipf
  class prior, prior_k proportional to (k + 1)^-0.5 (``class_exponent=
  0.5``), word counts as features, split 80/20 into train and test
  (seed 0):

  ======== ======= ======== ========= ======= ======== ====== ========
  name     rows    features generator nnz per training W (MB) PyTorch
                            classes   row     classes         epoch
  ======== ======= ======== ========= ======= ======== ====== ========
  zipf20k  100,000 10,000   20,000    8.0     18,793   752    ~15 min
  zipf100k 500,000 1,000    100,000   5.9     94,004   376    ~50 min
  ======== ======= ======== ========= ======= ======== ====== ========

  The exponent is 0.5 rather than 1 so that (nearly) every class of the
  generator occurs in training and the models really have K = 18,793 and
  94,004 weight rows: under (k + 1)^-1 the rarest of 100,000 classes has
  probability 8e-7 and 60,000 training rows held only 17,149 classes
  (the tokens task has the steep Zipf tail of real labels). The rows are
  about what one PyTorch epoch can take: its exact-softmax step builds a
  sparse gradient of (nonzeros of the batch) x K entries (2.8e8 at
  zipf100k, 7 s per batch of 512 on one thread here) and SparseAdam
  coalesces and applies it, so one epoch costs rows / 512 x that. Test
  rows are subsampled (``TEST_ROWS``: 5,000 on zipf100k, 20,000 on
  zipf20k and tokens), since exact evaluation costs rows x K per epoch
  and run.

Every dataset's training labels are remapped to 0..K-1 (K the number of
classes in the training rows), so that every method sees the same K
classes; test rows whose class never occurs in training are dropped (the
header says how many) and every log-loss is over those K classes. When
more than ``--test-rows`` test rows remain (default ``TEST_ROWS``: 20,000
on tokens and zipf20k, 5,000 on zipf100k, 100,000 elsewhere), every method
is evaluated on the same random subsample of that many. Each
dataset's header gives the class-prior log-loss (training frequencies,
evaluated on the test rows) and log K. ``--quick`` shrinks every dataset to
a smoke test (zipf: 5,000 rows, K / 40 generator classes, D / 5 features;
tokens: 500 classes, 4,000 training rows; Bibtex is kept whole).

Methods (``--methods``)
-----------------------
- ``umax``, ``implicit``, ``scent``, ``ar``, ``sampled``: the sksoftmax
  estimators UMaxSoftmaxClassifier, ImplicitSGDClassifier,
  SCENTClassifier, ARSoftmaxClassifier and SampledSoftmaxClassifier, (a)
  with their defaults, only ``random_state=0, tol=None, max_iter=1,
  warm_start=True`` set, and (b) for each eta0 of ``--eta0-grid`` (default
  1e-4 ... 1e2, 7 points; for ARSoftmax, whose default learning_rate is
  the per-coordinate 'adagrad', eta0 is rho_0). The defaults are evaluated
  after every epoch; a grid run only after the epochs of
  ``--grid-eval-epochs`` (1, 2, 5) and its last (only its last enters the
  comparison). With ``max_iter=1`` and ``warm_start=True`` one ``fit``
  call is one epoch and the model is evaluated between epochs.
  Consecutive warm fits on the same rows carry over coef_, intercept_, the
  random generator, the rows seen ``t_`` (the schedules' clock), the epoch
  count of the 'exponential' schedule and the per-row state (U-max's and
  Implicit's u, SCENT's nu and momentum, A&R's local parameters, step count
  and per-coordinate step state): ``sksoftmax/_base.py`` resets none of them
  on a warm fit, and eta0='auto' (the defaults) resolves to the same
  ``eta0_`` on the same rows (it is in the JSON). One difference remains:
  each ``fit`` call starts the row order from 0..n-1 before shuffling it,
  where one long fit shuffles the previous epoch's order. Every epoch's
  order is still a uniformly random permutation drawn from the same
  random stream, so the runs are statistically the same as one
  ``fit(max_iter=10)``, though not equal to it bit for bit (they are with
  ``shuffle=False``). The CPU seconds of an epoch are those of the whole
  ``fit`` call (input checks included); the kernel's own seconds are in
  the JSON (``kernel_s``).
- ``torch`` (when importable): exact softmax, ``nn.EmbeddingBag(D, K,
  mode='sum', sparse=True)`` fed the CSR rows (indices, offsets,
  per_sample_weights = values) plus a dense bias, CrossEntropyLoss,
  SparseAdam on the embedding and Adam on the bias, batches of 512 rows
  shuffled each epoch (seed 0). Weights start at zero and the bias at the
  smoothed log class prior, where the sksoftmax estimators start, so that
  both begin at the class-prior model. lr from ``--torch-lrs`` (1e-3, 1e-2,
  1e-1) on one thread (``torch.set_num_threads(1)``), each for
  ``--torch-select-epochs`` (1) epochs; the lr with the lowest test
  log-loss then continues from its saved state (weights, Adam moments,
  shuffling generator, clock: the same run) to ``--torch-epochs`` (5), and
  runs again on all threads for ``--torch-all-threads-epochs`` (1). At
  large K one PyTorch epoch takes most of an hour, hence the selection on
  one epoch.
- ``fasttext`` (when importable): each training row becomes one line
  ``__label__<k> f<j> f<j> ...``: feature tokens repeated by value when
  every value is a small integer (the zipf word counts), else present once
  (binary tokens, Bibtex's normalised rows). ``train_supervised(loss=
  'softmax', epoch=E, thread=1, dim=100, minCount=1, wordNgrams=1,
  bucket=0, seed=0)``, its other settings default (lr 0.1, linearly
  decayed to 0 over the E epochs). fastText cannot resume, so each E of
  ``--ft-epochs`` (1, 2, 5, 10, those <= ``--epochs``) is a separate run;
  an E whose estimated training time exceeds ``--ft-budget`` is skipped.
  Log-loss from its full probability vector (``k=-1``, through the
  binding's one-line ``model.f.predict``: see ``evaluate_fasttext``):
  fastText returns exp(log(p + 1e-5)), so p is that minus 1e-5, clipped at
  1e-12; on a random subsample of ``--ft-test-rows`` test rows (default
  5,000; the table gives the rows evaluated).
- ``saga``: ``LogisticRegression(solver='saga', max_iter=--epochs)``
  (multinomial, default C and tol) on the first n training rows, n = 1,000
  then doubled while the next fit is expected to take at most ``--budget``
  CPU seconds (and at most ``--max-gb`` of memory). Classes absent from
  the subset get probability 0: a test row of such a class counts
  -log(1e-12).
- ``sgd``: ``SGDClassifier(loss='log_loss')`` (one-vs-rest, probabilities
  normalised as scikit-learn's predict_proba), one ``partial_fit`` per
  epoch, only when one binary epoch x K classes x epochs fits in
  ``--budget``; otherwise one line 'skipped: ...' with that estimate.

Every (dataset, method, configuration) runs in a fresh subprocess, one at a
time, so that its peak RSS (data and evaluation included) is its own; the
JSON also has ``fit_peak_rss_mb``, the peak during training alone. Both
come from Linux's VmHWM (reset around each evaluation), not from
``ru_maxrss``, which in a child starts from the parent's peak. Evaluation
is one common exact evaluator: blocks of test rows, scores ``X_block @ W_T
+ b`` with ``W_T`` the (D, K) weights (``coef_.T`` made contiguous once
per evaluation; PyTorch's embedding weight is that already), log-loss by
``scipy.special.logsumexp``; ties in top-k count for the row.

Outputs
-------
For each dataset, in ``--out`` (default ``benchmarks/results``):
``large_k_<dataset>.jsonl``, one JSON object per epoch and run, appended
(the report keeps the newest run of each method and configuration);
``large_k_<dataset>.md``, the printed tables and summary;
``large_k_<dataset>.png``, test log-loss against training CPU seconds (log
axis), one line per method and configuration, the class-prior log-loss as
a horizontal line. ``--quick`` runs are stored as ``<dataset>_quick``.
The summary compares the best sksoftmax run with defaults with PyTorch
(the CPU seconds each sksoftmax default run needs to reach PyTorch's
one-epoch test log-loss, and its loss at PyTorch's five-epoch CPU time,
read from the ``--long-epochs`` run "defaults xN" when there is one: ten
epochs of sksoftmax are far shorter than five of PyTorch at large K) and,
for U-max, Implicit, SCENT and A&R, the defaults with the best point of
the eta0 grid.

Usage
-----
Everything on every dataset (hours; one benchmark at a time)::

    python benchmarks/bench_large_k.py

One part at a time (results accumulate in the JSON lines), then the
report alone::

    python benchmarks/bench_large_k.py --datasets zipf100k --methods torch
    python benchmarks/bench_large_k.py --datasets zipf100k \\
        --methods umax implicit scent ar sampled
    python benchmarks/bench_large_k.py --datasets zipf100k \\
        --methods fasttext saga sgd
    python benchmarks/bench_large_k.py --datasets zipf100k --report

A smoke test (a few minutes)::

    python benchmarks/bench_large_k.py --quick --epochs 2 \\
        --datasets zipf20k zipf100k --out /tmp/large_k

The script imports the installed sksoftmax: run it from outside the
checkout (``cd /tmp && python /path/to/benchmarks/bench_large_k.py``) unless
the compiled kernels are built in place.

Optional dependencies
---------------------
``pip install -e ".[bench]"`` (matplotlib, for the PNGs). PyTorch and
fastText are never test or install requirements (the ``bench-ref`` extra
names them but nothing installs it); without them their methods are
skipped with a note. Install them by hand::

    pip install torch==2.13.0   # a CPU build here; plain `pip install
                                # torch` may fetch a multi-GB CUDA build
                                # (elsewhere: --index-url
                                # https://download.pytorch.org/whl/cpu)
    pip install fasttext-wheel  # fastText 0.9.2, a prebuilt wheel

Not ``pip install fasttext``: its 0.9.3 (built from source) initialises
the input matrix in ten blocks, one per thread, and with ``thread=1``
leaves nine tenths of it as uninitialised memory (``DenseMatrix::uniform``
over an ``intgemm::AlignedVector``): training fails with "Encountered NaN"
or runs from garbage, differently from run to run. The script skips
fastText 0.9.3 with that note.
"""

import argparse
import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from _harness import (
    _peak_rss_bytes,
    _reset_peak_rss,
    fit_verbose,
    json_child,
    make_estimator,
)
from reproduce_fagan2018 import md_table
from scipy.special import logsumexp

RESULTS = Path(__file__).resolve().parent / "results"
DATASETS = ("tokens", "bibtex", "zipf20k", "zipf100k")
# make_softmax_classification arguments besides random_state=0 and
# dtype=float32 (see the docstring's table)
SYNTHETIC = {
    "zipf20k": dict(
        n_samples=100_000,
        n_features=10_000,
        n_classes=20_000,
        density=1e-3,
        class_exponent=0.5,
    ),
    "zipf100k": dict(
        n_samples=500_000,
        n_features=1_000,
        n_classes=100_000,
        density=7e-3,
        class_exponent=0.5,
    ),
}
# test rows evaluated (a fixed random subsample) when --test-rows is not
# given: exact evaluation costs rows x K per epoch and run
TEST_ROWS = {"tokens": 20_000, "zipf100k": 5_000, "zipf20k": 20_000}
DEFAULT_TEST_ROWS = 100_000
QUICK_CLASSES = 500
QUICK_SYNTHETIC = {  # --quick: 5,000 rows, K / 40 and D / 5
    "zipf20k": dict(
        n_samples=5_000,
        n_features=2_000,
        n_classes=500,
        density=5e-3,
        class_exponent=0.5,
    ),
    "zipf100k": dict(
        n_samples=5_000,
        n_features=1_000,
        n_classes=2_500,
        density=1e-2,
        class_exponent=0.5,
    ),
}
QUICK_ROWS = (4_000, 1_000)
TRAIN_FRACTION = 0.8

SKSOFTMAX = {
    "umax": "UMaxSoftmaxClassifier",
    "implicit": "ImplicitSGDClassifier",
    "scent": "SCENTClassifier",
    "ar": "ARSoftmaxClassifier",
    "sampled": "SampledSoftmaxClassifier",
}
METHODS = (*SKSOFTMAX, "torch", "fasttext", "saga", "sgd")
GRID_SUMMARY = ("umax", "implicit", "scent", "ar")
DEFAULT_GRID = tuple(float(g) for g in 10.0 ** np.arange(-4, 3))
TORCH_BATCH = 512
SAGA_START = 1_000
P_MIN = 1e-12  # probabilities are clipped here where a method gives 0
FT_OFFSET = 1e-5  # fastText returns exp(log(p + 1e-5))
EVAL_BLOCK = 2**24  # scores per evaluation block (64 MB in float32)
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


class DatasetUnavailable(Exception):
    """A dataset that cannot be built or found here."""


# ----------------------------------------------------------------- data
def _split(X, y, seed=0):
    perm = np.random.default_rng(seed).permutation(X.shape[0])
    n = int(TRAIN_FRACTION * X.shape[0])
    return X[perm[:n]], y[perm[:n]], X[perm[n:]], y[perm[n:]]


def _tokens(quick):
    try:
        from sksoftmax.datasets import make_python_tokens
    except ImportError as exc:
        raise DatasetUnavailable(
            "sksoftmax.datasets.make_python_tokens is not in the installed "
            "sksoftmax (it is being added): update the checkout"
        ) from exc
    n_classes = QUICK_CLASSES if quick else 10_000
    X, y, X_test, y_test = make_python_tokens(n_classes=n_classes)
    if quick:  # random rows: the splits are in file order
        rng = np.random.default_rng(0)
        n, m = QUICK_ROWS
        train = np.sort(rng.choice(X.shape[0], n, replace=False))
        test = np.sort(rng.choice(X_test.shape[0], m, replace=False))
        X, y, X_test, y_test = X[train], y[train], X_test[test], y_test[test]
    return X, y, X_test, y_test


def _bibtex():
    from _harness import load_bibtex

    try:
        return load_bibtex(normalize=True, dtype=np.float32)
    except OSError as exc:
        raise DatasetUnavailable(str(exc)) from exc


def synthetic_spec(name, quick):
    """make_softmax_classification arguments of a zipf dataset."""
    spec = dict((QUICK_SYNTHETIC if quick else SYNTHETIC)[name])
    return dict(spec, random_state=0, dtype=np.float32)


def load_raw(name, quick):
    """(X_train, y_train, X_test, y_test) of a dataset, labels as given."""
    if name == "tokens":
        return _tokens(quick)
    if name == "bibtex":
        return _bibtex()
    from sksoftmax.datasets import make_softmax_classification

    X, y = make_softmax_classification(**synthetic_spec(name, quick))
    return _split(X, y)


def log_prior(y, n_classes):
    """Smoothed log class frequencies, as sksoftmax's intercepts start.

    p_k = (c_k + 1 / K) / (n + 1): one pseudo-row spread over the classes.
    """
    counts = np.bincount(y, minlength=n_classes)
    return np.log((counts + 1.0 / n_classes) / (counts.sum() + 1.0))


def prepare(name, quick, max_train_rows=None, test_rows=None):
    """A dataset with remapped labels, and the facts of its header.

    Parameters
    ----------
    name : str
        One of DATASETS.
    quick : bool
        The smoke-test sizes.
    max_train_rows : int or None, default=None
        Keep the first training rows only (K stays that of all of them).
    test_rows : int or None, default=None
        Evaluate on a random subsample (seed 0) of this many test rows
        when there are more.

    Returns
    -------
    data : dict
        ``X_train``, ``y_train``, ``X_test``, ``y_test`` (CSR float32,
        int64 labels in 0..K-1; test rows of classes seen in training only).
    facts : dict
        Sizes, the class-prior test log-loss and log K.
    """
    X, y, X_test, y_test = load_raw(name, quick)
    X = sp.csr_matrix(X, dtype=np.float32)
    X_test = sp.csr_matrix(X_test, dtype=np.float32)
    classes, y = np.unique(y, return_inverse=True)
    pos = np.minimum(np.searchsorted(classes, y_test), classes.size - 1)
    seen = classes[pos] == y_test
    X_test, y_test = X_test[seen], pos[seen]
    n_seen = X_test.shape[0]
    if test_rows and n_seen > test_rows:
        keep = np.random.default_rng(0).choice(n_seen, test_rows, False)
        keep.sort()
        X_test, y_test = X_test[keep], y_test[keep]
    n_classes = classes.size
    counts = np.bincount(y, minlength=n_classes)
    facts = dict(
        kind="dataset",
        n_train=X.shape[0],
        n_test=X_test.shape[0],
        n_test_seen=n_seen,
        n_test_dropped=int((~seen).sum()),
        n_features=X.shape[1],
        n_classes=n_classes,
        nnz_per_row=X.nnz / X.shape[0],
        prior_log_loss=float(-np.log(counts[y_test] / counts.sum()).mean()),
        log_k=float(np.log(n_classes)),
        max_train_rows=max_train_rows,
    )
    if name in SYNTHETIC:
        spec = synthetic_spec(name, quick)
        facts["generator"] = {k: v for k, v in spec.items() if k != "dtype"}
    if max_train_rows:
        X, y = X[:max_train_rows], y[:max_train_rows]
    data = dict(X_train=X, y_train=y.astype(np.int64), X_test=X_test)
    data["y_test"] = y_test.astype(np.int64)
    return data, facts


def save_data(folder, data, n_classes):
    """Write the dataset once for the children to read; its path."""
    path = Path(folder) / "data.npz"
    arrays = {"n_classes": n_classes}
    for part in ("train", "test"):
        X = data[f"X_{part}"]
        arrays.update(
            {
                f"{part}_data": X.data,
                f"{part}_indices": X.indices,
                f"{part}_indptr": X.indptr,
                f"{part}_shape": np.array(X.shape),
                f"{part}_y": data[f"y_{part}"],
            }
        )
    np.savez(path, **arrays)
    return str(path)


def load_data(path):
    """The dataset written by ``save_data``: (data dict, n_classes)."""
    with np.load(path) as f:
        data = {}
        for part in ("train", "test"):
            data[f"X_{part}"] = sp.csr_matrix(
                (f[f"{part}_data"], f[f"{part}_indices"], f[f"{part}_indptr"]),
                shape=tuple(f[f"{part}_shape"]),
            )
            data[f"y_{part}"] = f[f"{part}_y"]
        return data, int(f["n_classes"])


# ----------------------------------------------------------- evaluation
def evaluate(W_T, b, X, y, link="softmax"):
    """Exact mean log-loss over all classes, top-1 and top-5 accuracy.

    Parameters
    ----------
    W_T : ndarray of shape (n_features, n_classes)
        Weights, C-contiguous (one row per feature).
    b : ndarray of shape (n_classes,)
        Biases; -inf for a class the model cannot predict.
    X : csr_matrix of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        Column indices of the true classes.
    link : {'softmax', 'ovr'}, default='softmax'
        'ovr': scikit-learn's one-vs-rest probabilities,
        sigmoid(s_k) / sum_j sigmoid(s_j).

    Returns
    -------
    log_loss, top1, top5 : float
        A row whose class has probability 0 counts -log(P_MIN).
    """
    n, n_classes = X.shape[0], W_T.shape[1]
    step = max(1, EVAL_BLOCK // n_classes)
    nll = top1 = top5 = 0.0
    for start in range(0, n, step):
        rows = slice(start, min(start + step, n))
        S = np.asarray(X[rows] @ W_T)
        S += b
        if link == "ovr":
            S = -np.logaddexp(0, -S)  # log sigmoid
        true = S[np.arange(S.shape[0]), y[rows]]
        rank = (S > true[:, None]).sum(axis=1)
        loss = logsumexp(S, axis=1) - true
        nll += np.minimum(loss, -np.log(P_MIN)).sum(dtype=np.float64)
        top1 += np.count_nonzero(rank < 1)
        top5 += np.count_nonzero(rank < 5)
    return nll / n, top1 / n, top5 / n


def full_columns(coef, intercept, classes, n_classes):
    """(W_T, b) over all K classes from a model that saw ``classes``.

    Classes the model never saw get bias -inf (probability 0).
    """
    if classes.shape[0] == n_classes:
        return np.ascontiguousarray(coef.T), np.asarray(intercept).copy()
    W_T = np.zeros((coef.shape[1], n_classes), dtype=coef.dtype)
    W_T[:, classes] = coef.T
    b = np.full(n_classes, -np.inf, dtype=coef.dtype)
    b[classes] = intercept
    return W_T, b


# --------------------------------------------------------- child runs
class Clock:
    """Training CPU and wall seconds, summed over the timed sections."""

    def __init__(self):
        self.cpu = self.wall = 0.0

    def __enter__(self):
        self._cpu, self._wall = time.process_time(), time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.cpu += time.process_time() - self._cpu
        self.wall += time.perf_counter() - self._wall


def epoch_record(epoch, clock, scores, eval_s, fit_peak, **extra):
    """One epoch's JSON record (the child adds the run's identity)."""
    log_loss, top1, top5 = scores
    return dict(
        epoch=epoch,
        cpu_s=clock.cpu,
        wall_s=clock.wall,
        log_loss=float(log_loss),
        top1=float(top1),
        top5=float(top5),
        eval_s=eval_s,
        fit_peak_rss_mb=fit_peak,
        status="ok" if np.isfinite(log_loss) else "non-finite",
        **extra,
    )


_RUN_PEAK = [0.0]  # MB: the run's peak RSS before the last reset


def reset_fit_peak():
    """Start a new training peak (Linux VmHWM), keeping the run's peak."""
    _RUN_PEAK[0] = max(_RUN_PEAK[0], fit_peak_mb())
    _reset_peak_rss()


def run_peak_mb():
    """The run's peak RSS in MB, whatever the VmHWM resets."""
    return max(_RUN_PEAK[0], fit_peak_mb())


def timed_eval(evaluate_now):
    """(scores, seconds) of an evaluation; resets the fit's peak RSS."""
    start = time.perf_counter()
    scores = evaluate_now()
    seconds = time.perf_counter() - start
    reset_fit_peak()
    return scores, seconds


def fit_peak_mb():
    """Peak RSS since the last ``reset_fit_peak``, in MB."""
    return _peak_rss_bytes() / 2**20


def evaluated(epoch, spec):
    """Whether the run evaluates (and records) this epoch."""
    wanted = spec.get("eval_epochs")
    return wanted is None or epoch == spec["epochs"] or epoch in wanted


def run_sksoftmax(data, n_classes, spec):
    """Per epoch: one warm ``fit`` with max_iter=1, then the evaluation."""
    from sksoftmax import DivergenceError

    params = dict(random_state=0, tol=None, max_iter=1, warm_start=True)
    if spec.get("eta0") is not None:
        params["eta0"] = spec["eta0"]
    params.update(spec.get("params", {}))
    clf = make_estimator(SKSOFTMAX[spec["method"]], **params)
    X, y = data["X_train"], data["y_train"]
    clock, kernel_s = Clock(), 0.0
    reset_fit_peak()
    for epoch in range(1, spec["epochs"] + 1):
        try:
            with clock:
                kernel_s += sum(fit_verbose(clf, X, y))
        except DivergenceError as exc:
            yield dict(epoch=epoch, status="diverged", note=str(exc)[:300])
            return
        peak = fit_peak_mb()
        if not evaluated(epoch, spec):
            continue
        scores, eval_s = timed_eval(
            lambda: evaluate(
                *full_columns(
                    clf.coef_, clf.intercept_, clf.classes_, n_classes
                ),
                data["X_test"],
                data["y_test"],
            )
        )
        yield epoch_record(
            epoch,
            clock,
            scores,
            eval_s,
            peak,
            kernel_s=kernel_s,
            eta0_=float(getattr(clf, "eta0_", clf.eta0)),
        )


def _torch_model(torch, n_features, n_classes, y, lr):
    """EmbeddingBag (W^T, zeros), bias (log prior) and their optimisers."""
    emb = torch.nn.EmbeddingBag(n_features, n_classes, mode="sum", sparse=True)
    with torch.no_grad():
        emb.weight.zero_()
    bias = torch.nn.Parameter(
        torch.from_numpy(log_prior(y, n_classes).astype(np.float32))
    )
    optimizers = (
        torch.optim.SparseAdam(list(emb.parameters()), lr=lr),
        torch.optim.Adam([bias], lr=lr),
    )
    return emb, bias, optimizers


def _torch_epoch(torch, model, X, y, generator):
    """One shuffled pass in batches of TORCH_BATCH rows; the last loss."""
    emb, bias, optimizers = model
    loss_fn = torch.nn.CrossEntropyLoss()
    perm = torch.randperm(X.shape[0], generator=generator).numpy()
    Xp = X[perm]
    yp = torch.from_numpy(y[perm])
    indices = torch.from_numpy(Xp.indices.astype(np.int64))
    values = torch.from_numpy(Xp.data)
    indptr = Xp.indptr.astype(np.int64)
    loss = None
    for start in range(0, X.shape[0], TORCH_BATCH):
        stop = min(start + TORCH_BATCH, X.shape[0])
        a, b = indptr[start], indptr[stop]
        scores = emb(
            indices[a:b],
            torch.from_numpy(indptr[start:stop] - a),
            per_sample_weights=values[a:b],
        )
        loss = loss_fn(scores + bias, yp[start:stop])
        for opt in optimizers:
            opt.zero_grad()
        loss.backward()
        for opt in optimizers:
            opt.step()
    return float(loss.detach())


def run_torch(data, n_classes, spec):
    """PyTorch exact softmax, one record per epoch.

    ``spec["checkpoint"]``: where the state is saved after every epoch
    (weights, optimiser moments, shuffling generator, clock);
    ``spec["resume"]``: continue from such a state, so that one run can
    be cut into a selection part and its continuation, or be resumed
    after it was stopped.
    """
    import torch

    torch.set_num_threads(spec["threads"])
    torch.manual_seed(0)
    X, y = data["X_train"], data["y_train"]
    model = _torch_model(torch, X.shape[1], n_classes, y, spec["lr"])
    generator = torch.Generator().manual_seed(0)
    clock = Clock()
    first = 1
    if spec.get("resume"):
        state = torch.load(spec["resume"], weights_only=False)
        emb, bias, optimizers = model
        with torch.no_grad():
            emb.weight.copy_(state["weight"])
            bias.copy_(state["bias"])
        for opt, opt_state in zip(optimizers, state["optimizers"]):
            opt.load_state_dict(opt_state)
        generator.set_state(state["generator"])
        clock.cpu, clock.wall = state["clock"]
        first = state["epoch"] + 1
        del state
    reset_fit_peak()
    for epoch in range(first, spec["epochs"] + 1):
        with clock:
            last = _torch_epoch(torch, model, X, y, generator)
        peak = fit_peak_mb()
        if not np.isfinite(last):
            yield dict(epoch=epoch, status="diverged", note="loss not finite")
            return
        emb, bias, optimizers = model
        scores, eval_s = timed_eval(
            lambda: evaluate(
                emb.weight.detach().numpy(),
                bias.detach().numpy(),
                data["X_test"],
                data["y_test"],
            )
        )
        if spec.get("checkpoint"):
            _save_torch_state(
                torch, spec["checkpoint"], model, generator, clock, epoch
            )
        yield epoch_record(
            epoch, clock, scores, eval_s, peak, threads=spec["threads"]
        )


def _save_torch_state(torch, path, model, generator, clock, epoch):
    """Everything a resumed run needs, written atomically (a run killed
    while saving leaves the previous epoch's state)."""
    emb, bias, optimizers = model
    state = dict(
        weight=emb.weight.detach(),
        bias=bias.detach(),
        optimizers=[opt.state_dict() for opt in optimizers],
        generator=generator.get_state(),
        clock=(clock.cpu, clock.wall),
        epoch=epoch,
    )
    torch.save(state, path + ".part")
    os.replace(path + ".part", path)


def are_counts(X):
    """Whether every value of X is an integer in 1..100 (word counts)."""
    v = X.data
    return bool(
        v.size and np.all(v == np.round(v)) and v.min() >= 1 and v.max() <= 100
    )


def fasttext_lines(X, repeat, y=None):
    """One text line per row: tokens f<j>, repeated by value if ``repeat``.

    ``repeat`` is ``are_counts`` of the training rows: word counts repeat
    the token; anything else (binary tokens, normalised rows) gives it
    once.
    """
    names = np.array([f"f{j}" for j in range(X.shape[1])], dtype=object)
    lines = []
    for i in range(X.shape[0]):
        lo, hi = X.indptr[i], X.indptr[i + 1]
        tokens = X.indices[lo:hi]
        if repeat:
            tokens = np.repeat(tokens, X.data[lo:hi].astype(np.int64))
        text = " ".join(names[tokens])
        lines.append(text if y is None else f"__label__{y[i]} {text}")
    return lines


def evaluate_fasttext(model, X, y, n_rows, repeat):
    """Log-loss, top-1, top-5 from fastText's full probability vectors.

    On a random subsample of ``n_rows`` rows (seed 0) if there are more;
    p = returned probability - 1e-5, clipped at P_MIN. The binding's
    one-line ``model.f.predict(line, k=-1, ...)`` gives every label with
    its probability in both fasttext 0.9.2 and 0.9.3 (``model.predict``
    of one string fails under NumPy 2; of a list, 0.9.2 repeats the first
    probability of each row). Returns the three scores and the number of
    rows evaluated.
    """
    if n_rows and X.shape[0] > n_rows:
        keep = np.sort(
            np.random.default_rng(0).choice(X.shape[0], n_rows, replace=False)
        )
        X, y = X[keep], y[keep]
    nll, rank = np.empty(X.shape[0]), np.empty(X.shape[0], dtype=np.int64)
    for i, line in enumerate(fasttext_lines(X, repeat)):
        pairs = model.f.predict(line + "\n", -1, 0.0, "strict")
        labels = [label for _, label in pairs]
        rank[i] = labels.index(f"__label__{y[i]}")
        nll[i] = -np.log(max(pairs[rank[i]][0] - FT_OFFSET, P_MIN))
    scores = (nll.mean(), np.mean(rank < 1), np.mean(rank < 5))
    return scores, X.shape[0]


def run_fasttext(data, n_classes, spec):
    """fastText softmax trained for spec['ft_epochs'] epochs; one record."""
    import fasttext

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "train.txt"
        repeat = are_counts(data["X_train"])
        lines = fasttext_lines(data["X_train"], repeat, data["y_train"])
        path.write_text("\n".join(lines) + "\n")
        del lines
        clock = Clock()
        reset_fit_peak()
        with clock:
            model = fasttext.train_supervised(
                input=str(path),
                loss="softmax",
                epoch=spec["ft_epochs"],
                thread=1,
                dim=spec["dim"],
                minCount=1,
                wordNgrams=1,
                bucket=0,
                seed=0,
                verbose=0,
            )
    peak = fit_peak_mb()
    start = time.perf_counter()
    scores, n_eval = evaluate_fasttext(
        model, data["X_test"], data["y_test"], spec["test_rows"], repeat
    )
    eval_s = time.perf_counter() - start
    yield epoch_record(
        spec["ft_epochs"], clock, scores, eval_s, peak, n_eval=n_eval
    )


def run_saga(data, n_classes, spec):
    """LogisticRegression(saga) on the first spec['n_rows'] rows."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    warnings.simplefilter("ignore", ConvergenceWarning)
    n = spec["n_rows"]
    X, y = data["X_train"][:n], data["y_train"][:n]
    clf = LogisticRegression(solver="saga", max_iter=spec["epochs"])
    clock = Clock()
    reset_fit_peak()
    with clock:
        clf.fit(X, y)
    peak = fit_peak_mb()
    scores, eval_s = timed_eval(
        lambda: evaluate(
            *full_columns(clf.coef_, clf.intercept_, clf.classes_, n_classes),
            data["X_test"],
            data["y_test"],
        )
    )
    yield epoch_record(
        int(np.max(clf.n_iter_)), clock, scores, eval_s, peak, n_rows=n
    )


def run_sgd(data, n_classes, spec):
    """SGDClassifier(log_loss), one partial_fit per epoch, if in budget."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import SGDClassifier

    warnings.simplefilter("ignore", ConvergenceWarning)
    X, y = data["X_train"], data["y_train"]
    one = Clock()
    with one:  # one binary problem, one epoch: the cost per class
        SGDClassifier(loss="log_loss", max_iter=1, tol=None).fit(X, y == 0)
    estimate = one.cpu * n_classes * spec["epochs"]
    if estimate > spec["budget"]:
        yield dict(
            status="skipped",
            note=f"skipped: one-vs-rest over {n_classes} classes would "
            f"take about {estimate:.0f} s",
        )
        return
    clf = SGDClassifier(loss="log_loss", random_state=0)
    classes = np.arange(n_classes)
    clock = Clock()
    reset_fit_peak()
    for epoch in range(1, spec["epochs"] + 1):
        with clock:
            clf.partial_fit(X, y, classes=classes)
        peak = fit_peak_mb()
        scores, eval_s = timed_eval(
            lambda: evaluate(
                np.ascontiguousarray(clf.coef_.T),
                clf.intercept_,
                data["X_test"],
                data["y_test"],
                link="ovr",
            )
        )
        yield epoch_record(epoch, clock, scores, eval_s, peak)


CHILDREN = {
    **dict.fromkeys(SKSOFTMAX, run_sksoftmax),
    "torch": run_torch,
    "fasttext": run_fasttext,
    "saga": run_saga,
    "sgd": run_sgd,
}


def child_main(spec):
    """Run one (dataset, method, configuration); print JSON lines."""
    data, n_classes = load_data(spec["cache"])
    ident = {k: spec[k] for k in ("dataset", "method", "config", "run")}
    for record in CHILDREN[spec["method"]](data, n_classes, spec):
        record = dict(kind="run", **ident, **record)
        record["peak_rss_mb"] = run_peak_mb()
        print(json.dumps(record), flush=True)
    return 0


# --------------------------------------------------------------- parent
class Runner:
    """Runs children one at a time and appends their records."""

    def __init__(self, key, cache, jsonl, args):
        self.key, self.cache, self.jsonl, self.args = key, cache, jsonl, args
        self.stamp = time.strftime("%Y%m%dT%H%M%S")
        self.count = 0

    def run(self, method, config, threads=1, **params):
        """One child; its records (also appended to the JSON lines)."""
        self.count += 1
        spec = dict(
            cache=self.cache,
            dataset=self.key,
            method=method,
            config=config,
            run=f"{self.stamp}-{self.count:04d}",
            epochs=self.args.epochs,
            threads=threads,
        )
        spec.update(params)
        env = dict(os.environ)
        if threads == 1:
            env.update(dict.fromkeys(THREAD_VARS, "1"))
        argv = [sys.executable, str(Path(__file__).resolve()), "--child"]
        records = []
        try:
            for record in json_child(argv + [json.dumps(spec)], env=env):
                records.append(self.store(record))
        except subprocess.CalledProcessError as exc:
            records.append(
                self.store(
                    dict(
                        kind="run",
                        **{k: spec[k] for k in ("dataset", "method")},
                        config=config,
                        run=spec["run"],
                        status="error",
                        note=f"child exited with code {exc.returncode}",
                    )
                )
            )
        return records

    def store(self, record):
        with open(self.jsonl, "a") as f:
            f.write(json.dumps(record) + "\n")
        print(progress_line(record), flush=True)
        return record

    def skip(self, method, config, note):
        return self.store(
            dict(
                kind="run",
                dataset=self.key,
                method=method,
                config=config,
                run=f"{self.stamp}-skip",
                status="skipped",
                note=note,
            )
        )


def progress_line(r):
    head = f"  {r['method']:<9}{r['config']:<24}"
    if r.get("status") != "ok" or "log_loss" not in r:
        return head + status_text(r)
    return head + (
        f"epoch {r['epoch']:>3}  CPU {r['cpu_s']:9.2f} s  log-loss "
        f"{r['log_loss']:8.4f}  top-1 {r['top1']:.3f}  "
        f"peak {r['peak_rss_mb']:6.0f} MB"
    )


def status_text(r):
    """'status: note' of a record that is not an evaluated epoch."""
    status, note = r.get("status", "?"), r.get("note", "")
    return note if note.startswith(status) else f"{status}: {note}"


def eta_config(eta0):
    return "defaults" if eta0 is None else f"eta0={eta0:.0e}"


# dense enough between 10 and 50 epochs to place the crossing of
# PyTorch's epoch-1 loss (an evaluation of the tokens task takes ~20 s)
LONG_EVAL = (1, 2, 5, 10, 15, 20, 25, 30, 40, 50, 75, 100, 150, 200)
LONG_EVAL += (300, 500, 1000, 2000, 5000)


def long_config(epochs):
    return f"defaults x{epochs}"


def _accepts(name, params):
    """Whether sksoftmax's estimator ``name`` accepts ``params``."""
    from sklearn.utils._param_validation import InvalidParameterError

    import sksoftmax

    est = getattr(sksoftmax, name)()
    if not set(params) <= set(est.get_params()):
        return False
    est.set_params(**params)
    try:
        est._validate_params()
    except InvalidParameterError:
        return False
    return True


def _value(text):
    if text in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[text]
    try:
        return float(text) if "." in text or "e" in text else int(text)
    except ValueError:
        return text


def variant_config(variant):
    """The configuration name and parameters of a --variant string."""
    params = dict(item.split("=", 1) for item in variant.split(","))
    return variant, {k: _value(v) for k, v in params.items()}


def run_sksoftmax_all(runner, method, args):
    for variant in args.variant:
        # a non-default setting, with eta0 left to 'auto'; skipped (one
        # line) where the estimator does not take it
        config, params = variant_config(variant)
        name = SKSOFTMAX[method]
        if not _accepts(name, params):
            runner.skip(method, config, f"{name} does not take {variant}")
            continue
        runner.run(method, config, eta0=None, params=params)
    if args.variant_only:
        return
    if args.long_epochs:
        # the defaults for longer, evaluated at a few epochs: the loss at
        # PyTorch's five-epoch CPU time when ten epochs are far from it
        runner.run(
            method,
            long_config(args.long_epochs),
            eta0=None,
            epochs=args.long_epochs,
            eval_epochs=list(LONG_EVAL),
        )
        if args.long_only:
            return
    defaults = () if args.grid_only else (None,)
    for eta0 in (*defaults, *args.eta0_grid):
        # the defaults every epoch (is any above the prior?), the grid at
        # a few (only its last epoch enters the comparison)
        every = eta0 is None
        runner.run(
            method,
            eta_config(eta0),
            eta0=eta0,
            eval_epochs=None if every else list(args.grid_eval_epochs),
        )


def _available(module, install):
    if importlib.util.find_spec(module) is None:
        print(f"  {module} is not installed: skipped ({install})")
        return False
    return True


def run_torch_all(runner, args):
    """Each lr for --torch-select-epochs; the best continues to
    --torch-epochs; then the best on all threads.

    Resumable: a run saves its state after every epoch in --out
    (``torch_<dataset>_<lr>.pt``), and epochs already in the JSON lines
    are not run again, so a protocol of many CPU hours (about one hour
    per epoch at 94,004 classes) can span several invocations; a resumed
    run keeps its run id, clock and shuffling stream.
    """
    if not _available("torch", "pip install torch==2.13.0"):
        return
    select = min(args.torch_select_epochs, args.torch_epochs)
    losses = {}
    for lr in args.torch_lrs:
        records = _torch_run(runner, args, lr, select)
        losses[lr] = _loss_at(records, select)
    best = min(losses, key=losses.get)
    if not np.isfinite(losses[best]):
        print("  torch: every lr diverged")
        return
    for lr in args.torch_lrs:
        if lr != best:
            _torch_state(runner, args, lr).unlink(missing_ok=True)
    if args.torch_epochs > select:
        _torch_run(runner, args, best, args.torch_epochs)
    if args.torch_all_threads_epochs > 0:
        n = os.cpu_count() or 1
        config = f"lr={best:g} threads=all({n})"
        if _recorded(runner, config)[0] < args.torch_all_threads_epochs:
            runner.run(
                "torch",
                config,
                threads=n,
                lr=best,
                epochs=args.torch_all_threads_epochs,
            )


def _torch_state(runner, args, lr):
    return args.out / f"torch_{runner.key}_{lr:g}.pt"


def _torch_run(runner, args, lr, epochs):
    """The one-thread run at ``lr`` brought to ``epochs`` epochs (resumed
    from its saved state when earlier epochs are recorded); all its
    records."""
    config = f"lr={lr:g} threads=1"
    done, run_id, _ = _recorded(runner, config)
    state = _torch_state(runner, args, lr)
    if done < epochs:
        params = dict(lr=lr, epochs=epochs, checkpoint=str(state))
        if done > 0 and state.exists():
            params.update(resume=str(state), run=run_id)
        elif done > 0:
            print(f"  torch {config}: no saved state, restarting at epoch 1")
        runner.run("torch", config, **params)
    return _recorded(runner, config)[2]


def _recorded(runner, config):
    """(last epoch, run id, records) of the newest recorded torch run of
    ``config`` on this dataset: (0, None, []) when there is none."""
    records = load_results(runner.jsonl)[1].get(("torch", config), [])
    if not records:
        return 0, None, []
    ok = [r["epoch"] for r in records if r.get("status") == "ok"]
    return max(ok, default=0), records[0]["run"], records


def _loss_at(records, epoch):
    ok = [
        r for r in records if r.get("status") == "ok" and r["epoch"] == epoch
    ]
    return ok[-1]["log_loss"] if ok else np.inf


def run_fasttext_all(runner, args):
    if not _available("fasttext", "pip install fasttext-wheel"):
        return
    if _version("fasttext") == "0.9.3":
        print(
            "  fasttext 0.9.3 skipped: with thread < 10 it leaves most of "
            "its input matrix uninitialised (NaN or garbage, run to run); "
            "pip uninstall fasttext && pip install fasttext-wheel (0.9.2)"
        )
        return
    per_epoch = None
    for E in sorted(e for e in args.ft_epochs if e <= args.epochs):
        config = f"E={E} dim={args.ft_dim}"
        if per_epoch is not None and per_epoch * E > args.ft_budget:
            runner.skip(
                "fasttext",
                config,
                f"skipped: about {per_epoch * E:.0f} s > --ft-budget",
            )
            continue
        records = runner.run(
            "fasttext",
            config,
            ft_epochs=E,
            dim=args.ft_dim,
            test_rows=args.ft_test_rows,
        )
        ok = [r for r in records if r.get("status") == "ok"]
        if ok:
            per_epoch = ok[-1]["cpu_s"] / E


def saga_gb(n_rows, n_features, n_classes):
    """saga's float64 memory: coef and gradient sums (D + 1) K, n K."""
    return 8 * ((2 * (n_features + 1) + n_rows) * n_classes) / 2**30


def run_saga_all(runner, facts, args):
    n_train = (
        facts["n_train"]
        if not args.max_train_rows
        else min(facts["n_train"], args.max_train_rows)
    )
    n = min(SAGA_START, n_train)
    while True:
        gb = saga_gb(n, facts["n_features"], facts["n_classes"])
        if gb > args.max_gb:
            runner.skip("saga", f"n={n}", f"skipped: needs about {gb:.3g} GB")
            return
        ok = [
            r
            for r in runner.run("saga", f"n={n}", n_rows=n)
            if r.get("status") == "ok"
        ]
        if not ok or n >= n_train:
            return
        nxt = min(2 * n, n_train)
        if ok[-1]["cpu_s"] * nxt / n > args.budget:
            return
        n = nxt


def run_dataset(name, args):
    """Every requested method on one dataset, each in a subprocess."""
    key = dataset_key(name, args.quick)
    print(f"\n== {key}: preparing", flush=True)
    try:
        data, facts = prepare(
            name, args.quick, args.max_train_rows, test_rows(name, args)
        )
    except DatasetUnavailable as exc:
        print(f"{name} skipped: {exc}")
        return False
    facts.update(dataset=key, environment=environment())
    args.out.mkdir(parents=True, exist_ok=True)
    jsonl = args.out / f"large_k_{key}.jsonl"
    with open(jsonl, "a") as f:
        f.write(json.dumps(facts) + "\n")
    print(header(facts), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        cache = save_data(tmp, data, facts["n_classes"])
        del data
        runner = Runner(key, cache, jsonl, args)
        for method in args.methods:
            if method in SKSOFTMAX:
                run_sksoftmax_all(runner, method, args)
            elif method == "torch":
                run_torch_all(runner, args)
            elif method == "fasttext":
                run_fasttext_all(runner, args)
            elif method == "saga":
                run_saga_all(runner, facts, args)
            else:
                runner.run("sgd", "defaults", budget=args.budget)
    return True


def test_rows(name, args):
    """The test rows evaluated on ``name`` (None or 0: all)."""
    if args.test_rows is not None:
        return args.test_rows
    return TEST_ROWS.get(name, DEFAULT_TEST_ROWS)


def dataset_key(name, quick):
    return f"{name}_quick" if quick else name


def environment():
    import scipy
    import sklearn

    import sksoftmax

    return (
        f"{platform.machine()}, {os.cpu_count()} cores, "
        f"{platform.platform()}; Python {platform.python_version()}, numpy "
        f"{np.__version__}, scipy {scipy.__version__}, scikit-learn "
        f"{sklearn.__version__}, sksoftmax {sksoftmax.__version__}"
        + "".join(
            f", {m} {_version(m)}"
            for m in ("torch", "fasttext")
            if importlib.util.find_spec(m)
        )
    )


def _version(module):
    """Installed version of a module's distribution (or its -wheel)."""
    from importlib.metadata import PackageNotFoundError, version

    for dist in (module, f"{module}-wheel"):
        try:
            tag = "" if dist == module else f" ({dist})"
            return version(dist) + tag
        except PackageNotFoundError:
            pass
    return "?"


def header(facts):
    """The dataset's description, class-prior log-loss and log K."""
    lines = [
        f"## {facts['dataset']}",
        "",
        f"{facts['n_train']} training rows, {facts['n_test_seen']} test "
        f"rows ({facts['n_test_dropped']} dropped: class unseen in "
        f"training), {facts['n_features']} features, "
        f"{facts['n_classes']} classes (in training), "
        f"{facts['nnz_per_row']:.1f} nonzeros per row.",
    ]
    if facts["n_test"] < facts["n_test_seen"]:
        lines.append(
            f"Every evaluation uses a random subsample of {facts['n_test']} "
            "of those test rows (--test-rows)."
        )
    if facts.get("generator"):
        gen = ", ".join(f"{k}={v}" for k, v in facts["generator"].items())
        lines.append(f"make_softmax_classification({gen}), 80/20 split.")
    if facts.get("max_train_rows"):
        lines.append(
            f"Training on the first {facts['max_train_rows']} rows only "
            "(--max-train-rows)."
        )
    lines += [
        f"Class-prior test log-loss {facts['prior_log_loss']:.4f}; "
        f"log K = {facts['log_k']:.4f}.",
        "",
        f"{facts.get('environment', '')}",
    ]
    return "\n".join(lines)


# --------------------------------------------------------------- report
def load_results(path):
    """The newest dataset facts, and the newest run of each configuration.

    Returns
    -------
    facts : dict or None
    runs : dict
        (method, config) -> list of that run's records, in file order.
    """
    facts, runs = None, {}
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if r["kind"] == "dataset":
                facts = r
                continue
            key = (r["method"], r["config"])
            if key not in runs or runs[key][0]["run"] != r["run"]:
                runs[key] = []
            runs[key].append(r)
    return facts, runs


def ok_curve(records):
    return [r for r in records if r.get("status") == "ok"]


def final(records):
    curve = ok_curve(records)
    if not curve or any(r.get("status") == "diverged" for r in records):
        return np.inf
    return curve[-1]["log_loss"]


def best_grid(runs, method):
    """(config, final loss) of the method's best eta0, or (None, inf)."""
    grid = {
        c: final(recs)
        for (m, c), recs in runs.items()
        if m == method and c.startswith("eta0=")
    }
    if not grid:
        return None, np.inf
    best = min(grid, key=grid.get)
    return best, grid[best]


def _order(runs):
    """(method, config) keys: methods in METHODS order, then defaults,
    then the eta0 grid by value, then the rest by name (n= by value)."""
    rank = {m: i for i, m in enumerate(METHODS)}

    def key(k):
        method, config = k
        name, _, value = config.partition("=")
        head = value.split()[0] if value else ""
        try:
            number = float(head)
        except ValueError:
            number = 0.0
        first = 0 if config == "defaults" else 1
        return (rank.get(method, 99), first, name, number, config)

    return sorted(runs, key=key)


def epoch_table(runs):
    """Per-epoch rows: every configuration except the non-best eta0."""
    best = {m: best_grid(runs, m)[0] for m in SKSOFTMAX}
    rows = []
    for method, config in _order(runs):
        if config.startswith("eta0=") and config != best.get(method):
            continue
        label = config + (" (best grid)" if config.startswith("eta0") else "")
        for r in runs[(method, config)]:
            rows.append(_table_row(method, label, r))
    rows = _pad(rows, 10)
    return md_table(
        [
            "method",
            "config",
            "epoch",
            "CPU s",
            "wall s",
            "test log-loss",
            "top-1",
            "top-5",
            "peak RSS MB",
            "fit peak MB",
        ],
        rows,
    )


def _table_row(method, label, r):
    if r.get("status") != "ok":
        return [method, label, r.get("epoch", ""), status_text(r)]
    if r.get("n_eval"):
        label += f" (test {r['n_eval']} rows)"
    return [
        method,
        label,
        r["epoch"],
        f"{r['cpu_s']:.2f}",
        f"{r['wall_s']:.2f}",
        f"{r['log_loss']:.4f}",
        f"{r['top1']:.4f}",
        f"{r['top5']:.4f}",
        f"{r['peak_rss_mb']:.0f}",
        f"{r['fit_peak_rss_mb']:.0f}",
    ]


def _pad(rows, width):
    return [list(r) + [""] * (width - len(r)) for r in rows]


def grid_table(runs):
    """Final epoch of every eta0 grid point, by method."""
    rows = []
    for method, config in _order(runs):
        if not config.startswith("eta0="):
            continue
        recs = runs[(method, config)]
        curve = ok_curve(recs)
        last = curve[-1] if curve else {}
        status = recs[-1].get("status")
        rows.append(
            [
                method,
                config[5:],
                last.get("epoch", ""),
                f"{final(recs):.4f}",
                f"{last['top1']:.4f}" if last else "",
                f"{last['cpu_s']:.2f}" if last else "",
                status if status != "ok" else "",
            ]
        )
    if not rows:
        return ""
    return md_table(
        ["method", "eta0", "epochs", "final log-loss", "top-1", "CPU s", ""],
        rows,
    )


def _at_loss(curve, target):
    """CPU s of the first epoch at or below ``target``, or None."""
    return next((r["cpu_s"] for r in curve if r["log_loss"] <= target), None)


def _at_cpu(curve, budget):
    """The last epoch whose cumulative CPU s is within ``budget``."""
    within = [r for r in curve if r["cpu_s"] <= budget]
    return within[-1] if within else None


def _long_curve(runs, method):
    """The ok records of the method's longest 'defaults xN' run, or []."""
    longs = [
        ok_curve(recs)
        for (m, c), recs in runs.items()
        if m == method and c.startswith("defaults x")
    ]
    return max(longs, key=len, default=[])


def torch_reference(runs):
    """The best one-thread PyTorch run: (config, its ok records) or None."""
    one = {
        c: recs
        for (m, c), recs in runs.items()
        if m == "torch" and c.endswith("threads=1") and ok_curve(recs)
    }
    if not one:
        return None
    best = min(one, key=lambda c: final(one[c]))
    return best, ok_curve(one[best])


def summary(runs, facts):
    """The sksoftmax defaults against PyTorch and against the eta0 grid."""
    defaults = {
        m: ok_curve(runs[(m, "defaults")])
        for m in SKSOFTMAX
        if (m, "defaults") in runs
    }
    lines = ["### Summary", ""]
    if defaults:
        best = min(defaults, key=lambda m: final(runs[(m, "defaults")]))
        lines.append(
            f"Best sksoftmax with defaults (final test log-loss): {best}."
        )
    lines += ["", *_versus_torch(runs, defaults), ""]
    lines += _versus_grid(runs, defaults, facts["prior_log_loss"])
    return "\n".join(lines).rstrip()


def _versus_torch(runs, defaults):
    ref = torch_reference(runs)
    if ref is None or not defaults:
        return ["No PyTorch one-thread run or no sksoftmax default run."]
    config, curve = ref
    one = curve[0]
    five = curve[min(5, len(curve)) - 1]
    out = [
        f"PyTorch ({config}, the best one-thread lr): epoch 1 test "
        f"log-loss {one['log_loss']:.4f} after {one['cpu_s']:.1f} CPU s; "
        f"epoch {five['epoch']} {five['log_loss']:.4f} after "
        f"{five['cpu_s']:.1f} CPU s.",
        "",
    ]
    rows = []
    for m, c in defaults.items():
        long = _long_curve(runs, m)
        reach = _at_loss(c, one["log_loss"])
        if reach is None and long:
            reach = _at_loss(long, one["log_loss"])
        at = _at_cpu(long or c, five["cpu_s"])
        rows.append(
            [
                m,
                "never" if reach is None else f"{reach:.2f}",
                "" if reach is None else f"{one['cpu_s'] / reach:.1f}x",
                (
                    ""
                    if at is None
                    else f"{at['log_loss']:.4f} (epoch " f"{at['epoch']})"
                ),
                f"{five['log_loss']:.4f}",
            ]
        )
    out.append(
        md_table(
            [
                "sksoftmax defaults",
                "CPU s to PyTorch's epoch-1 loss",
                "PyTorch CPU s / this",
                f"loss at PyTorch's epoch-{five['epoch']} CPU s",
                f"PyTorch epoch-{five['epoch']} loss",
            ],
            rows,
        )
    )
    return out


def _versus_grid(runs, defaults, prior):
    rows = []
    for m in GRID_SUMMARY:
        if m not in defaults:
            continue
        recs = runs[(m, "defaults")]
        curve = defaults[m]
        config, grid_loss = best_grid(runs, m)
        loss = final(recs)
        above = any(r["log_loss"] > prior for r in curve)
        rows.append(
            [
                m,
                curve[-1]["epoch"] if curve else "",
                f"{loss:.4f}",
                config[5:] if config else "",
                f"{grid_loss:.4f}",
                f"{loss / grid_loss:.2f}" if np.isfinite(grid_loss) else "",
                (
                    "diverged"
                    if any(r.get("status") == "diverged" for r in recs)
                    else "yes" if above or not curve else "no"
                ),
            ]
        )
    if not rows:
        return []
    return [
        md_table(
            [
                "method",
                "epochs",
                "defaults loss",
                "best eta0",
                "its loss",
                "defaults / best",
                "an epoch above class prior",
            ],
            rows,
        )
    ]


def plot(path, runs, facts):
    """Test log-loss against training CPU seconds, one line per run."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed (pip install -e '.[bench]'): no PNG")
        return False
    fig, ax = plt.subplots(figsize=(9, 5.5))
    colours = dict(zip(METHODS, plt.get_cmap("tab10").colors))
    for method, config in _order(runs):
        curve = ok_curve(runs[(method, config)])
        if not curve:
            continue
        style = _plot_style(method, config, runs)
        if style is None:
            continue
        x = [r["cpu_s"] for r in curve]
        y = [r["log_loss"] for r in curve]
        ax.plot(x, y, color=colours[method], **style)
    for m in ("fasttext", "saga"):
        _plot_points(ax, runs, m, colours[m])
    ax.axhline(
        facts["prior_log_loss"],
        color="grey",
        ls=":",
        lw=1.5,
        label="class prior (train frequencies)",
    )
    ax.set(
        xscale="log",
        xlabel="training CPU seconds (one thread unless marked)",
        ylabel="test log-loss (exact, all classes)",
        title=f"{facts['dataset']}: K = {facts['n_classes']}",
    )
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def _plot_style(method, config, runs):
    """Line style of a run: defaults bold, best grid dashed, others faint."""
    if method in ("fasttext", "saga"):
        return None  # separate runs: drawn as points
    label = f"{method} {config}"
    if config.startswith("eta0="):
        if config == best_grid(runs, method)[0]:
            return dict(ls="--", marker=".", label=label + " (best)")
        return dict(lw=0.6, alpha=0.35)
    if method == "torch":
        lrs = sorted({float(c.split()[0][3:]) for m, c in runs if m == method})
        marker = "os^vDP*"[lrs.index(float(config.split()[0][3:])) % 7]
        ls = ":" if "threads=all" in config else "-"
        return dict(ls=ls, marker=marker, ms=4, label=label)
    return dict(lw=2, marker="o", ms=3, label=label)


def _plot_points(ax, runs, method, colour):
    points = sorted(
        (r["cpu_s"], r["log_loss"])
        for (m, c), recs in runs.items()
        if m == method
        for r in ok_curve(recs)
    )
    if points:
        x, y = zip(*points)
        label = "fastText E=..." if method == "fasttext" else "saga n=..."
        ax.plot(x, y, color=colour, marker="s", ls="-.", label=label)


def report(key, out):
    """Print the tables and summary of one dataset; write the .md, .png."""
    jsonl = out / f"large_k_{key}.jsonl"
    if not jsonl.exists():
        print(f"\n{key}: no results in {jsonl}")
        return
    facts, runs = load_results(jsonl)
    if facts is None:
        print(f"\n{key}: no dataset record in {jsonl}")
        return
    parts = [
        header(facts),
        "### Per epoch (the eta0 grid: best point only)",
        "CPU s and wall s: training only, cumulative; peak RSS: the "
        "whole subprocess (data, evaluation); fit peak: during training.",
        epoch_table(runs),
    ]
    grid = grid_table(runs)
    if grid:
        parts += ["### eta0 grid, final epoch (inf: diverged)", grid]
    parts.append(summary(runs, facts))
    text = "\n\n".join(parts) + "\n"
    print("\n" + text)
    (out / f"large_k_{key}.md").write_text(text)
    if plot(out / f"large_k_{key}.png", runs, facts):
        print(f"wrote {out / f'large_k_{key}.png'}")


# ----------------------------------------------------------------- main
def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--datasets", nargs="+", choices=DATASETS, default=None,
                   help="default: all; with --quick, zipf20k")
    p.add_argument("--methods", nargs="+", choices=METHODS, default=METHODS)
    p.add_argument("--epochs", type=int, default=None,
                   help="default 10; with --quick, 1")
    p.add_argument(
        "--eta0-grid",
        nargs="*",
        type=float,
        default=DEFAULT_GRID,
        help="eta0 of the sksoftmax grid (none: defaults only)",
    )
    p.add_argument(
        "--torch-lrs", nargs="+", type=float, default=(1e-3, 1e-2, 1e-1)
    )
    p.add_argument("--ft-epochs", nargs="+", type=int, default=(1, 2, 5, 10))
    p.add_argument("--ft-dim", type=int, default=100)
    p.add_argument(
        "--ft-test-rows",
        type=int,
        default=5000,
        help="fastText test subsample (0: all rows)",
    )
    p.add_argument(
        "--ft-budget",
        type=float,
        default=3600.0,
        help="skip a fastText E expected to train longer (CPU s)",
    )
    p.add_argument(
        "--budget",
        type=float,
        default=300.0,
        help="CPU s for one scikit-learn fit",
    )
    p.add_argument(
        "--max-gb",
        type=float,
        default=8.0,
        help="skip saga subsets expected to need more memory",
    )
    p.add_argument(
        "--test-rows",
        type=int,
        help="evaluate on a random subsample of the test rows if more "
        f"(0: all; default {TEST_ROWS})",
    )
    p.add_argument(
        "--grid-eval-epochs",
        nargs="+",
        type=int,
        default=(1, 2, 5),
        help="epochs at which an eta0-grid run is evaluated, besides its "
        "last (the defaults are evaluated every epoch)",
    )
    p.add_argument(
        "--variant",
        nargs="+",
        default=(),
        help="extra sksoftmax configurations, each 'key=value[,key=value]' "
        "(e.g. learning_rate=adagrad), eta0 left to 'auto'",
    )
    p.add_argument(
        "--grid-only",
        action="store_true",
        help="run the --eta0-grid points without the defaults (to add "
        "points to a grid already recorded)",
    )
    p.add_argument(
        "--variant-only",
        action="store_true",
        help="with --variant: only the variants",
    )
    p.add_argument(
        "--long-epochs",
        type=int,
        default=0,
        help="also run each sksoftmax method with its defaults for this "
        "many epochs (evaluated at 1, 2, 5, 10, 20, 50, ...)",
    )
    p.add_argument(
        "--long-only",
        action="store_true",
        help="with --long-epochs: only the long runs",
    )
    p.add_argument(
        "--torch-select-epochs",
        type=int,
        default=1,
        help="epochs of each --torch-lrs run; the best lr then continues "
        "from its state to --torch-epochs",
    )
    p.add_argument("--torch-epochs", type=int, default=5)
    p.add_argument(
        "--torch-all-threads-epochs",
        type=int,
        default=1,
        help="epochs of the all-threads PyTorch run (0: none)",
    )
    p.add_argument(
        "--max-train-rows",
        type=int,
        help="train on the first rows only, K unchanged (for timing)",
    )
    p.add_argument(
        "--quick", action="store_true",
        help="smoke-test sizes (CI runs it: one data set, one epoch, the "
        "output to a temporary folder unless --out is given)",
    )
    p.add_argument(
        "--report", action="store_true", help="only read the JSON, report"
    )
    p.add_argument("--out", type=Path, default=None,
                   help="default results/ (with --quick, a temporary folder)")
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.datasets is None:
        args.datasets = ["zipf20k"] if args.quick else list(DATASETS)
    if args.epochs is None:
        args.epochs = 1 if args.quick else 10
    if args.out is None:
        if args.quick:
            import tempfile

            args.out = Path(tempfile.mkdtemp(prefix="large_k_quick_"))
        else:
            args.out = RESULTS
    return args


def main(argv=None):
    args = parse_args(argv)
    if args.child:
        return child_main(json.loads(args.child))
    start = time.perf_counter()
    if not args.report:
        for name in args.datasets:
            run_dataset(name, args)
    for name in args.datasets:
        report(dataset_key(name, args.quick), args.out)
    print(f"\n{time.perf_counter() - start:.0f} s in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
