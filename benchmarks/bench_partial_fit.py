"""Cost of one ``partial_fit`` call against the number of classes.

A stream of small batches pays the per-call bookkeeping on every batch, so
once ``classes_`` is set a call should cost O(rows x work per row), not
O(classes) (issue 14, item 3). This script times calls of 100 and of 1,000
rows (the issue's target: a 1,000-row call at 100,000 classes within 1.5x
of one at 1,000) of
``make_softmax_classification(n_features=1000, density=0.005)`` at 1,000,
10,000 and 100,000 classes, for U-max and Implicit SGD with their
defaults: 64 warm-up calls after the first (the runaway check scores a
few rows on calls 1, 2, 4, ..., 64: O(K) per row, O(log calls) times),
then the median CPU seconds of 50 calls. It prints the ratio to the
1,000-class figure; the target is that it stays near 1.

Usage::

    python benchmarks/bench_partial_fit.py
"""

import sys
import time
import warnings

import numpy as np
from _harness import report

from sksoftmax import ImplicitSGDClassifier, UMaxSoftmaxClassifier
from sksoftmax.datasets import make_softmax_classification

CLASSES = [1_000, 10_000, 100_000]
BATCHES, WARM_UP, TIMED = (100, 1000), 64, 50
# the most a call at the most classes may cost, as a multiple of the fewest
LIMITS = {100: 2.0, 1000: 1.5}
ESTIMATORS = {
    "UMaxSoftmaxClassifier": UMaxSoftmaxClassifier,
    "ImplicitSGDClassifier": ImplicitSGDClassifier,
}


def per_call_seconds(Est, n_classes, batch):
    n_rows = 2000 + batch * (WARM_UP + TIMED)
    X, y = make_softmax_classification(
        n_samples=n_rows,
        n_features=1000,
        n_classes=n_classes,
        density=0.005,
        class_exponent=0.5,
        random_state=0,
    )[:2]
    clf = Est(random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.partial_fit(X[:2000], y[:2000], classes=np.arange(n_classes))
        start = 2000
        for _ in range(WARM_UP):
            clf.partial_fit(X[start : start + batch], y[start : start + batch])
            start += batch
        seconds = []
        for _ in range(TIMED):
            t = time.process_time()
            clf.partial_fit(X[start : start + batch], y[start : start + batch])
            seconds.append(time.process_time() - t)
            start += batch
    return float(np.median(seconds))


def main():
    checks = []
    print(
        f"{'estimator':<24}{'rows':>6}" + "".join(f"{k:>12,}" for k in CLASSES)
    )
    for batch in BATCHES:
        for name, Est in ESTIMATORS.items():
            seconds = [per_call_seconds(Est, k, batch) for k in CLASSES]
            print(
                f"{name:<24}{batch:>6}"
                + "".join(f"{1e3 * s:>10.2f}ms" for s in seconds)
            )
            ratio = seconds[-1] / seconds[0]
            checks.append(
                (
                    f"{name}: a {batch}-row call at {CLASSES[-1]:,} classes "
                    f"within {LIMITS[batch]}x of one at {CLASSES[0]:,}",
                    ratio <= LIMITS[batch],
                    f"{ratio:.2f}x",
                )
            )
    print("(median CPU seconds per call over 50 calls; shared machine)")
    return report(checks)


if __name__ == "__main__":
    sys.exit(main())
