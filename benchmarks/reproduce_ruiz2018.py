"""Ruiz et al. (2018), augment and reduce: Tables 2 and 3 on Bibtex, Sec. 4.1.

Prints, beside the paper's figures:

- Bibtex (../shared/data, the paper's protocol: first label, raw binary
  features; the 3 test rows whose label never occurs in training are left
  out): test log-likelihood per row and accuracy of the exact softmax
  (scikit-learn's LogisticRegression, unpenalised, run in the same job),
  OVE (``SampledSoftmaxClassifier(loss="ove")`` if the package has it,
  else n/a) and the three A&R models with their defaults (|B| = 488,
  |S| = 20, the paper's schedule ``learning_rate='kucukelbir'``, 5,000
  iterations = 500 epochs), as
  Table 3;
- A&R's time per epoch (median kernel seconds of the verbose lines, and the
  process CPU seconds per epoch) beside Table 2;
- the synthetic experiment of Sec. 4.1: 10^4 classes with p_k proportional
  to squared uniforms, N = 3 x 10^5 labels, no covariates (only the class
  biases), |B| = 500, |S| = 100, epochs for at most ``--synthetic-seconds``
  (5 minutes, shared by a run with the paper's 'kucukelbir' schedule and one
  with the package's exponential schedule): the mean absolute error of the
  fitted probabilities against the empirical frequencies (the exact MLE)
  and against the true p_k, beside the paper's 3.00e-6 (A&R) and 3.65e-6
  (OVE), and the time per epoch beside the paper's 0.196 minutes.

Targets (issue 5): Bibtex test log-likelihood / accuracy of A&R softmax
>= -3.036 / 0.361, probit >= -4.184 / 0.346, logistic >= -3.151 / 0.353;
time per epoch <= 1/5 of the paper's (0.188, 0.244, 0.246 s). Exits 1 if
one fails. Timings are wall-clock on a shared machine: read them with the
load in mind (CPU seconds are printed too).

Usage::

    python benchmarks/reproduce_ruiz2018.py [--epochs 500]
        [--synthetic-seconds 300] [--skip-bibtex] [--skip-synthetic]
"""

import argparse
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp
from _harness import QUICK_HELP, fit_verbose, load_bibtex, report
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

import sksoftmax
from sksoftmax import (
    ARLogisticClassifier,
    ARProbitClassifier,
    ARSoftmaxClassifier,
)

warnings.simplefilter("ignore", ConvergenceWarning)

# Ruiz et al. (2018), Bibtex rows of Tables 2 and 3
PAPER_TABLE3 = {
    "exact softmax": (-3.188, 0.361),
    "OVE": (-3.300, 0.352),
    "A&R softmax": (-3.036, 0.361),
    "A&R probit": (-4.184, 0.346),
    "A&R logistic": (-3.151, 0.353),
}
PAPER_TABLE2 = {
    "OVE": 0.181,
    "A&R softmax": 0.188,
    "A&R probit": 0.244,
    "A&R logistic": 0.246,
}
AR_MODELS = {
    "A&R softmax": ARSoftmaxClassifier,
    "A&R probit": ARProbitClassifier,
    "A&R logistic": ARLogisticClassifier,
}


def test_scores(clf, X, y):
    """Mean test log-likelihood per row (eq. 1 or eq. 5) and accuracy."""
    return -clf.log_loss(X, y), clf.score(X, y)


