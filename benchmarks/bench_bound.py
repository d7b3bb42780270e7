"""Stochastic bound majorization beside LBFGS and SGD in the same run.

Prints, on scikit-learn's digits (10 classes, 64 features scaled to
[0, 1]), for L2 penalties alpha (mean-loss scale, C = 1 / (alpha n)):

- LogisticRegression(lbfgs)'s optimum of mean log-loss + alpha/2 ||W||^2;
- full-rank StochasticBoundClassifier after one pass (m = 1): the default
  anchored update with eta = 1, and Alg. 2 as printed with eta = 1/t;
- plain SGD on the same softmax objective after one pass, with the best
  constant step of a grid (the exact per-row softmax gradient, NumPy);

then, on Bibtex (fetch_bibtex, read from ../shared/data when it is there;
unit L2 rows, 146 classes):

- low-rank SBM's time per row at rank k = 1, 5, 20 and 459 ... 1836
  features (the first columns), from partial_fit on a fixed set of rows;
- the exact penalised training objective after a fixed time budget of
  low-rank SBM (Alg. 2 update with a tuned eta, as the paper does for its
  low-rank runs), plain SGD (best constant step of a small grid) and
  U-max, all in the same run;

then that full-rank fits refuse a problem whose M exceeds memory. With
``--limits``, an experiment: one pass that keeps every row's quadratic
model (SBM's bound, or the exact Hessian expansion) and solves for the
minimiser of their running mean plus the penalty after every row, i.e. the
best any one-pass summary of this kind achieves.

Targets (issue 6): at the stated alpha (default 0.01) the one-pass SBM
objective is within 1% of LBFGS's; on Bibtex the low-rank time per row is
linear in the features and in k (log-log slopes of the timing table); the
full-rank refusal names M's size and suggests rank=k. The script prints
PASS/FAIL per target and exits 1 if one fails.

Usage::

    python benchmarks/bench_bound.py [--alphas 0.1,0.01] [--target-alpha A]
        [--budget SECONDS] [--skip-bibtex] [--limits]
"""

import argparse
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp
from _harness import QUICK_HELP, load_bibtex, report
from scipy.special import logsumexp
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from sksoftmax import StochasticBoundClassifier, UMaxSoftmaxClassifier

warnings.simplefilter("ignore", ConvergenceWarning)


def objective(W, b, X, y, alpha):
    scores = X @ W.T + b
    nll = logsumexp(scores, axis=1) - scores[np.arange(len(y)), y]
    return float(nll.mean() + 0.5 * alpha * np.sum(W * W))


def lbfgs(X, y, alpha):
    lr = LogisticRegression(C=1 / (alpha * len(y)), tol=1e-10, max_iter=10000)
    lr.fit(X, y)
    return objective(lr.coef_, lr.intercept_, X, y, alpha)


def sgd_one_pass(X, y, alpha, eta, seed=0):
    """One pass of plain SGD on mean log-loss + alpha/2 ||W||^2, constant
    step: per row, W -= eta (grad of the row's loss + alpha W)."""
    n, D = X.shape
    K = int(y.max()) + 1
    W, b = np.zeros((K, D)), np.zeros(K)
    for i in np.random.default_rng(seed).permutation(n):
        s = W @ X[i] + b
        p = np.exp(s - logsumexp(s))
        p[y[i]] -= 1.0
        W *= 1.0 - eta * alpha
        W -= eta * np.outer(p, X[i])
        b -= eta * p
        if not np.isfinite(b).all():
            return np.inf
    return objective(W, b, X, y, alpha)


