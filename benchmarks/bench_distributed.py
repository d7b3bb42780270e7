"""DistributedSoftmaxClassifier (W split by classes: DS-MLR; or
data-parallel: parameter mixing) on a LocalCluster of 2 worker processes
(1 thread each) against the single-process SoftmaxClassifier on the same
data, the same number of epochs and every default (the exact solver).

For each run: seconds per epoch (the median of the epochs' verbose
lines: a distributed epoch's wall clock includes its task scheduling, the
blocks' moves and the per-epoch reductions, not the setup of the fit and
the step pilot; the single-process one is the exact solver's epoch), the
wall clock of the whole fit (setup, pilot and, by default, the per-epoch
checkpoints on the client included), the test log-loss after ``--epochs``
epochs, the bytes of W each worker holds, sampled on the workers all
through the fit (``held_bytes``: the largest over the workers of a
worker's median sample, and the largest sample), and each worker's peak
RSS (every distributed run on a fresh cluster, so that the peak is that
run's). After the DS-MLR fit on 2 workers: its sharded ``predict_topk``
against the gathered single-process model's (``to_local()``) on every
test row, and the per-epoch bytes that travel between the workers
against the epoch's multiply-adds.

Both strategies run with ``n_shards=2`` and with ``n_shards=1`` (one
worker trains while the other idles: the same kernels and protocol), so
that the ratio of the two is the parallel speed-up on these machines.
Every figure of a run is measured in the same process, one after the
other; the cores are shared, so read the ratios, not the seconds.

The data (``--data``): ``synthetic``, ``make_softmax_classification``
(sparse rows, ``--n-samples`` etc.), split 80/20; or ``tokens_small``,
``make_python_tokens(n_classes=2000)`` (the next-token task of
bench_defaults.py: 3.77 M training rows, 65,536 hashed features, 4
nonzeros per row), with its own test rows; or ``tokens``, the same at
10,000 classes (3.97 M rows; bench_large_k.py's tokens task).

Usage::

    python benchmarks/bench_distributed.py
    python benchmarks/bench_distributed.py --n-samples 100000 \
        --n-features 1000 --n-classes 100000 --density 0.007 \
        --class-exponent 0.5 --epochs 10 --out zipf100k
    python benchmarks/bench_distributed.py --data tokens_small --epochs 10 \
        --runs single,dsmlr2,mixing1,mixing2 --mixing-epochs 3 --out tokens
"""

import argparse
import os
import sys
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from _harness import QUICK_HELP, fit_verbose

from sksoftmax import SoftmaxClassifier
from sksoftmax.datasets import make_softmax_classification

# the next-token sets of bench_defaults.py (tokens: bench_large_k.py's)
TOKENS = {"tokens_small": 2000, "tokens": 10000}

RUNS = {
    # name: (strategy, n_shards, checkpoint)
    "dsmlr1": ("dsmlr", 1, True),
    "dsmlr2": ("dsmlr", 2, True),
    "dsmlr2-nockpt": ("dsmlr", 2, False),
    "mixing1": ("mixing", 1, True),
    "mixing2": ("mixing", 2, True),
}