def bibtex(epochs, checks):
    X, y, Xt, yt = load_bibtex(normalize=False)
    known = np.isin(yt, y)
    Xt, yt = Xt[known], yt[known]
    print(
        f"== Bibtex: {X.shape[0]} train / {Xt.shape[0]} test rows "
        f"({(~known).sum()} test rows of unseen labels dropped), "
        f"{X.shape[1]} binary features, {np.unique(y).size} classes"
    )
    rows, times = {}, {}

    # The exact softmax twice: the maximum likelihood itself (unpenalised,
    # lbfgs to convergence: Bibtex is separable enough that it overfits),
    # and scikit-learn's default L2 penalty (C = 1), for scale. The paper's
    # "exact" row is its own stochastic fit for a fixed number of steps.
    for name, C in (("exact softmax", np.inf), ("exact, L2 C=1", 1.0)):
        start = time.perf_counter()
        exact = LogisticRegression(C=C, max_iter=500).fit(X, y)
        idx = np.searchsorted(exact.classes_, yt)
        ll = np.mean(exact.predict_log_proba(Xt)[np.arange(len(yt)), idx])
        rows[name] = (ll, exact.score(Xt, yt))
        print(
            f"LogisticRegression(C={C}): "
            f"{time.perf_counter() - start:.1f} s"
        )

    ove_cls = getattr(sksoftmax, "SampledSoftmaxClassifier", None)
    if ove_cls is not None:
        ove = ove_cls(loss="ove", random_state=0)
        seconds = fit_verbose(ove, X, y)
        rows["OVE"] = test_scores(ove, Xt, yt)
        times["OVE"] = (float(np.median(seconds)), np.nan)
    else:
        rows["OVE"] = None

    for name, cls in AR_MODELS.items():
        # the paper's schedule and rho_0 (Sec. 4): the softmax's defaults
        # are now 'adagrad' and, under 'kucukelbir', rho_0 = 1, tuned for
        # ten epochs; over the paper's 5,000 steps 1 overfits Bibtex (test
        # log-likelihood -12.5); probit and logistic take the paper's
        # gradient local step (Sec. 4), not the package's natural one; a
        # fixed number of epochs, as the paper runs a fixed number of steps
        clf = cls(
            max_iter=epochs,
            tol=None,
            random_state=0,
            learning_rate="kucukelbir",
            eta0=0.02,
            variant="paper",
        )
        cpu = time.process_time()
        seconds = fit_verbose(clf, X, y)
        cpu = (time.process_time() - cpu) / epochs
        times[name] = (float(np.median(seconds)), cpu)
        rows[name] = test_scores(clf, Xt, yt)
        print(
            f"{name}: {epochs} epochs ({clf._state.n_steps} iterations), final "
            f"ELBO estimate {clf.elbo_curve_[-1]:.3f} per row, train "
            f"log-lik {-clf.log_loss(X, y):.3f}"
        )

    print("\nTable 3, Bibtex (test log-likelihood per row, accuracy)")
    print(
        f"{'method':<16}{'ours ll':>10}{'acc':>8}   {'paper ll':>9}"
        f"{'acc':>7}"
    )
    for name, paper in [
        *list(PAPER_TABLE3.items())[:1],
        ("exact, L2 C=1", (np.nan, np.nan)),
        *list(PAPER_TABLE3.items())[1:],
    ]:
        ours = rows.get(name)
        cell = (
            "       n/a     n/a"
            if ours is None
            else f"{ours[0]:>10.3f}{ours[1]:>8.3f}"
        )
        print(f"{name:<16}{cell}   {paper[0]:>9.3f}{paper[1]:>7.3f}")

    print(
        "\nTable 2, Bibtex (time per epoch, seconds; ours measured under "
        "the load of other jobs on 2 shared cores)"
    )
    print(
        f"{'method':<16}{'ours wall':>10}{'ours cpu':>10}{'paper':>8}"
        f"{'ratio':>8}"
    )
    for name, paper in PAPER_TABLE2.items():
        if name not in times:
            print(f"{name:<16}{'n/a':>10}{'n/a':>10}{paper:>8.3f}")
            continue
        wall, cpu = times[name]
        print(
            f"{name:<16}{wall:>10.4f}{cpu:>10.4f}{paper:>8.3f}"
            f"{wall / paper:>8.3f}"
        )

    for name in AR_MODELS:
        ll, acc = rows[name]
        p_ll, p_acc = PAPER_TABLE3[name]
        checks.append(
            (f"Bibtex {name} test log-lik >= {p_ll}", ll >= p_ll, f"{ll:.3f}")
        )
        checks.append(
            (f"Bibtex {name} accuracy >= {p_acc}", acc >= p_acc, f"{acc:.3f}")
        )
        wall = times[name][0]
        limit = PAPER_TABLE2[name] / 5
        checks.append(
            (
                f"Bibtex {name} time per epoch <= {limit:.4f} s "
                "(1/5 of Table 2)",
                wall <= limit,
                f"{wall:.4f} s wall, {times[name][1]:.4f} s cpu",
            )
        )


