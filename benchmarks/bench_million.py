"""A million classes on one machine (issue 34, item 5).

``SoftmaxClassifier(random_state=0)`` at K = 1,000,000 classes, D = 2,048
features, float32 (W: 8 GB), on synthetic sparse rows, in one process:
``fit``, then ``predict_topk(k=5)`` and ``log_loss`` on held-apart test
rows, then a fresh estimator's ``partial_fit`` of one batch with
``classes=np.arange(K)``. For each: CPU and wall seconds, the peak RSS
(VmHWM, reset before each by writing 5 to /proc/self/clear_refs, as
``_harness._reset_peak_rss``) and its ratio to the bytes of X (the
training rows) plus W; the target is at most 1.3. The fit's epochs are
listed (seconds of the epoch, of the held-out scoring after it, held-out
log-loss, and its paired change with its z on the epoch before and on
``n_iter_no_change`` epochs before: whether it still improved beyond
the held-out rows' noise), so that no pass costing more than one epoch
goes unseen, with the epoch whose held-out loss first came within 0.5%
of the returned model's; the test log-loss is printed beside the class
prior's.

The data: ``make_softmax_classification(n_features=2048, density=0.01,
dtype=float32)`` with about ``--rows-per-class`` rows per class; the
classes are drawn from a slightly larger set and exactly K of those seen
in training are kept (their rows; labels 0..K-1): every class has a
training row, and the rows are still exact draws of a softmax model over
the kept classes. ``--test-rows`` further rows of kept classes are the
test set.

``--prediction`` times prediction alone (issue 60, items 1 and 3), on a
model with random weights of the right shape instead of a fitted one (no
ten-minute fit): ``predict_topk(k=5)``, ``predict`` and ``log_loss`` of
5,000 rows, on one thread and on two, and the median of 50 single-row
``predict_topk`` calls, for two sets of rows: ``--test-rows`` rows of 6
nonzeros on Zipfian features (feature j drawn with probability
proportional to 1 / (j + 1)), and this script's test rows (13.6 nonzeros
a row at the defaults). W is stored feature-major (the transpose of a
(D, K) array, as every fitted model keeps it), then class-major ((K, D)
C-contiguous, as the sampled-class solvers train it), one at a time; the
class-major model is then turned feature-major in place and back
(``_shared/_transpose``: what the end of ``fit`` and the next training
call do), timed on 1 and 2 threads. Beside
each figure the arithmetic limit from this machine's measured one-thread
read bandwidth (the sum of a 1 GiB float32 array) and FMA rate (float32
matrix products on one BLAS thread): the larger of the multiply-adds over
the FMA rate and the bytes of W the rows use over the bandwidth. Peak RSS
against X + W, X being the training rows of the run (``make_data``).
Written to ``results/million_prediction.md``.

``--first-call`` times the first ``SoftmaxClassifier().partial_fit`` on
the training rows (``classes`` given: the choice of solver, W's
allocation and first writes, one pass) against a second call over the
same rows, with peak RSS against X + W; 3 GiB are written and freed
first (the host's first backing of a process's pages is a cost of the
machine, see ``bench_partial_fit.py``). Written to
``results/million_first_call.md``.

Usage (about 35 minutes on 2 cores; needs about 11 GB free)::

    nice -n 10 python benchmarks/bench_million.py
    python benchmarks/bench_million.py --n-classes 100000   # a rehearsal
    python benchmarks/bench_million.py --prediction   # prediction only
    python benchmarks/bench_million.py --first-call   # partial_fit's first
    python benchmarks/bench_million.py --quick   # CI's smoke run
"""

import argparse
import gc
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
from _harness import QUICK_HELP, _peak_rss_bytes, _reset_peak_rss

import sksoftmax
from sksoftmax import SoftmaxClassifier
from sksoftmax.datasets import make_softmax_classification

RESULTS = Path(__file__).parent / "results"


