"""Exact probabilities of the A&R noise models against the softmax's.

ARProbitClassifier and ARLogisticClassifier get their probabilities by
quadrature of eq. 5 (``sksoftmax/_quadrature_fast.pyx.tp``, O(K x grid)
special functions per row), ARSoftmaxClassifier by one exp per class.
Two parts, one run:

1. Issue 35, item 4 (the headline): 2,000 held-out rows x 1,000 classes
   (``make_softmax_classification(4000, 200, 1000, density=0.05)``, each
   model fitted 2 epochs on the other 2,000 rows). Seconds of each
   model's ``predict_proba`` at n_jobs=1 and n_jobs=2 (wall clock, best
   of ``--repeats``; CPU seconds beside them), the ratios to the softmax's
   on the same rows and classes (target: at most 150x), and the NumPy
   reference (``tests/_quadrature_reference.py``, the implementation
   before the kernel) on the same scores, for the before/after.
2. Issue 15: logistic at most 5x probit, on dense Gaussian rows, 3,000 x
   20 with 50 classes and 10,000 x 50 with 200 classes.

The machine is shared: compare the ratios, measured in the same run.

Usage::

    python benchmarks/bench_quadrature.py [--repeats 3]
        [--reference-rows 2000] [--skip-issue15]
"""

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from _harness import QUICK_HELP, report

from sksoftmax import (
    ARLogisticClassifier,
    ARProbitClassifier,
    ARSoftmaxClassifier,
)
from sksoftmax.datasets import make_softmax_classification

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import _quadrature_reference  # noqa: E402  (the NumPy reference)

ESTIMATORS = {
    "softmax": ARSoftmaxClassifier,
    "probit": ARProbitClassifier,
    "logistic": ARLogisticClassifier,
}
NOISE = {"probit": "normal", "logistic": "logistic"}
TARGET_RATIO = 150.0


def best_of(func, repeats):
    """Best wall and best CPU seconds of ``repeats`` calls."""
    walls, cpus = [], []
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        func()
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return min(walls), min(cpus)


def fitted(Est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Est(max_iter=2, tol=None, random_state=0).fit(X, y)


def issue35(repeats, reference_rows, quick=False):
    """Part 1: the three models' predict_proba at 1 and 2 threads."""
    n, k = (400, 50) if quick else (4000, 1000)
    X, y = make_softmax_classification(
        n, 200, k, density=0.05, random_state=0
    )
    X_fit, y_fit, X_eval = X[: n // 2], y[: n // 2], X[n // 2:]
    print(
        f"issue 35: predict_proba on {X_eval.shape[0]:,} rows x "
        f"{np.unique(y).size:,} classes, wall s (CPU s), best of {repeats}"
    )
    models = {
        name: fitted(Est, X_fit, y_fit) for name, Est in ESTIMATORS.items()
    }
    seconds = {}
    print(f"{'model':>9} {'n_jobs=1':>18} {'n_jobs=2':>18} {'ratio 1':>8} "
          f"{'ratio 2':>8}")
    for n_jobs in (1, 2):
        for name, est in models.items():
            est.set_params(n_jobs=n_jobs)
            seconds[name, n_jobs] = best_of(
                lambda est=est: est.predict_proba(X_eval), repeats
            )
    checks = []
    for name in models:
        ratios = [
            seconds[name, j][0] / seconds["softmax", j][0] for j in (1, 2)
        ]
        cells = "".join(
            f"{seconds[name, j][0]:>9.3f} ({seconds[name, j][1]:>6.3f})"
            for j in (1, 2)
        )
        print(f"{name:>9} {cells} {ratios[0]:>7.0f}x {ratios[1]:>7.0f}x")
        if name == "softmax":
            continue
        for j, ratio in zip((1, 2), ratios):
            checks.append(
                (
                    f"{name} predict_proba <= {TARGET_RATIO:.0f}x A&R "
                    f"softmax's, n_jobs={j}",
                    ratio <= TARGET_RATIO,
                    f"{ratio:.0f}x ({seconds[name, j][0]:.3f} s against "
                    f"{seconds['softmax', j][0]:.4f} s)",
                )
            )
    # before / after: the NumPy reference on the same scores (one thread)
    rows = X_eval[:reference_rows]
    print(
        f"\nbefore/after: eq. 5 on the scores of {rows.shape[0]:,} rows, "
        "NumPy reference against the kernel (n_jobs=1), wall s"
    )
    for name, noise in NOISE.items():
        est = models[name].set_params(n_jobs=1)
        scores = est.decision_function(rows)
        numpy_s = best_of(
            lambda: _quadrature_reference.noise_log_proba(scores, noise), 1
        )[0]
        kernel_s = best_of(
            lambda: est._log_proba_block(scores.copy()), repeats
        )[0]
        print(
            f"{name:>9}: NumPy {numpy_s:8.2f} s, kernel {kernel_s:7.3f} s, "
            f"{numpy_s / kernel_s:6.1f}x faster"
        )
    return checks


def issue15(repeats, quick=False):
    """Part 2: logistic predict_proba at most 5x probit's (CPU s)."""
    checks = []
    print(
        f"\nissue 15: {'rows':>7} {'features':>8} {'classes':>7} "
        + "".join(f"{name:>10}" for name in ESTIMATORS)
        + f"{'logistic/probit':>17}"
    )
    sizes = [(300, 20, 10)] if quick else [(3000, 20, 50), (10000, 50, 200)]
    for n, d, k in sizes:
        rng = np.random.RandomState(0)
        X = rng.randn(n, d)
        y = rng.randint(0, k, n)
        seconds = {}
        for name, Est in ESTIMATORS.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est = Est(max_iter=3, random_state=0).fit(X, y)
            seconds[name] = best_of(lambda: est.predict_proba(X), repeats)[1]
        ratio = seconds["logistic"] / seconds["probit"]
        print(
            f"          {n:>7,} {d:>8} {k:>7} "
            + "".join(f"{seconds[m]:>9.3f}s" for m in ESTIMATORS)
            + f"{ratio:>17.2f}"
        )
        checks.append(
            (
                f"{n:,} x {k} classes: logistic predict_proba <= 5x probit's",
                ratio <= 5.0,
                f"{ratio:.2f}x ({seconds['logistic']:.3f} s against "
                f"{seconds['probit']:.3f} s CPU)",
            )
        )
    return checks


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--reference-rows",
        type=int,
        default=2000,
        help="rows for the NumPy reference's timing (it takes about 15 "
        "and 25 ms per row at 1,000 classes)",
    )
    parser.add_argument("--skip-issue15", action="store_true")
    parser.add_argument("--quick", action="store_true", help=QUICK_HELP)
    args = parser.parse_args(argv)
    if args.quick:
        args.repeats, args.reference_rows = 1, 20
    checks = issue35(args.repeats, args.reference_rows, args.quick)
    if not args.skip_issue15:
        checks += issue15(args.repeats, args.quick)
    return report(checks, args.quick)


if __name__ == "__main__":
    sys.exit(main())
