"""Implicit SGD against U-max and plain double-sum SGD (Fagan & Iyengar 2018).

On Bibtex (../shared/data, the paper's protocol: first label, unit L2 rows):

1. the learning-rate protocol of Sec. 4.1 for each method: 50 epochs on the
   first 10% of the rows for eta0 in 10^-3 .. 10^3, keep the eta0 with the
   lowest exact training log-loss (a run that diverges counts as +inf);
2. 50 epochs on all rows at the chosen eta0: exact training log-loss (from
   the logits) and the seconds of the 50 kernel epochs;
3. Implicit SGD's log-loss after 50 epochs at every eta0 of the grid (the
   paper's Fig. 2: robustness to the learning rate);

then Implicit SGD's per-epoch time at 100 ... 100,000 classes with rows,
features and nonzeros per row fixed.

Targets (issue 3): Implicit's final log-loss below U-max's (m=5) and plain
SGD's; its 50 epochs no slower than U-max's; its log-loss at the worst eta0
of the grid within 2x of the best; per-epoch time at 100,000 classes within
2x of 100. Prints PASS/FAIL per target, exits 1 if one fails.

Usage::

    python benchmarks/bench_implicit.py [--quick]
"""

import argparse
import sys
import warnings

import numpy as np
from _harness import fit_verbose, load_bibtex, report, scaling
from sklearn.exceptions import ConvergenceWarning

from sksoftmax import (
    DivergenceError,
    ImplicitSGDClassifier,
    UMaxSoftmaxClassifier,
)

warnings.simplefilter("ignore", ConvergenceWarning)
GRID = 10.0 ** np.arange(-3, 4)
METHODS = {
    "Implicit SGD (m=1)": lambda eta0: ImplicitSGDClassifier(
        eta0=eta0, max_iter=50, tol=None, random_state=0
    ),
    "U-max (m=5)": lambda eta0: UMaxSoftmaxClassifier(
        n_sampled_classes=5, eta0=eta0, max_iter=50, tol=None, random_state=0
    ),
    "plain SGD (m=5)": lambda eta0: UMaxSoftmaxClassifier(
        n_sampled_classes=5,
        delta=None,
        eta0=eta0,
        max_iter=50,
        tol=None,
        random_state=0,
    ),
}


def run(make, eta0, X, y):
    """(exact training log-loss, kernel seconds of 50 epochs) or (inf, nan)."""
    clf = make(eta0)
    try:
        seconds = fit_verbose(clf, X, y)
    except DivergenceError:
        return np.inf, np.nan
    return clf.log_loss(X, y), float(np.sum(seconds))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="one run per size in the scaling part",
    )
    args = parser.parse_args()
    import scipy  # noqa: E401
    import sklearn

    import sksoftmax

    print(
        f"numpy {np.__version__}, scipy {scipy.__version__}, scikit-learn "
        f"{sklearn.__version__}, sksoftmax {sksoftmax.__version__}; "
        "random_state 0 everywhere"
    )
    checks = []
    try:
        X, y, _, _ = load_bibtex(normalize=True)
    except OSError as exc:
        print(f"Bibtex skipped: {exc}")
    else:
        n_tune = X.shape[0] // 10
        print(
            f"\n== Bibtex: {X.shape[0]} rows, {np.unique(y).shape[0]} "
            f"classes; eta0 tuned on the first {n_tune} rows, 50 epochs"
        )
        header = "".join(f"{g:>10.0e}" for g in GRID)
        print(f"{'tuning log-loss':<22}{header}")
        chosen = {}
        for name, make in METHODS.items():
            losses = [run(make, g, X[:n_tune], y[:n_tune])[0] for g in GRID]
            chosen[name] = GRID[int(np.argmin(losses))]
            print(f"{name:<22}" + "".join(f"{v:>10.4f}" for v in losses))
        print(
            f"\n{'method':<22}{'eta0':>8}{'train log-loss':>16}"
            f"{'50 epochs s':>13}"
        )
        final = {}
        for name, make in METHODS.items():
            loss, secs = run(make, chosen[name], X, y)
            final[name] = (loss, secs)
            print(f"{name:<22}{chosen[name]:>8.0e}{loss:>16.4f}{secs:>13.3f}")
        imp, umax, plain = (final[k] for k in METHODS)
        checks.append(
            (
                "Implicit log-loss < U-max's and plain SGD's",
                imp[0] < umax[0] and imp[0] < plain[0],
                f"{imp[0]:.4f} vs {umax[0]:.4f}, {plain[0]:.4f}",
            )
        )
        checks.append(
            (
                "Implicit 50 epochs no slower than U-max m=5",
                imp[1] <= umax[1],
                f"{imp[1]:.3f} s vs {umax[1]:.3f} s "
                f"(ratio {imp[1] / umax[1]:.2f}; paper 0.65)",
            )
        )
        print("\nImplicit SGD, all rows, 50 epochs, by eta0:")
        robust = [run(METHODS["Implicit SGD (m=1)"], g, X, y)[0] for g in GRID]
        print(header)
        print("".join(f"{v:>10.4f}" for v in robust))
        ratio = max(robust) / min(robust)
        checks.append(
            (
                "Implicit log-loss at worst eta0 <= 2x best",
                ratio <= 2.0,
                f"{ratio:.2f}x (worst eta0 "
                f"{GRID[int(np.argmax(robust))]:.0e})",
            )
        )

    rows = scaling(
        "ImplicitSGDClassifier",
        [100, 1000, 10000, 100000],
        n_samples=20000,
        n_features=1000,
        density=0.02,
        epochs=11,
        repeats=1 if args.quick else 3,
    )
    ratio = rows[-1]["epoch_s"] / rows[0]["epoch_s"]
    checks.append(
        (
            "s/epoch at 100,000 classes <= 2x at 100",
            ratio <= 2.0,
            f"{ratio:.2f}x",
        )
    )
    return report(checks)


if __name__ == "__main__":
    sys.exit(main())