SYNTHETIC_RUNS = [
    # (label, share of the time budget, estimator parameters)
    (
        "paper's schedule (kucukelbir, rho_0 = 1)",
        0.2,
        dict(learning_rate="kucukelbir"),
    ),
    (
        "exponential, eta0 = 300, decay 0.9/epoch",
        0.8,
        dict(learning_rate="exponential", eta0=300.0, decay=0.9),
    ),
]


def synthetic(seconds, checks, seed=0):
    rng = np.random.default_rng(seed)
    K, N = 10**4, 3 * 10**5
    p = rng.uniform(size=K) ** 2
    p /= p.sum()
    y = rng.choice(K, size=N, p=p)
    counts = np.bincount(y, minlength=K)
    observed = np.flatnonzero(counts)
    print(
        f"\n== Sec. 4.1 synthetic: {K} classes, N = {N}, "
        f"{observed.size} effective classes (paper: 9,035), no covariates, "
        f"|B| = 500, |S| = 100, {seconds:.0f} s in all"
    )
    X = sp.csr_matrix((N, 1))  # no covariates: only the biases are fitted
    mle = counts[observed] / N
    print(
        f"(the MLE itself against the true p_k: "
        f"{np.abs(mle - p[observed]).mean():.2e}; paper: A&R 3.00e-6, "
        "OVE 3.65e-6, time per epoch 0.196 min)"
    )
    for label, share, params in SYNTHETIC_RUNS:
        clf = ARSoftmaxClassifier(
            n_sampled_classes=100,
            batch_size=500,
            max_iter=1,
            warm_start=True,
            random_state=seed,
            **params,
        )
        epoch_seconds = []
        start = time.perf_counter()
        while time.perf_counter() - start < share * seconds:
            epoch_seconds += fit_verbose(clf, X, y)
        b = clf.intercept_.astype(np.float64)
        p_hat = np.exp(b - np.logaddexp.reduce(b))  # effective classes
        mae_mle = np.abs(p_hat - mle).mean()
        mae_true = np.abs(p_hat - p[observed]).mean()
        per_epoch = float(np.median(epoch_seconds))
        print(
            f"{label}: {len(epoch_seconds)} epochs ({clf._state.n_steps} "
            f"iterations), {per_epoch:.3f} s = {per_epoch / 60:.4f} min per "
            f"epoch; mean |p_hat - MLE| {mae_mle:.2e}, mean |p_hat - p_k| "
            f"{mae_true:.2e}"
        )
    checks.append(
        (
            "synthetic time per epoch < paper's 0.196 min",
            per_epoch / 60 < 0.196,
            f"{per_epoch / 60:.4f} min",
        )
    )
    checks.append(
        (
            "synthetic MAE vs the MLE <= paper's 3.00e-6 " f"({label})",
            mae_mle <= 3.00e-6,
            f"{mae_mle:.2e}",
        )
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=500)
    parser.add_argument("--synthetic-seconds", type=float, default=290.0)
    parser.add_argument("--skip-bibtex", action="store_true")
    parser.add_argument("--skip-synthetic", action="store_true")
    parser.add_argument("--quick", action="store_true", help=QUICK_HELP)
    args = parser.parse_args()
    if args.quick:
        args.epochs, args.synthetic_seconds = 2, 4.0
    checks = []
    if not args.skip_bibtex:
        bibtex(args.epochs, checks)
    if not args.skip_synthetic:
        synthetic(args.synthetic_seconds, checks)
    return report(checks, args.quick)


if __name__ == "__main__":
    sys.exit(main())
