"""Cost of classes that arrive in a stream (``allow_new_classes=True``).

A stream of 50-row batches in which batch t brings class t for the first
time (its other rows drawn from the classes seen before), up to K classes
(default 2,000; ``--classes N``), on
``make_softmax_classification(n_features=2000, density=0.005)``. Each
estimator runs the stream twice: growing (``allow_new_classes=True``, the
classes added one batch at a time) and told every class on the first call
(the reference, same batches). Printed per estimator:

- the seconds of the whole stream, growing and told, and their difference
  per added class (the amortised cost of growing);
- the peak memory traced by ``tracemalloc`` (numpy's allocations) during
  each stream, their difference per added class, and the model's
  per-class bytes (coef_ row and the other per-class arrays) for scale:
  the spare capacity of a buffer grown by doubling is at most the
  buffers themselves;
- the seconds of one from-scratch ``fit`` of one epoch on every row of
  the stream with all classes: what refitting costs each time a class
  arrives without the option.

Usage::

    python benchmarks/bench_new_classes.py [--classes 2000]
"""

import sys
import time
import tracemalloc
import warnings

import numpy as np

from sksoftmax import (
    SCENTClassifier,
    SoftmaxClassifier,
    UMaxSoftmaxClassifier,
)
from sksoftmax.datasets import make_softmax_classification

BATCH = 50
N_FEATURES = 2000
ESTIMATORS = {
    "SCENTClassifier": lambda **kw: SCENTClassifier(random_state=0, **kw),
    "UMaxSoftmaxClassifier(sampler='frequency')": lambda **kw: (
        UMaxSoftmaxClassifier(sampler="frequency", random_state=0, **kw)
    ),
    "SoftmaxClassifier(solver='exact')": lambda **kw: SoftmaxClassifier(
        solver="exact", random_state=0, **kw
    ),
}


def stream(n_classes, seed=0):
    """(X, y, batches): batch t holds the first row of class t + 1 (two
    classes in the first batch), the others from the classes before."""
    X, y = make_softmax_classification(
        n_samples=BATCH * n_classes,
        n_features=N_FEATURES,
        n_classes=n_classes,
        density=0.005,
        random_state=seed,
    )
    # relabel by first appearance in a random order of the rows, so that
    # every class has a row (labels of classes without rows are dropped)
    _, first, codes = np.unique(y, return_index=True, return_inverse=True)
    y = codes.ravel()
    n_classes = first.shape[0]
    rng = np.random.RandomState(seed)
    by_class = np.argsort(y, kind="stable")
    starts = np.searchsorted(y[by_class], np.arange(n_classes + 1))
    batches = []
    for t in range(1, n_classes):
        pool = by_class[: starts[t]]  # rows of the classes before t
        debut = by_class[starts[t]]
        others = rng.choice(pool, BATCH - 1)
        batches.append(np.concatenate([[debut], others]))
    return X, y, batches, n_classes


def run(make, X, y, batches, n_classes, grow):
    est = make(allow_new_classes=True) if grow else make()
    classes = None if grow else np.arange(n_classes)
    tracemalloc.start()
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for rows in batches:
            est.partial_fit(X[rows], y[rows], classes=classes)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert est.classes_.shape[0] == n_classes
    return est, seconds, peak


def scratch_fit(make, X, y, batches):
    rows = np.concatenate(batches)
    est = make(max_iter=1, tol=None)
    if isinstance(est, SoftmaxClassifier):
        est.set_params(early_stopping=False)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X[rows], y[rows])
    return time.perf_counter() - start


def main(argv):
    n_classes = 2000
    if "--classes" in argv:
        n_classes = int(argv[argv.index("--classes") + 1])
    X, y, batches, n_classes = stream(n_classes)
    added = n_classes - 2
    print(
        f"{len(batches)} batches of {BATCH} rows, {N_FEATURES} features; "
        f"classes added one batch at a time: 2 -> {n_classes}"
    )
    header = (
        f"{'estimator':44s} {'grow s':>8s} {'told s':>8s} "
        f"{'us/class':>9s} {'grow MB':>8s} {'told MB':>8s} "
        f"{'B/class':>9s} {'row B':>7s} {'refit s':>8s} {'refit/class':>11s}"
    )
    print(header)
    for name, make in ESTIMATORS.items():
        _, s_told, m_told = run(make, X, y, batches, n_classes, grow=False)
        est, s_grow, m_grow = run(make, X, y, batches, n_classes, grow=True)
        refit = scratch_fit(make, X, y, batches)
        per_class_s = (s_grow - s_told) / added
        per_class_b = (m_grow - m_told) / added
        row_bytes = est.coef_.shape[1] * est.coef_.dtype.itemsize
        print(
            f"{name:44s} {s_grow:8.2f} {s_told:8.2f} "
            f"{1e6 * per_class_s:9.1f} {m_grow / 2**20:8.1f} "
            f"{m_told / 2**20:8.1f} {per_class_b:9.0f} {row_bytes:7d} "
            f"{refit:8.3f} {refit / max(per_class_s, 1e-9):11.0f}"
        )
    print(
        "us/class, B/class: (growing - told) / classes added; row B: the "
        "bytes of one row of coef_; refit s: one from-scratch epoch on all "
        "rows; refit/class: refit s over us/class (how many added classes "
        "one refit pays for)."
    )


if __name__ == "__main__":
    main(sys.argv[1:])
