"""SCENT and its comparators at equal wall-clock budgets, and class scaling.

Prints, for Bibtex (../shared/data, first label, unit L2 rows; test rows
whose label never occurs in training are dropped) and for a synthetic
planted-softmax problem with 10,000 classes
(``make_softmax_classification``):

- one table: the exact training and test log-loss of SCENT (in-batch and
  uniform negatives), SOX, SGD on nu, BSGD, U-max and Implicit SGD after the
  same wall-clock budget of training (and SOX with the package's default,
  weighted in-batch negatives) (epochs run as warm-started one-epoch
  fits until the budget is spent; only fit time counts). Every method uses
  a constant learning rate, its eta0 picked from a small grid by the
  training log-loss after a quarter of the budget (the pick is printed);
- SCENT's per-epoch time at 1,000, 10,000 and 100,000 classes with rows,
  features, nonzeros per row and batch size fixed (each size in a fresh
  subprocess through ``partial_fit`` with every class declared), with the
  mean number of distinct labels per minibatch.

Target (issue 7): per-epoch time at 100,000 classes <= 2x the time at
1,000. The script prints PASS/FAIL and exits 1 if it fails. Timings are
wall-clock on whatever machine runs it: on a shared machine, ratios are
noisy.

Usage::

    python benchmarks/bench_scent.py [--quick] [--budget SECONDS]
"""

import argparse
import sys
import time
import warnings

import numpy as np
from _harness import load_bibtex, report, scaling
from sklearn.exceptions import ConvergenceWarning

from sksoftmax import (
    DivergenceError,
    ImplicitSGDClassifier,
    SCENTClassifier,
    UMaxSoftmaxClassifier,
)
from sksoftmax.datasets import make_softmax_classification

warnings.simplefilter("ignore", ConvergenceWarning)

BATCH = 128

# name -> (constructor, eta0 grid for unit-norm rows)
METHODS = {
    name: (
        lambda kw=kw: SCENTClassifier(batch_size=BATCH, **kw),
        [2.0, 8.0, 32.0, 128.0],
    )
    for name, kw in [
        ("SCENT (in-batch)", dict(variant="scent", negatives="in_batch")),
        ("SCENT (uniform)", dict(variant="scent", negatives="uniform")),
        ("SOX", dict(variant="sox", negatives="in_batch")),
        (
            "SOX (weighted in-batch)",
            dict(variant="sox", negatives="in_batch_weighted"),
        ),
        ("SGD on nu", dict(variant="sgd", negatives="in_batch")),
        ("BSGD", dict(variant="bsgd", negatives="in_batch")),
    ]
}
METHODS.update(
    {
        "U-max m=5": (
            lambda: UMaxSoftmaxClassifier(),
            [0.01, 0.03, 0.1, 0.3, 1.0],
        ),
        "Implicit SGD m=1": (
            lambda: ImplicitSGDClassifier(),
            [0.1, 1.0, 10.0, 100.0],
        ),
    }
)


def train_for(make, eta0, X, y, budget):
    """Warm-started one-epoch fits until ``budget`` seconds of fitting.

    Returns (model or None if it diverged, epochs, seconds).
    """
    clf = make().set_params(
        eta0=eta0,
        learning_rate="constant",
        warm_start=True,
        max_iter=1,
        tol=None,
        random_state=0,
    )
    spent, epochs = 0.0, 0
    while spent < budget:
        start = time.perf_counter()
        try:
            clf.fit(X, y)
        except DivergenceError:
            return None, epochs, spent
        spent += time.perf_counter() - start
        epochs += 1
    return clf, epochs, spent


