"""Small problems: SoftmaxClassifier() against LogisticRegression.

Where ``solver='auto'`` takes 'lbfgs' (dense data, a cheap penalty path)
and, for the rule's other side, small sparse problems: the test log-loss
and CPU seconds of ``SoftmaxClassifier()`` with no arguments (seeds 0, 1,
2), of ``SoftmaxClassifier(solver='exact')`` (the stochastic
exact-gradient path 'auto' took before) and ``solver='lbfgs'``, and of
scikit-learn's LogisticRegression(lbfgs) at its best of five C on the
test rows (an oracle choice), on scikit-learn's bundled tables (wine,
breast cancer, iris, digits scaled and unscaled), four
make_classification sets (one with features rescaled by log-normal
factors; two, of 8,000 and 30,000 rows, rescaled and shifted by 5:
uncentred columns) and three sparse make_softmax_classification sets.
75/25 stratified split, seed 0. Run::

    OPENBLAS_NUM_THREADS=1 python bench_small_dense.py [--out FILE]
"""

import argparse
import platform
import time
import warnings

import numpy as np
import sklearn
from bench_lbfgs_floor import Counter
from sklearn.datasets import (
    load_breast_cancer,
    load_digits,
    load_iris,
    load_wine,
    make_classification,
)
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

from sksoftmax import SoftmaxClassifier
from sksoftmax.datasets import make_softmax_classification

SEEDS = (0, 1, 2)
CS = (0.01, 0.1, 1.0, 10.0, 100.0)


def data_sets():
    X, y = make_classification(
        n_samples=4000, n_features=40, n_informative=20, n_classes=8,
        n_clusters_per_class=2, random_state=0)
    scale = np.random.RandomState(1).lognormal(0, 2, X.shape[1])
    Xd, yd = load_digits(return_X_y=True)
    sets = {}
    for n in (8000, 30000):
        # uncentred, unscaled columns, as raw tabular data come
        Xo, yo = make_classification(
            n_samples=n, n_features=54, n_informative=27, n_classes=7,
            n_clusters_per_class=2, flip_y=0.05, random_state=0)
        shift = np.random.RandomState(1).lognormal(0, 2, 54)
        sets[f"make_classification_offset_{n}"] = (Xo * shift + 5.0, yo)
    for n, d, k, density in ((800, 100, 20, 0.05), (2000, 300, 10, 0.02),
                             (3000, 200, 30, 0.05)):
        sets[f"softmax_sparse_{n}x{d}_K{k}"] = make_softmax_classification(
            n_samples=n, n_features=d, n_classes=k, density=density,
            random_state=0)
    return {
        "wine": load_wine(return_X_y=True),
        "breast_cancer": load_breast_cancer(return_X_y=True),
        "iris": load_iris(return_X_y=True),
        "make_classification": (X, y),
        "make_classification_rescaled": (X * scale, y),
        "digits": (Xd / 16.0, yd),
        "digits_raw": (Xd, yd),
        **sets,
    }


def log_loss(proba, y):
    return float(-np.log(np.maximum(proba[np.arange(y.shape[0]), y],
                                    1e-300)).mean())


def timed(make, X, y):
    start = time.process_time()
    model = make().fit(X, y)
    return model, time.process_time() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", help="also write the table to this file")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    lines = [
        "# Small dense problems: SoftmaxClassifier() against "
        "LogisticRegression",
        "",
        f"{platform.machine()}, Python {platform.python_version()}, numpy "
        f"{np.__version__}, scikit-learn {sklearn.__version__}. Test "
        "log-loss (CPU s); seeds 0, 1, 2 of `random_state`.",
        "",
        "| set | rows x features, K | default: solver_ | default | "
        "solver='exact' | solver='lbfgs' | LogisticRegression best C | "
        "default / LR - 1 (worst seed) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    evaluations = {}
    for name, (X, y) in data_sets().items():
        Xtr, Xte, ytr, yte = train_test_split(
            X, y, test_size=0.25, stratify=y, random_state=0)
        K = np.unique(y).shape[0]
        runs = {"default": [], "exact": [], "lbfgs": []}
        solver = None
        for seed in SEEDS:
            for key, kw in (("default", {}), ("exact", {"solver": "exact"}),
                            ("lbfgs", {"solver": "lbfgs"})):
                with Counter() as count:
                    model, cpu = timed(
                        lambda: SoftmaxClassifier(random_state=seed, **kw),
                        Xtr, ytr)
                if key == "lbfgs":
                    evaluations[name] = evaluations.get(name, 0) + count.evals
                runs[key].append((log_loss(model.predict_proba(Xte), yte),
                                  cpu))
                if key == "default":
                    solver = model.solver_
        best = None
        for C in CS:
            model, cpu = timed(
                lambda: LogisticRegression(C=C, max_iter=1000), Xtr, ytr)
            loss = log_loss(model.predict_proba(Xte), yte)
            if best is None or loss < best[0]:
                best = (loss, C, cpu)

        def cell(rs):
            return ", ".join(f"{v:.4f} ({c:.2f})" for v, c in rs)

        worst = max(v for v, _ in runs["default"])
        lines.append(
            f"| {name} | {Xtr.shape[0]} x {Xtr.shape[1]}, {K} | {solver} | "
            f"{cell(runs['default'])} | {cell(runs['exact'])} | "
            f"{cell(runs['lbfgs'])} | "
            f"{best[0]:.4f} (C={best[1]:g}, {best[2]:.2f}) | "
            f"{100 * (worst / best[0] - 1):+.1f}% |"
        )
        print(lines[-1], flush=True)
    lines += [
        "",
        "L-BFGS evaluations of the objective in the solver='lbfgs' fits "
        f"(three seeds): {sum(evaluations.values()):,} in all; "
        + ", ".join(f"{k} {v:,}" for k, v in evaluations.items()) + ".",
    ]
    text = "\n".join(lines) + "\n"
    print()
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