def make_data(n_classes, n_features, rows_per_class, n_test, seed=0):
    """(X, y, X_test, y_test, note): exactly n_classes training classes."""
    # a class is seen in training with probability 1 - exp(-rows_per_class)
    seen = 1.0 - np.exp(-rows_per_class)
    n_gen = int(np.ceil(n_classes / seen * 1.01))
    n_rows = int(rows_per_class * n_gen) + 4 * n_test
    X, y = make_softmax_classification(
        n_samples=n_rows, n_features=n_features, n_classes=n_gen,
        density=0.01, random_state=seed, dtype=np.float32,
    )
    n_train = n_rows - 4 * n_test
    counts = np.bincount(y[:n_train], minlength=n_gen)
    present = np.flatnonzero(counts)
    if present.shape[0] < n_classes:
        raise SystemExit(
            f"{present.shape[0]} classes seen < {n_classes}: raise "
            "--rows-per-class"
        )
    keep = np.zeros(n_gen, dtype=bool)
    keep[np.random.RandomState(seed).choice(present, n_classes,
                                            replace=False)] = True
    label = np.cumsum(keep) - 1
    train = np.flatnonzero(keep[y[:n_train]])
    test = n_train + np.flatnonzero(keep[y[n_train:]])[:n_test]
    X_train, y_train = X[train], label[y[train]]
    X_test, y_test = X[test], label[y[test]]
    del X, y
    gc.collect()
    note = (
        f"make_softmax_classification(n_samples={n_rows}, n_features="
        f"{n_features}, n_classes={n_gen}, density=0.01, random_state="
        f"{seed}, dtype=float32); the rows of {n_classes} of the "
        f"{present.shape[0]} classes seen in the first {n_train} rows kept"
    )
    return X_train, y_train, X_test, y_test, note


def command_line():
    """'Command: python benchmarks/bench_million.py --flags.'"""
    words = ["python", "benchmarks/bench_million.py", *sys.argv[1:]]
    return "Command: " + " ".join(words) + "."


def x_bytes(X):
    return X.data.nbytes + X.indices.nbytes + X.indptr.nbytes


class Measure:
    """CPU s, wall s and peak RSS of a block (VmHWM reset at entry)."""

    def __enter__(self):
        gc.collect()
        self.rss0 = _reset_peak_rss()
        self.cpu, self.wall = time.process_time(), time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.cpu = time.process_time() - self.cpu
        self.wall = time.perf_counter() - self.wall
        self.peak = _peak_rss_bytes()
        return False


