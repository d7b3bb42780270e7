"""What choosing the penalty costs 'lbfgs', against LogisticRegression's
fit at its best C (issue 32's CPU target on digits and digits_raw).

On the two digits sets of ``bench_defaults.py`` (the same 75/25 split),
this prints, CPU seconds the median of ``--repeats`` runs on one thread:

- LogisticRegression(lbfgs) at each C of bench_defaults' grid: test
  log-loss, iterations, CPU seconds; the best C is chosen on the test
  rows (an oracle: the user would have to choose it too);
- ``SoftmaxClassifier()`` (solver_ 'lbfgs'): test log-loss, CPU seconds,
  L-BFGS evaluations of the objective in all (the penalty path on its
  folds and the final fit), the path's fits and their mean evaluations;
- one L-BFGS fit from zero on every training row at the penalty the
  default chose (``alpha_``), as if it had been known: evaluations, CPU;
- the budget left for choosing the penalty: LogisticRegression's best-C
  CPU minus that one fit, in evaluations of the default's own cost per
  evaluation, against the evaluations of one fit of the path;
- the L2 floor: the least test log-loss of the model 'lbfgs' fits, at
  per-feature penalties lam x var_j^p (p = 0: the 'raw' profile, 1:
  'std', and three between), lam on a grid of 8 points a decade from
  1e-1 to 1e-6 chosen on the test rows (an oracle no rule can beat):
  how close any choice of the penalty can come to bench_defaults' best
  tuned value.

Run::

    OPENBLAS_NUM_THREADS=1 python bench_lbfgs_floor.py [--repeats 5]
"""

import argparse
import time
import warnings

import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss as sk_log_loss
from sklearn.model_selection import train_test_split

import sksoftmax._full_batch as full_batch
from sksoftmax import SoftmaxClassifier
from sksoftmax._solver import exact_log_loss

# bench_defaults.py's LogisticRegression grid (C = 1 / (n alpha) there)
CS = (1 / 90, 1 / 30, 0.1, 0.3, 1.0, 3.0, 10.0)


class Counter:
    """Counts evaluations of the 'lbfgs' objective (``_Problem``) and the
    fits of the path (``FullBatchSolver._fit``)."""

    def __enter__(self):
        self.evals, self.fits = 0, []
        self._call = full_batch._Problem.__call__
        self._fit = full_batch.FullBatchSolver._fit
        counter = self

        def call(problem, u):
            counter.evals += 1
            return counter._call(problem, u)

        def fit(solver, *args, **kwargs):
            before = counter.evals
            out = counter._fit(solver, *args, **kwargs)
            counter.fits.append(counter.evals - before)
            return out

        full_batch._Problem.__call__ = call
        full_batch.FullBatchSolver._fit = fit
        return self

    def __exit__(self, *exc):
        full_batch._Problem.__call__ = self._call
        full_batch.FullBatchSolver._fit = self._fit


def median_cpu(run, repeats):
    seconds, out = [], None
    for _ in range(repeats):
        t = time.process_time()
        out = run()
        seconds.append(time.process_time() - t)
    return float(np.median(seconds)), out


