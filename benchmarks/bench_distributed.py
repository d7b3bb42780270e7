"""DistributedSoftmaxClassifier (DS-MLR, W split by classes) on a
LocalCluster of 2 worker processes (1 thread each) against the
single-process SoftmaxClassifier on the same data.

For each run: seconds per epoch (the median of the epochs' verbose
lines: a distributed epoch's wall clock includes its task scheduling, the
blocks' moves and the per-epoch reductions, not the setup of the fit;
the single-process one is the exact solver's epoch), the wall clock of
the whole fit (setup and, by default, the per-epoch checkpoints on the
client included), the test log-loss after ``--epochs`` epochs, and the
bytes of W each worker holds, sampled on the workers all through the fit
(``held_bytes``: the largest over the workers of a worker's median
sample, and the largest sample). DS-MLR on
2 workers runs once more with ``checkpoint=False``: the ratio of the two
fits' wall clocks is the checkpoints' cost.
Both strategies run with ``n_shards=2`` and with ``n_shards=1`` on the
same cluster (one worker trains while the other idles: the same kernels
and protocol), so that the ratio of the two is the parallel speed-up on
these machines: 'dsmlr' (W split by classes while fitting, DS-MLR) and
'mixing' (every worker runs the exact solver's epoch on its rows from the
same W, then W is averaged: iterative parameter mixing). Every figure of a run is
measured in the same process, one after the other; the cores are shared,
so read the ratios, not the seconds.

The data: ``make_softmax_classification`` (sparse rows), split 80/20.

Usage::

    python benchmarks/bench_distributed.py
    python benchmarks/bench_distributed.py --n-samples 20000 --n-classes 2000
"""

import argparse
import threading
import time
import warnings

import numpy as np
from _harness import fit_verbose

from sksoftmax import SoftmaxClassifier
from sksoftmax.datasets import make_softmax_classification


def _worker_rss(client):
    def rss():
        import psutil

        return psutil.Process().memory_info().rss

    return client.run(rss)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=10000)
    parser.add_argument("--n-features", type=int, default=500)
    parser.add_argument("--n-classes", type=int, default=1000)
    parser.add_argument("--density", type=float, default=0.02)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--alpha", type=float, default=0.0)
    args = parser.parse_args(argv)

    from distributed import Client, LocalCluster

    from sksoftmax.distributed import DistributedSoftmaxClassifier
    from sksoftmax.distributed._worker import held_bytes

    X, y = make_softmax_classification(
        n_samples=args.n_samples,
        n_features=args.n_features,
        n_classes=args.n_classes,
        density=args.density,
        random_state=0,
    )
    X = X.astype(np.float32)
    n_train = int(0.8 * X.shape[0])
    Xtr, ytr, Xte, yte = X[:n_train], y[:n_train], X[n_train:], y[n_train:]
    # test rows of classes seen in training (log-loss is defined on them)
    known = np.isin(yte, ytr)
    Xte, yte = Xte[known], yte[known]
    K = np.unique(ytr).shape[0]
    print(
        f"data: {n_train} training rows, {X.shape[0] - n_train} test rows, "
        f"{X.shape[1]} features ({X[:n_train].nnz / n_train:.1f} nonzeros "
        f"per row), {K} classes; {args.epochs} epochs; float32"
    )
    w_bytes = K * X.shape[1] * 4
    print(f"W: {w_bytes / 2**20:.1f} MiB\n")
    print(
        f"{'run':<34}{'s/epoch':>9}{'fit s':>8}{'test log-loss':>15}"
        f"{'W per worker MiB: median / max':>32}"
    )
    warnings.simplefilter("ignore")

    single = SoftmaxClassifier(
        solver="exact",
        alpha=args.alpha,
        max_iter=args.epochs,
        tol=None,
        early_stopping=False,
        random_state=0,
    )
    tic = time.perf_counter()
    per_epoch = float(np.median(fit_verbose(single, Xtr, ytr)))
    wall = time.perf_counter() - tic
    print(
        f"{'SoftmaxClassifier (1 process)':<34}{per_epoch:>9.3f}{wall:>8.2f}"
        f"{single.log_loss(Xte, yte):>15.4f}{w_bytes / 2**20:>21.1f}"
    )
    base = per_epoch

    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True,
        dashboard_address=None,
    ) as cluster, Client(cluster) as client:
        rows = {}
        walls = {}
        for strategy, n_shards, checkpoint in [
            ("dsmlr", 1, True), ("dsmlr", 2, True), ("dsmlr", 2, False),
            ("mixing", 1, True), ("mixing", 2, True),
        ]:
            dist = DistributedSoftmaxClassifier(
                strategy=strategy,
                alpha=args.alpha,
                max_iter=args.epochs,
                tol=None,
                n_shards=n_shards,
                random_state=0,
                checkpoint=checkpoint,
            )
            # the class blocks in each worker's memory, sampled on the
            # workers all through the fit (held_bytes)
            samples = []
            stop = threading.Event()

            def sample():
                while not stop.is_set():
                    samples.append(client.run(held_bytes))
                    time.sleep(0.005)

            thread = threading.Thread(target=sample)
            thread.start()
            tic = time.perf_counter()
            try:
                per_epoch = float(np.median(fit_verbose(dist, Xtr, ytr)))
            finally:
                wall = time.perf_counter() - tic
                stop.set()
                thread.join()
            key = (strategy, n_shards, checkpoint)
            rows[key] = per_epoch
            walls[key] = wall
            if strategy == "mixing":
                # every worker training holds the whole W while fitting
                # (inside its solver, which held_bytes does not count)
                held = f"{w_bytes / 2**20:.1f} / {w_bytes / 2**20:.1f}"
            else:
                # per worker: the median and the largest of its samples;
                # shown: the largest over the workers of each
                per = {}
                for s_ in samples:
                    for w, v in s_.items():
                        per.setdefault(w, []).append(v)
                med = max(np.median(v) for v in per.values())
                top = max(max(v) for v in per.values())
                held = f"{med / 2**20:.1f} / {top / 2**20:.1f}"
            name = f"{strategy}, {n_shards} worker(s)" + (
                "" if checkpoint else ", checkpoint=False"
            )
            print(
                f"{name:<34}{per_epoch:>9.3f}{wall:>8.2f}"
                f"{dist.log_loss(Xte, yte):>15.4f}{held:>32}"
            )
        rss = _worker_rss(client)
    print(
        "\nratios of s/epoch in this run: dsmlr 2 / 1 worker = "
        f"{rows['dsmlr', 2, True] / rows['dsmlr', 1, True]:.2f}; mixing 2 / 1 "
        f"worker = {rows['mixing', 2, True] / rows['mixing', 1, True]:.2f}; "
        f"dsmlr 2 workers / single process = {rows['dsmlr', 2, True] / base:.2f}; "
        f"mixing 2 workers / single process = {rows['mixing', 2, True] / base:.2f}"
    )
    print(
        "checkpoints (W gathered to the client after each epoch): fit wall "
        "clock with / without = "
        f"{walls['dsmlr', 2, True] / walls['dsmlr', 2, False]:.2f}"
    )
    print(
        "worker RSS at the end (MiB): "
        + ", ".join(f"{v / 2**20:.0f}" for v in rss.values())
    )


if __name__ == "__main__":
    main()