def digits_table(alphas, target_alpha, seeds=3, scaling="x16"):
    """One-pass SBM against LBFGS on digits, scaled by ``scaling``: 'x16'
    (X / 16, features in [0, 1]) or 'standard' (StandardScaler: unit
    variance, row norms about sqrt(64) = 8 instead of about 3.6)."""
    X, y = load_digits(return_X_y=True)
    if scaling == "x16":
        X, label = X / 16.0, "X/16"
    else:
        X, label = StandardScaler().fit_transform(X), "standardized"
    n = len(y)
    rms = np.sqrt(np.mean((X**2).sum(axis=1)))
    print(
        f"== digits: {n} rows, {X.shape[1]} features, 10 classes, {label} "
        f"(rms row norm {rms:.2f})"
    )
    print(
        f"{'alpha':>7} {'lbfgs':>8} {'SBM 1 pass':>11} {'ratio':>7} "
        f"{'Alg.2 eta=1/t':>14} {'ratio':>7} {'SGD best':>9} "
        f"{'(eta)':>7} {'ratio':>7} {'SBM s/pass':>10}"
    )
    grid = [0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0]
    ratios = {}
    for alpha in alphas:
        ref = lbfgs(X, y, alpha)
        sbm, paper, secs = [], [], []
        for seed in range(seeds):
            start = time.perf_counter()
            clf = StochasticBoundClassifier(
                rank=None, alpha=alpha, max_iter=1, tol=None, random_state=seed
            ).fit(X, y)
            secs.append(time.perf_counter() - start)
            sbm.append(clf.loss_curve_[0])
            clf = StochasticBoundClassifier(
                rank=None,
                alpha=alpha,
                variant="paper",
                eta0=1.0 / n,
                max_iter=1,
                tol=None,
                random_state=seed,
            ).fit(X, y)
            paper.append(clf.loss_curve_[0])
        sgd = {
            eta: np.mean(
                [sgd_one_pass(X, y, alpha, eta, s) for s in range(seeds)]
            )
            for eta in grid
        }
        best_eta = min(sgd, key=sgd.get)
        ratios[alpha] = np.mean(sbm) / ref
        print(
            f"{alpha:7.0e} {ref:8.4f} {np.mean(sbm):11.4f} "
            f"{np.mean(sbm) / ref:7.4f} {np.mean(paper):14.4f} "
            f"{np.mean(paper) / ref:7.4f} {sgd[best_eta]:9.4f} "
            f"{best_eta:7.2g} {sgd[best_eta] / ref:7.4f} "
            f"{np.median(secs):10.2f}"
        )
    print(
        f"(means over {seeds} seeds; objective = mean log-loss + alpha/2 "
        "||W||^2 on the training rows; SGD's step grid "
        f"{grid}; timings measured on a shared, loaded machine)"
    )
    return ratios[target_alpha]


def one_pass_quadratic_models(X, y, alpha, curvature, seed=0):
    """One pass that keeps every row's quadratic model where it was built.

    theta_t minimises the mean of the t models seen plus alpha/2 ||W||^2,
    solved exactly (O(d^3) per row: an experiment, not a method). The
    models are SBM's bounds (``curvature='bound'``, Alg. 1 through the
    package's kernel) or the exact second-order expansions
    (``'hessian'``, not a bound). It measures how close any one-pass
    method that summarises each row by one quadratic can come.
    """
    from sksoftmax._bound_math import softmax_row_bound

    n, D = X.shape
    K = int(y.max()) + 1
    Xt = np.hstack([X, np.ones((n, 1))])
    d = K * (D + 1)
    pen = np.ones((K, D + 1))
    pen[:, D] = 1e-6  # the intercepts: unpenalised, kept invertible
    pen = pen.ravel()
    A, c = np.zeros((d, d)), np.zeros(d)
    T = np.zeros((K, D + 1))
    for t, i in enumerate(np.random.default_rng(seed).permutation(n), 1):
        s = T @ Xt[i]
        if curvature == "bound":
            _, g, S, *_ = softmax_row_bound(s)
        else:
            g = np.exp(s - logsumexp(s))
            S = np.diag(g) - np.outer(g, g)
        e = np.zeros(K)
        e[y[i]] = 1.0
        row_sigma = np.kron(S, np.outer(Xt[i], Xt[i]))
        A += row_sigma
        c += np.kron(g - e, Xt[i]) - row_sigma @ T.ravel()
        T = np.linalg.solve(np.diag(alpha * pen) + A / t, -c / t).reshape(
            K, D + 1
        )
    return objective(T[:, :D], T[:, D], X, y, alpha)


def limits_table(alphas):
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    print(
        "\n== digits, one pass keeping every row's quadratic model "
        "(running mean of the models + penalty, solved exactly per row)"
    )
    print(f"{'alpha':>7} {'lbfgs':>8} {'bounds':>8} {'ratio':>7} "
          f"{'Hessians':>9} {'ratio':>7}")
    for alpha in alphas:
        ref = lbfgs(X, y, alpha)
        bnd = one_pass_quadratic_models(X, y, alpha, "bound")
        hes = one_pass_quadratic_models(X, y, alpha, "hessian")
        print(f"{alpha:7.0e} {ref:8.4f} {bnd:8.4f} {bnd / ref:7.4f} "
              f"{hes:9.4f} {hes / ref:7.4f}")