class Report:
    """Lines printed as they come and written to a results file at the
    end: ``path`` if given, else ``RESULTS / f"{stem}.md"`` at a million
    classes, ``f"{stem}_{K}.md"`` otherwise."""

    def __init__(self, path, stem, n_classes):
        self.out = Path(path) if path else RESULTS / (
            f"{stem}.md" if n_classes == 1_000_000
            else f"{stem}_{n_classes}.md"
        )
        self.lines = []

    def say(self, text=""):
        print(text, flush=True)
        self.lines.append(text)

    def write(self):
        self.out.write_text("\n".join(self.lines) + "\n")
        print(f"wrote {self.out}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n-classes", type=int, default=1_000_000)
    parser.add_argument("--n-features", type=int, default=2048)
    parser.add_argument("--rows-per-class", type=float, default=2.0)
    parser.add_argument("--test-rows", type=int, default=5000)
    parser.add_argument("--batch-rows", type=int, default=100_000)
    parser.add_argument("--max-iter", type=int, default=None,
                        help="bound the fit's epochs (default: the "
                        "estimator's max_iter=100)")
    parser.add_argument("--out", default=None)
    parser.add_argument("--memory-gib", type=float, default=None,
                        help="a rehearsal at fewer classes: the memory "
                        "SoftmaxClassifier believes the machine has")
    parser.add_argument("--prediction", action="store_true",
                        help="time prediction on a model with random "
                        "weights (no fit); see the module's docstring")
    parser.add_argument("--first-call", action="store_true",
                        help="time the first and the second partial_fit "
                        "over the training rows; see the module's docstring")
    parser.add_argument("--quick", action="store_true", help=QUICK_HELP)
    args = parser.parse_args()
    if args.quick:
        import tempfile

        args.n_classes, args.n_features, args.test_rows = 2000, 256, 200
        args.max_iter, args.batch_rows = 2, 2000
        args.out = os.path.join(tempfile.mkdtemp(), "million_quick.md")
        # the prediction section too, small
        prediction(args, os.path.join(tempfile.mkdtemp(),
                                      "million_prediction_quick.md"))
        first_call(args, os.path.join(tempfile.mkdtemp(),
                                      "million_first_call_quick.md"))
    elif args.prediction:
        return prediction(args, args.out)
    elif args.first_call:
        return first_call(args, args.out)
    if args.memory_gib:
        from sksoftmax import _solver_choice

        _solver_choice.available_memory = lambda: int(args.memory_gib * 2**30)
    K, D = args.n_classes, args.n_features
    report = Report(args.out, "million", K)
    say = report.say

    start = time.perf_counter()
    X, y, X_test, y_test, note = make_data(
        K, D, args.rows_per_class, args.test_rows
    )
    w_bytes = K * D * 4
    xw = x_bytes(X) + w_bytes
    say(f"# {K:,} classes on one machine (issue 34, item 5)")
    say()
    say(command_line())
    say()
    say(f"Data: {note} ({time.perf_counter() - start:.0f} s to make).")
    say(
        f"Training: {X.shape[0]:,} rows x {D} features, "
        f"{X.nnz / X.shape[0]:.1f} nonzeros per row, X {x_bytes(X) / 1e9:.3f}"
        f" GB (CSR float32, int32 indices); W {w_bytes / 1e9:.3f} GB "
        f"(float32); X + W {xw / 1e9:.3f} GB. Test: {X_test.shape[0]:,} "
        "rows."
    )
    say(
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, "
        f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.1f}"
        f" GiB, no swap; Python {platform.python_version()}, numpy "
        f"{np.__version__}, sksoftmax {sksoftmax.__version__}."
    )
    prior = np.bincount(y, minlength=K) / y.shape[0]
    prior_loss = float(-np.log(prior[y_test]).mean())
    say(f"Class-prior test log-loss {prior_loss:.4f} (log K = "
        f"{np.log(K):.4f}).")
    say()
    rows = []

    def record(name, m, extra=""):
        rows.append(
            f"| {name} | {m.cpu:.1f} | {m.wall:.1f} | {m.rss0 / 1e9:.2f} | "
            f"{m.peak / 1e9:.2f} | "
            f"{m.peak / xw:.3f} | {extra} |"
        )
        print(rows[-1], flush=True)

    params = {} if args.max_iter is None else {"max_iter": args.max_iter}
    clf = SoftmaxClassifier(random_state=0, verbose=1, **params)
    # the fit's own figures: seconds of each held-out scoring, and the
    # last one's per-row losses with their weights (the paired changes)
    scoring, last_rows = [], [None]
    held_out_losses = clf._held_out_losses

    def timed(held_out):
        t = time.perf_counter()
        value = held_out_losses(held_out)
        scoring.append(time.perf_counter() - t)
        last_rows[0] = (np.array(value), held_out[2])
        return value

    clf._held_out_losses = timed
    epochs = []

    # per held-out epoch, the scoring that gave its validation_loss_
    epoch_rows = []

    def on_epoch(est):
        epochs.append(time.perf_counter())
        if len(est.validation_loss_ or []) > len(epoch_rows):
            epoch_rows.append(last_rows[0])

    clf._epoch_callback = on_epoch
    with Measure() as m:
        t0 = time.perf_counter()
        clf.fit(X, y)
    m_fit = m
    # (the closures hold clf: dropped, so that its W is freed below)
    del clf._held_out_losses, clf._epoch_callback, timed
    held_out_losses = None
    n_val = len(clf.validation_loss_ or [])
    record(
        f"fit ({clf.solver_}, {clf.n_iter_} epochs: {n_val} held-out "
        f"phase + {clf.n_iter_ - n_val} refit)", m,
    )
    with Measure() as m:
        labels, proba = clf.predict_topk(X_test, k=5)
    top5 = float(np.mean(np.any(labels == y_test[:, None], axis=1)))
    record(f"predict_topk(k=5), {X_test.shape[0]} rows", m,
           f"top-5 accuracy {top5:.4f}")
    with Measure() as m:
        loss = clf.log_loss(X_test, y_test)
    record(f"log_loss, {X_test.shape[0]} rows", m,
           f"{loss:.4f} (class prior {prior_loss:.4f})")
    solver = clf.solver_
    params_used = clf._solver.estimator.get_params() if solver != "exact" \
        else {}
    curve = list(clf.validation_loss_ or [])
    best_iter, n_iter_no_change = clf.best_iter_, clf.n_iter_no_change
    del clf
    gc.collect()

    batch = slice(0, min(args.batch_rows, X.shape[0]))
    pf = SoftmaxClassifier(random_state=0)
    with Measure() as m:
        pf.partial_fit(X[batch], y[batch], classes=np.arange(K))
    record(f"partial_fit, {batch.stop} rows, classes=np.arange(K)", m,
           f"one pass: {pf.solver_}")
    del pf
    gc.collect()

    say("| operation | CPU s | wall s | RSS before GB | peak RSS GB | "
        "peak / (X + W) | |")
    say("|---|---|---|---|---|---|---|")
    for r in rows:
        say(r)
    say()
    say(
        f"The fit's solver: {solver!r}"
        + (f", momentum={params_used.get('momentum')}" if params_used else "")
        + "."
    )
    say()
    # per epoch: wall seconds between ends (the held-out scoring included)
    ends = np.diff(np.r_[t0, epochs])
    say(
        "| epoch | wall s (epoch end to epoch end) | held-out log-loss | "
        "change on the epoch before (paired z) | change on "
        f"{n_iter_no_change} epochs before (paired z) |"
    )
    say("|---|---|---|---|---|")
    for i, s in enumerate(ends):
        cells = [f"{curve[i]:.4f}" if i < len(curve) else "(refit)"]
        for lag in (1, n_iter_no_change):
            cells.append(
                paired_change(epoch_rows[i], epoch_rows[i - lag])
                if lag <= i < len(epoch_rows) else ""
            )
        say(f"| {i + 1} | {s:.1f} | " + " | ".join(cells) + " |")
    say()
    say(
        "Paired z: the mean change of the held-out rows' losses over its "
        "standard error (the noise test of the fit's undo, "
        "_held_out.significantly_worse); below -2, an improvement beyond "
        "the held-out rows' noise."
    )
    if curve:
        returned = curve[best_iter - 1]
        first = next(
            i for i, v in enumerate(curve) if v <= returned * 1.005
        )
        done = t0 + np.sum(ends[: first + 1])
        say(
            f"The fit returns epoch {best_iter}'s model (held-out "
            f"{returned:.4f}); its held-out loss first came within 0.5% of "
            f"that at epoch {first + 1}, {done - t0:.0f} s into the fit, "
            f"of {m_fit.wall:.0f} s: {m_fit.wall / (done - t0):.2f}x."
        )
    say(
        "The held-out scorings, in order (s; each after an epoch, with "
        "'exact' the first is the starting model's): "
        + ", ".join(f"{s:.1f}" for s in scoring)
        + f"; mean {np.mean(scoring):.2f} s, "
        f"{np.mean(scoring) / np.mean(ends) * 100:.1f}% of an epoch's "
        "wall seconds."
    )
    say(f"Whole run {time.perf_counter() - start:.0f} s.")
    report.write()