def _peak_rss(dask_worker=None):
    """This process's peak RSS in bytes (VmHWM)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def _ones(nbytes):
    return np.ones(nbytes // 4, dtype=np.float32)


def _nbytes(a):
    return a.nbytes


def load(args):
    if args.data in TOKENS:
        from sksoftmax.datasets import make_python_tokens

        K = TOKENS[args.data]
        Xtr, ytr, Xte, yte = make_python_tokens(n_classes=K, dtype=np.float32)
        desc = f"make_python_tokens(n_classes={K}), its own test rows"
    else:
        X, y = make_softmax_classification(
            n_samples=args.n_samples,
            n_features=args.n_features,
            n_classes=args.n_classes,
            density=args.density,
            class_exponent=args.class_exponent,
            random_state=0,
        )
        X = X.astype(np.float32)
        n_train = int(0.8 * X.shape[0])
        Xtr, ytr, Xte, yte = X[:n_train], y[:n_train], X[n_train:], y[n_train:]
        desc = (
            f"make_softmax_classification(n_samples={args.n_samples}, "
            f"n_features={args.n_features}, n_classes={args.n_classes}, "
            f"density={args.density}, class_exponent={args.class_exponent}, "
            "random_state=0), 80/20 split"
        )
    Xtr, Xte = sp.csr_matrix(Xtr), sp.csr_matrix(Xte)
    # test rows of classes seen in training (log-loss is defined on them)
    known = np.isin(yte, ytr)
    return Xtr, np.asarray(ytr), Xte[known], np.asarray(yte)[known], desc


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", choices=("synthetic", *TOKENS),
                        default="synthetic")
    parser.add_argument("--n-samples", type=int, default=10000)
    parser.add_argument("--n-features", type=int, default=500)
    parser.add_argument("--n-classes", type=int, default=1000)
    parser.add_argument("--density", type=float, default=0.02)
    parser.add_argument("--class-exponent", type=float, default=1.0)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--mixing-epochs", type=int, default=None,
                        help="epochs of the mixing runs (default: --epochs)")
    parser.add_argument("--alpha", type=float, default=0.0)
    parser.add_argument("--runs", default="single," + ",".join(RUNS))
    parser.add_argument("--out", default=None,
                        help="write the table to results/distributed_OUT.md")
    parser.add_argument("--quick", action="store_true", help=QUICK_HELP)
    args = parser.parse_args(argv)
    if args.quick:
        args.data, args.out = "synthetic", None
        args.n_samples, args.n_features, args.n_classes = 4000, 200, 200
        args.epochs, args.mixing_epochs = 2, 1
    runs = args.runs.split(",")

    from distributed import Client, LocalCluster

    from sksoftmax.distributed import DistributedSoftmaxClassifier
    from sksoftmax.distributed._worker import held_bytes

    Xtr, ytr, Xte, yte, desc = load(args)
    n_train = Xtr.shape[0]
    K = np.unique(ytr).shape[0]
    lines = []

    def say(text=""):
        print(text, flush=True)
        lines.append(text)

    say(f"data: {desc}")
    say(
        f"{n_train} training rows, {Xte.shape[0]} test rows, "
        f"{Xtr.shape[1]} features ({Xtr.nnz / n_train:.1f} nonzeros "
        f"per row), {K} classes; {args.epochs} epochs; float32"
    )
    w_bytes = K * Xtr.shape[1] * 4
    say(f"W: {w_bytes / 2**20:.1f} MiB")
    say()
    say("| run | epochs | s/epoch | fit s | test log-loss | "
        "W per worker MiB (median / max) | worker peak RSS MiB |")
    say("|---|---|---|---|---|---|---|")
    warnings.simplefilter("ignore")
    per_epoch, losses = {}, {}
    if "single" in runs:
        single = SoftmaxClassifier(
            solver="exact", alpha=args.alpha, max_iter=args.epochs, tol=None,
            early_stopping=False, random_state=0,
        )
        tic = time.perf_counter()
        per_epoch["single"] = float(np.median(fit_verbose(single, Xtr, ytr)))
        wall = time.perf_counter() - tic
        losses["single"] = single.log_loss(Xte, yte)
        say(f"| SoftmaxClassifier (1 process) | {args.epochs} | "
            f"{per_epoch['single']:.3f} | {wall:.1f} | {losses['single']:.4f} | "
            f"{w_bytes / 2**20:.1f} (one process) | {_peak_rss() / 2**20:.0f} "
            "(this process) |")
        del single

    extra = []
    for name in runs:
        if name == "single":
            continue
        strategy, n_shards, checkpoint = RUNS[name]
        epochs = args.epochs
        if strategy == "mixing" and args.mixing_epochs:
            epochs = args.mixing_epochs
        with LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True,
            dashboard_address=None,
        ) as cluster, Client(cluster) as client:
            dist = DistributedSoftmaxClassifier(
                strategy=strategy, alpha=args.alpha, max_iter=epochs, tol=None,
                n_shards=n_shards, random_state=0, checkpoint=checkpoint,
            )
            samples = []
            stop = threading.Event()

            def sample():
                while not stop.is_set():
                    samples.append(client.run(held_bytes))
                    time.sleep(0.05)

            thread = threading.Thread(target=sample)
            thread.start()
            tic = time.perf_counter()
            try:
                per_epoch[name] = float(np.median(fit_verbose(dist, Xtr, ytr)))
            finally:
                wall = time.perf_counter() - tic
                stop.set()
                thread.join()
            rss = client.run(_peak_rss)
            losses[name] = dist.log_loss(Xte, yte)
            if strategy == "mixing":
                # every worker training holds the whole W while fitting
                held = f"{w_bytes / 2**20:.1f} / {w_bytes / 2**20:.1f} (whole W)"
            else:
                per = {}
                for s_ in samples:
                    for w, v in s_.items():
                        per.setdefault(w, []).append(v)
                med = max(np.median(v) for v in per.values())
                top = max(max(v) for v in per.values())
                held = f"{med / 2**20:.1f} / {top / 2**20:.1f}"
            label = f"{strategy}, {n_shards} worker(s) training" + (
                "" if checkpoint else ", checkpoint=False"
            )
            say(f"| {label} | {epochs} | {per_epoch[name]:.3f} | {wall:.1f} | "
                f"{losses[name]:.4f} | {held} | "
                + ", ".join(f"{v / 2**20:.0f}" for v in rss.values()) + " |")
            if name == "mixing2":
                # the mixing's traffic: a W-sized array moved from one
                # worker to the other (each worker's W to the mixing, the
                # mixed W back, per epoch)
                a, b = sorted(client.nthreads())
                moves = []
                for _ in range(3):
                    f = client.submit(_ones, w_bytes, workers=[a], pure=False)
                    f.result()
                    tic = time.perf_counter()
                    client.submit(_nbytes, f, workers=[b], pure=False).result()
                    moves.append(time.perf_counter() - tic)
                    del f
                extra.append(
                    f"- moving W ({w_bytes / 2**20:.1f} MiB) from one worker "
                    "to the other: " + ", ".join(f"{t:.2f}" for t in moves)
                    + " s (the mixing moves two per worker per epoch), against "
                    f"{2.0 * Xtr.nnz * K / 2:.3g} multiply-adds per worker "
                    "per epoch"
                )
            if name == "dsmlr2":
                tic = time.perf_counter()
                top_d, p_d = dist.predict_topk(Xte, k=5)
                t_d = time.perf_counter() - tic
                local = dist.to_local()
                tic = time.perf_counter()
                top_l, p_l = local.predict_topk(Xte, k=5)
                t_l = time.perf_counter() - tic
                same = np.all(top_d == top_l, axis=1)
                extra.append(
                    f"- sharded predict_topk(k=5) on all {Xte.shape[0]} test "
                    f"rows: {int(same.sum())} rows with the same top 5 as the "
                    f"gathered model's (to_local()), {int((~same).sum())} "
                    f"differ; largest probability difference "
                    f"{float(np.abs(p_d - p_l).max()):.2e}; {t_d:.1f} s "
                    f"sharded, {t_l:.1f} s in one process"
                )
                if (~same).any():
                    # rows whose order differs only where two
                    # probabilities tie to rounding
                    rows = np.flatnonzero(~same)
                    gaps = np.abs(np.diff(p_l[rows], axis=1)).min(axis=1)
                    extra.append(
                        f"  (differing rows: smallest gap between adjacent "
                        f"top-5 probabilities {float(gaps.max()):.2e})"
                    )
                # what travels per epoch: each class block once per round
                # (P - 1 moves of W / P per worker), the partial
                # log-partitions stay with their rows
                P = 2
                moved = (P - 1) * w_bytes / P
                macs = 2.0 * Xtr.nnz * K
                extra.append(
                    f"- per DS-MLR epoch on {P} workers: {moved / 2**20:.1f} MiB "
                    f"of class blocks move per worker (W's {w_bytes / 2**20:.1f} "
                    f"MiB x (P - 1) / P), against {macs / P:.3g} multiply-adds "
                    "per worker (2 x nnz x K / P)"
                )
            del dist
    say()
    ratios = []
    if "single" in losses:
        for name in losses:
            if name != "single":
                ratios.append(
                    f"- {name}: test log-loss / single process - 1 = "
                    f"{losses[name] / losses['single'] - 1:+.2%}; s/epoch / single "
                    f"process = {per_epoch[name] / per_epoch['single']:.2f}"
                )
    for a, b in (("dsmlr1", "dsmlr2"), ("mixing1", "mixing2")):
        if a in per_epoch and b in per_epoch:
            ratios.append(
                f"- {b[:-1]}: s/epoch with 1 worker training / with 2 = "
                f"{per_epoch[a] / per_epoch[b]:.2f}x"
            )
    for text in ratios + extra:
        say(text)
    say(f"\nload average at the end: {os.getloadavg()[0]:.2f}")
    if args.out:
        path = Path(__file__).parent / "results" / f"distributed_{args.out}.md"
        given = " ".join(sys.argv[1:] if argv is None else argv)
        path.write_text(
            f"## bench_distributed.py {given}\n\n" + "\n".join(lines) + "\n"
        )


if __name__ == "__main__":
    main()