def one_set(name, scale, repeats):
    X, y = load_digits(return_X_y=True)
    X = X / scale
    Xtr, Xte, ytr, yte = train_test_split(
        X, y, test_size=0.25, stratify=y, random_state=0)
    print(f"\n## {name} ({Xtr.shape[0]} x {Xtr.shape[1]}, "
          f"{np.unique(y).shape[0]} classes)\n")
    print("| LogisticRegression C | test log-loss | iterations | CPU s |")
    print("|---|---|---|---|")
    best = None
    for C in CS:
        cpu, lr = median_cpu(
            lambda: LogisticRegression(C=C, max_iter=500).fit(Xtr, ytr),
            repeats)
        loss = sk_log_loss(yte, lr.predict_proba(Xte))
        print(f"| {C:.4g} | {loss:.4f} | {int(lr.n_iter_[0])} | {cpu:.3f} |")
        if best is None or loss < best[0]:
            best = (loss, C, cpu, int(lr.n_iter_[0]))

    with Counter() as count:
        clf = SoftmaxClassifier(random_state=0).fit(Xtr, ytr)
    evals, fits = count.evals, count.fits
    cpu_default, clf = median_cpu(
        lambda: SoftmaxClassifier(random_state=0).fit(Xtr, ytr), repeats)
    per_eval = cpu_default / evals
    loss_default = clf.log_loss(Xte, yte)

    K, D = clf.classes_.shape[0], Xtr.shape[1]
    w = np.full(Xtr.shape[0], 1.0 / Xtr.shape[0])

    def known_penalty():
        return full_batch.lbfgs_fit(
            Xtr, ytr, w, K, clf.alpha_, np.zeros((K, D)), np.zeros(K),
            fit_intercept=True, tol=full_batch.GTOL_PER_TOL * clf.tol,
            max_iter=clf.max_iter)

    with Counter() as count:
        known_penalty()
    cpu_known, (W, b, _, _) = median_cpu(known_penalty, repeats)
    loss_known = exact_log_loss(W, b, Xte, yte, None)
    path_fits = fits[:-1]
    budget = (best[2] - cpu_known) / per_eval

    print()
    print(f"- LogisticRegression at its best C ({best[1]:.4g}, chosen on "
          f"the test rows): {best[0]:.4f} in {best[3]} iterations, "
          f"{best[2]:.3f} CPU s")
    print(f"- SoftmaxClassifier() (solver_ {clf.solver_!r}): {loss_default:.4f}"
          f" in {cpu_default:.3f} CPU s; {evals} evaluations "
          f"({1e3 * per_eval:.3f} ms each): {len(path_fits)} path fits "
          f"of {np.mean(path_fits):.0f} evaluations on average, "
          f"the final fit {fits[-1]}")
    print(f"- one fit from zero at the penalty it chose, as if known: "
          f"{loss_known:.4f} in {count.evals} evaluations, "
          f"{cpu_known:.3f} CPU s ({cpu_known / best[2]:.2f}x "
          "LogisticRegression's best-C fit)")
    print(f"- left for choosing the penalty within LogisticRegression's "
          f"time: {best[2] - cpu_known:.3f} CPU s = {budget:.0f} "
          f"evaluations = {budget / np.mean(path_fits):.1f} path fits")

    floor = l2_floor(Xtr, ytr, Xte, yte)
    print("\nThe L2 floor (lam chosen on the test rows):\n")
    print("| penalty shape | best lam | test log-loss |")
    print("|---|---|---|")
    for p, (loss, lam) in floor.items():
        print(f"| var^{p:g} | {lam:.3g} | {loss:.4f} |")
    least = min(loss for loss, _ in floor.values())
    print(f"\n- least: {least:.4f}; the default's {loss_default:.4f} is "
          f"{loss_default / least - 1:+.2%} above it")


# the L2 floor's grid: lam = 10^-1 .. 10^-6, 8 points a decade, and the
# exponents p of the penalty's shape var_j^p
FLOOR_LAMS = 10.0 ** np.linspace(-1, -6, 41)
FLOOR_POWERS = (0.0, 0.25, 0.5, 0.75, 1.0)


def l2_floor(Xtr, ytr, Xte, yte):
    """Per shape exponent p: (least test log-loss, its lam) of the
    'lbfgs' objective at penalties lam x var^p (normalised to mean one),
    each fit from the last one's solution (lam decreasing) to a gradient
    tolerance of 1e-8."""
    K, D = np.unique(ytr).shape[0], Xtr.shape[1]
    w = np.full(Xtr.shape[0], 1.0 / Xtr.shape[0])
    var = Xtr.var(axis=0)
    out = {}
    for p in FLOOR_POWERS:
        shape = np.where(var > 0, var, 1.0) ** p
        shape /= shape.mean()
        W, b = np.zeros((K, D)), np.zeros(K)
        best = (np.inf, None)
        for lam in FLOOR_LAMS:
            W, b, _, _ = full_batch.lbfgs_fit(
                Xtr, ytr, w, K, lam * shape, W, b, fit_intercept=True,
                tol=1e-8, max_iter=5000)
            loss = exact_log_loss(W, b, Xte, yte, None)
            if loss < best[0]:
                best = (loss, lam)
        out[p] = best
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    for name, scale in (("digits", 16.0), ("digits_raw", 1.0)):
        one_set(name, scale, args.repeats)


if __name__ == "__main__":
    main()