def paired_change(now, before):
    """'-0.0123 (-4.5)': the weighted mean change of per-row held-out
    losses from ``before`` to ``now`` ((losses, weights) pairs) and its
    paired z."""
    d = now[0] - before[0]
    p = now[1]
    mean = float(d @ p)
    var = float(((d - mean) ** 2) @ p)
    se = np.sqrt(var * float(p @ p))
    return f"{mean:+.4f} ({mean / se if se > 0 else 0.0:+.1f})"


def machine_limits():
    """(read GB/s, float32 FMA/s) of one thread: the best of three sums of
    a 1 GiB float32 array, and of three 2048^3 float32 matrix products on
    one BLAS thread."""
    from threadpoolctl import threadpool_limits

    a = np.ones(2**28, dtype=np.float32)
    a.sum()
    best = min(_timed(a.sum) for _ in range(3))
    bandwidth = a.nbytes / best
    del a
    m = np.random.RandomState(0).rand(2048, 2048).astype(np.float32)
    with threadpool_limits(1):
        m @ m
        best = min(_timed(lambda: m @ m) for _ in range(3))
    return bandwidth, 2048**3 / best


def _timed(f):
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


def zipf_rows(n, n_features, nnz, seed=1):
    """n CSR rows of nnz distinct features, feature j drawn with
    probability proportional to 1 / (j + 1), values uniform on [0.5, 1.5)."""
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, n_features + 1)
    p /= p.sum()
    cols = np.concatenate([
        np.sort(rng.choice(n_features, nnz, replace=False, p=p))
        for _ in range(n)
    ])
    data = (rng.random(n * nnz) + 0.5).astype(np.float32)
    return sp.csr_matrix(
        (data, cols, np.arange(0, n * nnz + 1, nnz)),
        shape=(n, n_features),
    )


