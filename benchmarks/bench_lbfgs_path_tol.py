"""The 'lbfgs' path's tolerance factor, chosen leave-one-dataset-out.

The penalty path of ``SoftmaxClassifier(solver='lbfgs')`` fits each
(fold, penalty) only to rank the penalties by held-out loss; the final fit
on every row runs to ``tol``. This script fits ``solver='lbfgs'``
(``random_state`` 0) on the dense sets of ``bench_small_dense.py`` with
the path's fits stopped at ``factor x tol`` for each factor of FACTORS,
and records the test log-loss, the kept penalty, L-BFGS's function
evaluations and CPU seconds.

The rule: the largest factor whose test log-loss is within TOLERANCE of
factor 1's on every set. Leave-one-dataset-out: for each set, the rule
applied to the other sets only, and that factor's result on the set left
out. Run::

    OPENBLAS_NUM_THREADS=1 python bench_lbfgs_path_tol.py [--out FILE]
"""

import argparse
import platform
import time
import warnings

import numpy as np
import scipy.sparse as sp
import sklearn
from bench_small_dense import data_sets, log_loss
from sklearn.model_selection import train_test_split

import sksoftmax._full_batch as full_batch
from sksoftmax import SoftmaxClassifier

FACTORS = (1.0, 3.0, 10.0, 30.0, 100.0)
# the most a factor may raise a set's test log-loss over factor 1's
TOLERANCE = 0.005


def run(X_train, y_train, X_test, y_test, factor):
    """Test log-loss, kept penalty, evaluations and CPU s at ``factor``."""
    evals = [0]
    minimize = full_batch.minimize

    def counting(*args, **kwargs):
        result = minimize(*args, **kwargs)
        evals[0] += result.nfev
        return result

    saved = full_batch.PATH_TOL_FACTOR
    full_batch.PATH_TOL_FACTOR = factor
    full_batch.minimize = counting
    try:
        start = time.process_time()
        model = SoftmaxClassifier(solver="lbfgs", random_state=0)
        model.fit(X_train, y_train)
        cpu = time.process_time() - start
    finally:
        full_batch.PATH_TOL_FACTOR = saved
        full_batch.minimize = minimize
    loss = log_loss(model.predict_proba(X_test), y_test)
    return dict(loss=loss, alpha=float(np.max(model.alpha_)), evals=evals[0],
                cpu=cpu)


def largest_factor(results, sets):
    """The rule on ``sets``: the largest factor within TOLERANCE of factor
    1's test log-loss on each of them."""
    ok = [f for f in FACTORS if all(
        results[s][f]["loss"] <= (1 + TOLERANCE) * results[s][1.0]["loss"]
        for s in sets)]
    return max(ok)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", help="also write the tables to this file")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    results = {}
    for name, (X, y) in data_sets().items():
        if sp.issparse(X):
            continue  # 'auto' takes 'lbfgs' for dense data only
        Xtr, Xte, ytr, yte = train_test_split(
            X, y, test_size=0.25, stratify=y, random_state=0)
        results[name] = {f: run(Xtr, ytr, Xte, yte, f) for f in FACTORS}
        print(name, {f: round(r["loss"], 5) for f, r in
                     results[name].items()}, flush=True)
    names = list(results)
    lines = [
        "# The 'lbfgs' path's tolerance factor",
        "",
        f"{platform.machine()}, Python {platform.python_version()}, numpy "
        f"{np.__version__}, scikit-learn {sklearn.__version__}. "
        "`SoftmaxClassifier(solver='lbfgs', random_state=0)`, the path's "
        "fits stopped at factor x tol (the final fit at tol); test "
        "log-loss, L-BFGS function evaluations and CPU s per factor.",
        "",
        "| set | " + " | ".join(f"factor {f:g}" for f in FACTORS) + " |",
        "|---" * (1 + len(FACTORS)) + "|",
    ]
    for name in names:
        cells = [
            f"{r['loss']:.5f} ({r['evals']}, {r['cpu']:.2f} s)"
            for r in results[name].values()
        ]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Kept penalty (largest alpha_) per factor: "
        + "; ".join(
            f"{name} " + ", ".join(
                f"{r['alpha']:.3g}" for r in results[name].values())
            for name in names),
        "",
        f"Leave-one-dataset-out: the largest factor within {TOLERANCE:.1%} "
        "of factor 1's test log-loss on every other set, and its result "
        "on the set left out.",
        "",
        "| set left out | factor chosen on the others | its test log-loss / "
        "factor 1's - 1 | its evaluations / factor 1's |",
        "|---|---|---|---|",
    ]
    for name in names:
        f = largest_factor(results, [s for s in names if s != name])
        r, r1 = results[name][f], results[name][1.0]
        lines.append(
            f"| {name} | {f:g} | {100 * (r['loss'] / r1['loss'] - 1):+.2f}% "
            f"| {r['evals'] / r1['evals']:.2f} |"
        )
    lines += ["", f"On all sets: factor {largest_factor(results, names):g}."]
    text = "\n".join(lines) + "\n"
    print()
    print(text)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)


if __name__ == "__main__":
    main()