def equal_budget_table(name, X, y, X_test, y_test, budget, scale):
    n_cls = np.unique(y).shape[0]
    print(
        f"\n== {name}: {X.shape[0]} training rows, {X_test.shape[0]} test "
        f"rows, {X.shape[1]} features, {n_cls} classes, "
        f"{X.nnz / X.shape[0]:.1f} nnz/row; budget {budget:g} s of fitting "
        f"per method, eta0 picked by training log-loss after {budget / 4:g} s"
    )
    print(
        f"{'method':<24}{'eta0':>10}{'epochs':>8}{'s/epoch':>9}"
        f"{'train loss':>12}{'test loss':>11}"
    )
    rows = {}
    for method, (make, grid) in METHODS.items():
        best = (np.inf, None)
        for eta in grid:
            clf, _, _ = train_for(make, eta * scale, X, y, budget / 4)
            loss = clf.log_loss(X, y) if clf is not None else np.inf
            if not np.isfinite(loss):
                loss = np.inf
            if loss < best[0]:
                best = (loss, eta * scale)
        if best[1] is None:
            print(f"{method:<24}{'all diverged':>10}")
            continue
        clf, epochs, spent = train_for(make, best[1], X, y, budget)
        if clf is None:
            print(f"{method:<24}{best[1]:>10.3g}  diverged")
            continue
        train, test = clf.log_loss(X, y), clf.log_loss(X_test, y_test)
        rows[method] = (train, test)
        print(
            f"{method:<24}{best[1]:>10.3g}{epochs:>8}"
            f"{spent / epochs:>9.4f}{train:>12.4f}{test:>11.4f}"
        )
    print(f"(log K = {np.log(n_cls):.4f}: the loss of the zero model)")
    return rows


def distinct_per_batch(n_classes, n_samples, n_features, density):
    _, y = make_softmax_classification(
        n_samples=n_samples,
        n_features=n_features,
        n_classes=n_classes,
        density=density,
        random_state=0,
    )
    y = np.random.default_rng(0).permutation(y)
    n_full = (len(y) // BATCH) * BATCH
    return np.mean([np.unique(b).size for b in y[:n_full].reshape(-1, BATCH)])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small budgets")
    parser.add_argument(
        "--budget",
        type=float,
        default=None,
        help="seconds of fitting per method (default 8 on Bibtex, 20 on "
        "the synthetic problem; --quick: 2 and 5)",
    )
    args = parser.parse_args()

    import numpy  # noqa: E401
    import scipy
    import sklearn

    import sksoftmax

    print(
        f"numpy {numpy.__version__}, scipy {scipy.__version__}, "
        f"scikit-learn {sklearn.__version__}, sksoftmax "
        f"{sksoftmax.__version__}; seeds 0; batch_size {BATCH}"
    )
    checks = []
    try:
        X, y, X_test, y_test = load_bibtex(normalize=True)
    except OSError as exc:
        print(f"Bibtex skipped: {exc}")
    else:
        seen = np.isin(y_test, y)
        print(
            f"Bibtex: {np.sum(~seen)} of {len(y_test)} test rows dropped "
            "(label absent from training)"
        )
        budget = args.budget or (2.0 if args.quick else 8.0)
        equal_budget_table(
            "Bibtex", X, y, X_test[seen], y_test[seen], budget, 1.0
        )

    n_train = 10000 if args.quick else 20000
    Xa, ya = make_softmax_classification(
        n_samples=n_train + 5000,
        n_features=2000,
        n_classes=10000,
        density=0.005,
        random_state=0,
    )
    X, y = Xa[:n_train], ya[:n_train]
    seen = np.isin(ya[n_train:], y)
    X_test, y_test = Xa[n_train:][seen], ya[n_train:][seen]
    # count features: the unit-norm rates divided by the median squared norm
    sq = np.asarray(X.multiply(X).sum(axis=1)).ravel()
    budget = args.budget or (5.0 if args.quick else 20.0)
    equal_budget_table(
        "synthetic planted softmax, 10,000 classes",
        X,
        y,
        X_test,
        y_test,
        budget,
        1.0 / np.median(sq),
    )

    sizes = [1000, 10000, 100000]
    shape = dict(n_samples=n_train, n_features=1000, density=0.01)
    rows = scaling(
        "SCENTClassifier",
        sizes,
        epochs=4,
        repeats=1 if args.quick else 2,
        **shape,
    )
    print("distinct labels per minibatch of 128 (shuffled rows):")
    for k in sizes:
        print(f"{k:>10}{distinct_per_batch(k, **shape):>8.1f}")
    ratio = rows[-1]["epoch_s"] / rows[0]["epoch_s"]
    checks.append(
        (
            "SCENT s/epoch at 100,000 classes <= 2x at 1,000",
            ratio <= 2.0,
            f"{ratio:.2f}x",
        )
    )
    return report(checks)


if __name__ == "__main__":
    sys.exit(main())