def sgd_budget(X, y, alpha, eta, budget, seed=0):
    """Plain SGD on the softmax objective for ``budget`` seconds (sparse
    rows: the data term touches nnz columns of every class)."""
    n, D = X.shape
    K = int(y.max()) + 1
    W, b = np.zeros((K, D)), np.zeros(K)
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    rows = 0
    while time.perf_counter() - start < budget:
        for i in rng.permutation(n):
            lo, hi = X.indptr[i], X.indptr[i + 1]
            idx, val = X.indices[lo:hi], X.data[lo:hi]
            s = W[:, idx] @ val + b
            p = np.exp(s - logsumexp(s))
            p[y[i]] -= 1.0
            W *= 1.0 - eta * alpha
            W[:, idx] -= eta * np.outer(p, val)
            b -= eta * p
            rows += 1
            if rows % 256 == 0 and time.perf_counter() - start > budget:
                break
    return objective_sparse(W, b, X, y, alpha), rows


def objective_sparse(W, b, X, y, alpha):
    scores = np.asarray(X @ W.T) + b
    nll = logsumexp(scores, axis=1) - scores[np.arange(len(y)), y]
    return float(nll.mean() + 0.5 * alpha * np.sum(W * W))


def budget_fit(clf, X, y, budget, chunk, seed=0):
    """partial_fit on shuffled chunks of rows until the budget is spent."""
    classes = np.unique(y)
    rng = np.random.default_rng(seed)
    start, rows = time.perf_counter(), 0
    while time.perf_counter() - start < budget:
        perm = rng.permutation(len(y))
        for lo in range(0, len(y), chunk):
            sel = np.sort(perm[lo : lo + chunk])
            clf.partial_fit(X[sel], y[sel], classes=classes)
            rows += len(sel)
            if time.perf_counter() - start > budget:
                break
    return clf.objective(X, y), rows


def bibtex(alpha, budget):
    X, y, _, _ = load_bibtex(normalize=True)
    n = X.shape[0]
    classes = np.unique(y)
    print(
        f"\n== Bibtex: {n} rows, {X.shape[1]} features, {classes.size} "
        f"classes, {X.nnz / n:.1f} nnz/row, alpha={alpha:g}"
    )
    ranks, widths, n_rows = [1, 5, 20], [459, 918, 1836], 30
    table = {}
    print(
        f"low-rank SBM, ms per row (partial_fit on {n_rows} rows, best of 2)"
    )
    print(
        f"{'k':>4} "
        + " ".join(f"{'D=' + str(w):>9}" for w in widths)
        + f" {'d (D=1836)':>11}"
    )
    for k in ranks:
        line = []
        for width in widths:
            Xs = X[:n_rows, :width].tocsr()
            best = np.inf
            for _ in range(2):
                clf = StochasticBoundClassifier(
                    rank=k,
                    variant="paper",
                    eta0=30.0 / n,
                    alpha=alpha,
                    random_state=0,
                )
                start = time.perf_counter()
                clf.partial_fit(Xs, y[:n_rows], classes=classes)
                best = min(best, time.perf_counter() - start)
            table[k, width] = 1000 * best / n_rows
            line.append(table[k, width])
        print(
            f"{k:4d} "
            + " ".join(f"{v:9.2f}" for v in line)
            + f" {classes.size * (widths[-1] + 1):11,d}"
        )
    # log-log slopes of the table: 1 means linear
    d_slope = (
        min(
            np.polyfit(
                np.log(widths), np.log([table[k, w] for w in widths]), 1
            )[0]
            for k in ranks
        ),
        max(
            np.polyfit(
                np.log(widths), np.log([table[k, w] for w in widths]), 1
            )[0]
            for k in ranks
        ),
    )
    k_slope = np.polyfit(
        np.log(ranks), np.log([table[k, widths[-1]] for k in ranks]), 1
    )[0]
    print(
        f"log-log slope in features: {d_slope[0]:.2f} .. {d_slope[1]:.2f} "
        f"(over k); in k at D={widths[-1]}: {k_slope:.2f}"
    )

    print(
        f"objective after a {budget:g} s budget (exact, training rows; "
        f"log K = {np.log(classes.size):.3f})"
    )
    rows_out = []
    for k in ranks:
        clf = StochasticBoundClassifier(
            rank=k, variant="paper", eta0=30.0 / n, alpha=alpha, random_state=0
        )
        obj, rows = budget_fit(clf, X, y, budget, chunk=100)
        rows_out.append((f"SBM rank={k} (Alg. 2, eta=30/t)", obj, rows))
    best_sgd = None
    for eta in [0.3, 1.0, 3.0]:
        obj, rows = sgd_budget(X, y, alpha, eta, budget)
        if best_sgd is None or obj < best_sgd[1]:
            best_sgd = (f"plain SGD (best eta={eta:g} of 0.3,1,3)", obj, rows)
    rows_out.append(best_sgd)
    um = UMaxSoftmaxClassifier(
        eta0=0.1, alpha=alpha, random_state=0, learning_rate="constant"
    )
    obj, rows = budget_fit(um, X, y, budget, chunk=n)
    rows_out.append(("U-max m=5 (eta0=0.1)", obj, rows))
    print(f"{'method':<40}{'objective':>10}{'rows seen':>11}")
    for name, obj, rows in rows_out:
        print(f"{name:<40}{obj:>10.4f}{rows:>11,d}")
    return d_slope, k_slope


