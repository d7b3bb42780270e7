"""Cost of classes that arrive in a stream (``allow_new_classes=True``).

A stream of 50-row batches in which batch t brings class t + 1 for the
first time (its other rows drawn from the classes seen before), up to K
classes (default 2,000; ``--classes N``), on
``make_softmax_classification(n_features=2000, density=0.005)``.

Table 1, the whole stream: each estimator runs it growing
(``allow_new_classes=True``, the classes added one batch at a time) and
told every class on the first call (same batches), each twice,
interleaved, keeping the faster run; printed: both times, their difference
per added class, and one from-scratch ``fit`` (one epoch on every row of
the stream, all classes): what a refit costs each time a class arrives
without the option. The growing stream has fewer classes than the told one
for most of its calls, so this difference mixes the cost of growing with
the savings of a smaller model; on a shared machine it is also noisy.

Table 2, the growth alone: from the model after the first batch, K - 2
calls of two rows of zero weight (no training) that each add one class,
minus the same calls adding none, per added class; the peak memory traced
by ``tracemalloc`` (numpy's allocations) during those calls; the bytes the
per-class buffers hold at the end (spare rows included) against the bytes
of the K rows in use, per class.

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
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for rows in batches:
            est.partial_fit(X[rows], y[rows], classes=classes)
    seconds = time.perf_counter() - start
    assert est.classes_.shape[0] == n_classes
    return est, seconds


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


def _per_class_buffers(est):
    """(bytes held, bytes in use) of the arrays whose leading axis runs
    over the classes (the exact solver's transposed weights included)."""
    if isinstance(est, SoftmaxClassifier):
        solver = est._solver
        arrays = [a for a in vars(solver).values() if isinstance(a, np.ndarray)]
        arrays = [a for a in arrays if a.ndim == 1 and
                  a.shape[0] == est.classes_.shape[0]] + [solver.Wt]
        held = sum(a.base.nbytes if a.base is not None else a.nbytes
                   for a in arrays)
        used = sum(a.nbytes for a in arrays[:-1]) + est.coef_.nbytes
        return held, used
    names = {name for name, _, _ in est._per_class_arrays()}
    arrays = {id(v): v for k, v in vars(est).items()
              if k in names and isinstance(v, np.ndarray)}.values()
    held = sum(a.base.nbytes if a.base is not None else a.nbytes
               for a in arrays)
    return held, sum(a.nbytes for a in arrays)


def growth_alone(make, X, y, batches, n_classes):
    """(seconds per added class, peak traced bytes, bytes held, bytes in
    use): zero-weight calls of 2 rows that each add one class, minus the
    same calls adding none."""
    rows = batches[0]
    x2, zero = X[rows[:2]], np.zeros(2)
    timings = []
    # timed without tracemalloc (which slows every allocation), then once
    # more traced for the peak
    for adding, traced in ((False, False), (True, False), (True, True)):
        est = make(allow_new_classes=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.partial_fit(X[rows], y[rows])
        known = est.classes_[:2]
        if traced:
            tracemalloc.start()
        start = time.perf_counter()
        for k in range(n_classes, 2 * n_classes - 2):
            labels = np.array([known[0], k]) if adding else known
            est.partial_fit(x2, labels, sample_weight=zero)
        timings.append(time.perf_counter() - start)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert est.classes_.shape[0] == n_classes
    held, used = _per_class_buffers(est)
    return (timings[1] - timings[0]) / (n_classes - 2), peak, held, used


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
    print(
        f"{'estimator':44s} {'grow s':>8s} {'told s':>8s} {'us/class':>9s} "
        f"{'refit s':>8s}"
    )
    for name, make in ESTIMATORS.items():
        s_told = s_grow = np.inf
        for _ in range(2):
            s_told = min(s_told, run(make, X, y, batches, n_classes, False)[1])
            s_grow = min(s_grow, run(make, X, y, batches, n_classes, True)[1])
        refit = scratch_fit(make, X, y, batches)
        print(
            f"{name:44s} {s_grow:8.2f} {s_told:8.2f} "
            f"{1e6 * (s_grow - s_told) / added:9.1f} {refit:8.3f}"
        )
    print(
        "us/class: (growing - told) / classes added; refit s: one "
        "from-scratch epoch on every row of the stream"
    )
    print()
    print(
        "Growth alone: zero-weight calls, each adding one class, minus the "
        "same calls adding none, up to K classes"
    )
    print(
        f"{'estimator':44s} {'K':>6s} {'us/class':>9s} {'peak MB':>8s} "
        f"{'held B/class':>12s} {'used B/class':>12s}"
    )
    for name, make in ESTIMATORS.items():
        for size in (max(n_classes // 10, 10), n_classes):
            per_class, peak, held, used = growth_alone(
                make, X, y, batches, size
            )
            print(
                f"{name:44s} {size:6d} {1e6 * per_class:9.1f} "
                f"{peak / 2**20:8.1f} {held / size:12.0f} {used / size:12.0f}"
            )
    print(
        "peak MB: traced during the growth; held / used B/class: the "
        "per-class buffers' bytes (spare rows included) / those of the "
        "classes in use, per class"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