def random_model(K, D, layout, seed=0):
    """An estimator (SCENTClassifier: every estimator shares the
    prediction code) holding random float32 weights of shape (K, D), W
    stored feature-major ("F", coef_ the transpose of a (D, K) array) or
    class-major ("C"), filled in slices of 64 MB (no second copy)."""
    from sksoftmax import SCENTClassifier

    rng = np.random.default_rng(seed)
    shape = (D, K) if layout == "F" else (K, D)
    W = np.empty(shape, dtype=np.float32)
    step = max(1, 2**24 // shape[1])
    for i in range(0, shape[0], step):
        rng.standard_normal(W[i : i + step].shape, dtype=np.float32,
                            out=W[i : i + step])
        W[i : i + step] *= 0.3
    est = SCENTClassifier()
    est.coef_ = W.T if layout == "F" else W
    est.intercept_ = rng.standard_normal(K).astype(np.float32)
    est.classes_ = np.arange(K)
    est.n_features_in_ = D
    return est


def prediction(args, out_path):
    """The ``--prediction`` section (see the module's docstring)."""
    K, D, n = args.n_classes, args.n_features, args.test_rows
    report = Report(out_path, "million_prediction", K)
    say = report.say

    bandwidth, fma = machine_limits()
    X, y, X_test, y_test, note = make_data(
        K, D, args.rows_per_class, n
    )
    w_bytes = K * D * 4
    xw = x_bytes(X) + w_bytes
    del X, y
    gc.collect()
    sets = {
        "6 nonzeros, Zipfian features": zipf_rows(n, D, 6),
        f"make_data test rows ({X_test.nnz / X_test.shape[0]:.1f} "
        "nonzeros)": X_test.astype(np.float32),
    }
    say(f"# Prediction at {K:,} classes, D = {D:,} (issue 60, items 1 "
        "and 3)")
    say()
    say(command_line())
    say()
    say(f"Model: random float32 weights, W {w_bytes / 1e9:.3f} GB. X + W "
        f"{xw / 1e9:.3f} GB (X: the {note.split(';')[0]} training rows "
        "that the fit would take).")
    say(f"Machine: {platform.machine()}, {os.cpu_count()} cores; one "
        f"thread reads {bandwidth / 1e9:.1f} GB/s and does "
        f"{fma / 1e9:.1f} G float32 FMA/s (sgemm).")
    say()
    say("| W layout | rows | call | n_jobs | wall s | limit s | "
        "ms a row | peak RSS GB | peak / (X + W) |")
    say("|---|---|---|---|---|---|---|---|---|")
    for layout in ("F", "C"):
        gc.collect()
        est = random_model(K, D, layout)
        name = {"F": "feature-major", "C": "class-major"}[layout]
        for label, Xs in sets.items():
            nnz = Xs.nnz
            used = np.unique(Xs.indices).shape[0]
            limit = max(nnz * K / fma, used * K * 4 / bandwidth)
            calls = [("predict_topk(k=5)", lambda e: e.predict_topk(Xs, k=5))]
            if "Zipf" not in label:
                yl = rng_labels(K, Xs.shape[0])
                calls += [("predict", lambda e: e.predict(Xs)),
                          ("log_loss", lambda e: e.log_loss(Xs, yl))]
            for call, f in calls:
                for n_jobs in (1, 2):
                    est.n_jobs = n_jobs
                    with Measure() as m:
                        f(est)
                    say(f"| {name} | {label} | {call} | {n_jobs} | "
                        f"{m.wall:.2f} | {limit / n_jobs:.2f} | "
                        f"{m.wall / Xs.shape[0] * 1e3:.3f} | "
                        f"{m.peak / 1e9:.2f} | {m.peak / xw:.3f} |")
            # one row at a time: the median of 50 calls, and of the
            # kernel's own time within them
            est.n_jobs = 1
            rows = [Xs[i : i + 1] for i in range(min(60, Xs.shape[0]))]
            times, kernel = [], []
            with kernel_timer(kernel):
                for i, r in enumerate(rows):
                    t = time.perf_counter()
                    est.predict_topk(r, k=5)
                    if i >= len(rows) - 50:
                        times.append(time.perf_counter() - t)
            per = np.median(times)
            own = np.median(kernel[-50:])
            row_nnz = np.mean([r.nnz for r in rows[-50:]])
            row_limit = max(row_nnz * K / fma, row_nnz * K * 4 / bandwidth)
            say(f"| {name} | {label} | predict_topk(k=5), one row "
                f"(median of 50; the kernel's own {own * 1e3:.3f} ms, "
                f"x{per / own:.2f}) | 1 | {per:.4f} | {row_limit:.4f} | "
                f"{per * 1e3:.3f} | | |")
        if layout == "C":
            relayout(est, say, xw, bandwidth)
        del est
        gc.collect()
    say()
    say("limit s: the larger of (multiply-adds) / (FMA rate x n_jobs) and "
        "(bytes of W the rows use, W read once) / (one thread's read "
        "bandwidth); a row also takes K exps and a top-k update, which "
        "the limit leaves out. For transpose_in_place: reading and "
        "writing W once at that bandwidth.")
    report.write()


def first_call(args, out_path):
    """The ``--first-call`` section (see the module's docstring)."""
    from sksoftmax import SoftmaxClassifier

    K, D = args.n_classes, args.n_features
    report = Report(out_path, "million_first_call", K)
    say = report.say

    X, y, _, _, note = make_data(K, D, args.rows_per_class, 10)
    xw = x_bytes(X) + K * D * 4
    # the host's first backing of pages this process never had (about
    # 4 s per GB on the machines measured) lands here, not on the call
    warm_bytes = 2**23 if args.quick else 3 * 2**30
    warm = np.ones(warm_bytes // 8)
    del warm
    say(f"# The first partial_fit at {K:,} classes (issue 60, item 4)")
    say()
    say(command_line())
    say()
    say(f"Data: {note}; {X.shape[0]:,} rows, X + W {xw / 1e9:.3f} GB. "
        f"{warm_bytes / 2**30:.3g} GiB written and freed before the calls.")
    say()
    say("| call | solver_ | CPU s | wall s | peak RSS GB | peak / (X + W) |")
    say("|---|---|---|---|---|---|")
    clf = SoftmaxClassifier(random_state=0)
    cpu = []
    for call in ("first", "second"):
        kwargs = {"classes": np.arange(K)} if call == "first" else {}
        with Measure() as m:
            clf.partial_fit(X, y, **kwargs)
        cpu.append(m.cpu)
        say(f"| {call} | {clf.solver_} | {m.cpu:.1f} | {m.wall:.1f} | "
            f"{m.peak / 1e9:.2f} | {m.peak / xw:.3f} |")
    say()
    say(f"First call / second call: {cpu[0] / cpu[1]:.2f}x CPU (target: at "
        "most 1.5x).")
    report.write()


def relayout(est, say, xw, bandwidth):
    """Rows for the in-place relayout of W: class-major to feature-major
    (the end of ``fit``, after which the feature-major rows above are what
    the model serves) and back (the next training call), on 1 and 2
    threads; the limit is reading and writing W once."""
    from sksoftmax._shared._transpose import transpose_in_place

    W = est.coef_
    limit = 2 * W.nbytes / bandwidth
    for n_threads in (1, 2):
        for what in ("class-major -> feature-major (fit's end)",
                     "feature-major -> class-major (next training call)"):
            with Measure() as m:
                W = transpose_in_place(W, n_threads)
            say(f"| {what} | | transpose_in_place, in place | {n_threads} | "
                f"{m.wall:.2f} | {limit:.2f} | | {m.peak / 1e9:.2f} | "
                f"{m.peak / xw:.3f} |")
    est.coef_ = W


class kernel_timer:
    """Append the seconds of each class-block kernel call to ``out``
    while active (the kernels of ``sksoftmax._prediction``, wrapped)."""

    def __init__(self, out):
        from sksoftmax import _prediction

        self.table = _prediction._CLASS_BLOCKS
        self.out = out

    def __enter__(self):
        self.saved = dict(self.table)
        for key, f in self.saved.items():
            self.table[key] = self._wrap(f)
        return self

    def _wrap(self, f):
        def timed(*a, **kw):
            t = time.perf_counter()
            f(*a, **kw)
            self.out.append(time.perf_counter() - t)

        return timed

    def __exit__(self, *exc):
        self.table.update(self.saved)
        return False


def rng_labels(K, n):
    return np.random.default_rng(2).integers(0, K, n)


if __name__ == "__main__":
    sys.exit(main())
