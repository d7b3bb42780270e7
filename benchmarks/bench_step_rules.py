"""The exact solver's two step rules on bench_defaults.py's sets.

Why the default misses on ``docstrings_thirdparty`` (the user guide's
"Two sets nobody tuned on"): the exact solver and SCENT differ in two
ways, the gradient (every class, or a sample of them) and the step
(per-feature AdaGrad-norm, or one step for every weight). This script
takes the gradient out of the question. It fits
``SoftmaxClassifier(solver='exact')`` with its defaults twice per set:

- ``adagrad``: the package's exact solver, feature j stepping by
  ``eta / sqrt(G_j)``;
- ``constant``: the same kernel with one step ``eta`` for every weight
  (``ExactSolver(adaptive=False)``, the private switch
  ``SoftmaxClassifier._exact_adaptive``); the pilot chooses eta, and a
  plateau halves it and restarts from the start, as for the sampled
  solvers.

and prints, per rule, the best held-out log-loss of the fit (what a
choice between the rules made while fitting would see), the test
log-loss, top-1 and the CPU seconds. The rows are bench_defaults.py's.

Usage (from benchmarks/)::

    python bench_step_rules.py --sets bibtex,docstrings,docstrings_thirdparty \\
        --out results/step_rules.md
"""

import argparse
import time

import numpy as np
from bench_defaults import model_scores, prepare

from sksoftmax import SoftmaxClassifier

RULES = ("adagrad", "constant")


def fit_rule(data, n_classes, rule, seed):
    """(held-out best, test log-loss, top-1, CPU s, epochs, eta0_)."""
    clf = SoftmaxClassifier(solver="exact", random_state=seed)
    clf._exact_step_rule = rule
    start = time.process_time()
    clf.fit(data["X_train"], data["y_train"])
    cpu = time.process_time() - start
    loss, top1 = model_scores(clf, data, n_classes)
    held = np.nanmin(clf.validation_loss_) if clf.validation_loss_ else np.nan
    return held, loss, top1, cpu, clf.n_iter_, clf.eta0_


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sets", default="bibtex,docstrings,docstrings_thirdparty")
    p.add_argument("--seeds", default="0")
    p.add_argument("--out", default=None, help="a markdown table here")
    args = p.parse_args()
    lines = [
        "| set | seed | rule | held-out best | test log-loss | top-1 | CPU s "
        "| epochs | eta0_ |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name in args.sets.split(","):
        data, facts = prepare(name)
        print(
            f"{name}: {facts['n_train']} rows, {facts['n_classes']} classes,"
            f" {facts['nnz_per_row']:.1f} nonzeros a row", flush=True
        )
        for seed in map(int, args.seeds.split(",")):
            for rule in RULES:
                held, loss, top1, cpu, epochs, eta = fit_rule(
                    data, facts["n_classes"], rule, seed
                )
                line = (
                    f"| {name} | {seed} | {rule} | {held:.4f} | {loss:.4f} | "
                    f"{top1:.4f} | {cpu:.1f} | {epochs} | {eta:.3g} |"
                )
                lines.append(line)
                print(line, flush=True)
    table = "\n".join(lines)
    if args.out:
        with open(args.out, "w") as f:
            f.write(
                "# The exact solver's step rules (bench_step_rules.py)\n\n"
                "SoftmaxClassifier(solver='exact') with its defaults; "
                "held-out: the fit's own held-out rows.\n\n" + table + "\n"
            )


if __name__ == "__main__":
    main()