def refusal():
    n, D, K = 3000, 20000, 3000
    X = sp.csr_matrix(
        (np.ones(n), (np.arange(n), np.arange(n) % D)), shape=(n, D)
    )
    y = np.arange(n) % K
    try:
        StochasticBoundClassifier(rank=None).fit(X, y)
    except ValueError as exc:
        print(f"\n== full rank on {K} classes x {D} features:\n{exc}")
        return "rank=" in str(exc) and "GiB" in str(exc)
    return False


def auto_rank_run():
    """rank='auto' on a problem whose full rank would take about 25 min
    per epoch (d = 50 * 201; the issue-15 report: 11 min 39 s before it was
    stopped): the rank chosen and the fit's seconds, default settings."""
    from sklearn.model_selection import train_test_split

    from sksoftmax.datasets import make_softmax_classification

    X, y = make_softmax_classification(
        2500, 200, 50, density=0.05, random_state=0
    )[:2]
    X, Xt, y, yt = train_test_split(X, y, test_size=500, random_state=0)
    prior = np.bincount(y, minlength=50) / len(y)
    start = time.process_time()
    clf = StochasticBoundClassifier(random_state=0, verbose=1).fit(X, y)
    seconds = time.process_time() - start
    print(
        f"rank='auto': rank_={clf.rank_}, variant {clf._update()!r}, "
        f"eta0_={clf.eta0_:.3g}, {clf.n_iter_} epochs in {seconds:.1f} CPU "
        f"s; test log-loss {clf.log_loss(Xt, yt):.4f} (class prior "
        f"{-np.mean(np.log(np.maximum(prior[yt], 1e-12))):.4f})"
    )
    return clf.rank_, seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--alphas", default="0.1,0.03,0.01,0.001")
    parser.add_argument("--target-alpha", type=float, default=0.01)
    parser.add_argument("--budget", type=float, default=15.0)
    parser.add_argument("--skip-bibtex", action="store_true")
    parser.add_argument(
        "--limits",
        action="store_true",
        help="also run the one-pass quadratic-model experiment (minutes)",
    )
    parser.add_argument("--quick", action="store_true", help=QUICK_HELP)
    args = parser.parse_args()
    seeds = 1 if args.quick else 3
    if args.quick:
        args.alphas, args.budget = str(args.target_alpha), 1.0
    alphas = [float(a) for a in args.alphas.split(",")]
    if args.target_alpha not in alphas:
        alphas.append(args.target_alpha)
    ratio = digits_table(alphas, args.target_alpha, seeds=seeds)
    # the one-pass quality depends on the feature scaling (issue 15)
    digits_table([0.1, args.target_alpha], args.target_alpha, seeds=seeds,
                 scaling="standard")
    auto_rank, auto_seconds = auto_rank_run()
    if args.limits:
        limits_table([0.1, 0.01, 0.003])
    checks = [
        (
            "rank='auto' takes a low rank where the full rank would "
            "exceed its budget",
            auto_rank is not None,
            f"rank_={auto_rank}, {auto_seconds:.1f} CPU s",
        ),
        (
            f"digits alpha={args.target_alpha:g}: SBM one pass / lbfgs "
            "<= 1.01",
            ratio <= 1.01,
            f"{ratio:.4f}",
        )
    ]
    if not args.skip_bibtex:
        try:
            d_slope, k_slope = bibtex(1e-4, args.budget)
        except OSError as exc:
            print(f"Bibtex skipped: {exc}")
        else:
            checks.append(
                (
                    "Bibtex low rank: time per row linear in features "
                    "(log-log slope in [0.7, 1.3] at k = 1, 5, 20)",
                    0.7 <= d_slope[0] and d_slope[1] <= 1.3,
                    f"{d_slope[0]:.2f} .. {d_slope[1]:.2f}",
                )
            )
            checks.append(
                (
                    "Bibtex low rank: time per row at most linear in k "
                    "(log-log slope <= 1.1 at D=1836)",
                    k_slope <= 1.1,
                    f"{k_slope:.2f}",
                )
            )
    checks.append(("full rank refuses an M beyond memory", refusal(), ""))
    code = report(checks, args.quick)
    sys.exit(code)


if __name__ == "__main__":
    main()
