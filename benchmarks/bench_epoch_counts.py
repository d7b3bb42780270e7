"""Per-epoch instruction counts of the estimators, one package tree beside
another, under valgrind's callgrind.

Wall-clock timings on a shared virtual machine move by 10-20 % from run to
run, and ``perf stat`` has no hardware counters there; callgrind counts the
instructions a process executes (Ir), which is deterministic for a fixed
program, input, interpreter and hash seed. With ``--cache-sim`` it also
simulates the caches and the script reports callgrind's estimated cycles,
``Ir + 10 (I1mr + D1mr + D1mw) + 100 (ILmr + DLmr + DLmw)``.

For each estimator and each package tree (a checkout built in place,
``python setup.py build_ext --inplace``), a child process with
``PYTHONPATH=<tree>`` runs under::

    valgrind --tool=callgrind --collect-atstart=no
             --toggle-collect=functools_reduce ...

It loads a fixed synthetic data set (``make_softmax_classification``,
written once by the first tree and read by every child, so that every tree
fits the very same arrays), builds the estimator with ``n_jobs=1``, a fixed
``eta0``, ``max_iter=1``, ``tol=None``, ``warm_start=True`` and
``random_state=0``, fits once outside the counted region (the first fit's
set-up: checks, class prior, allocations) and then runs ``--repeats``
further one-epoch fits through ``functools.reduce``, a C function that
calls back into Python: only what runs inside it is counted, the Python
of ``fit`` included. Each count is divided by ``--repeats``: the figure is
the cost of one warm-started one-epoch ``fit``.

A parameter that an older tree's estimator does not have is dropped for
that tree, and the table says so. Before each valgrind run the child runs
once natively (a probe) to check that ``fit`` itself never calls
``functools.reduce`` (callgrind's toggle would switch collection off inside
such a call) and to time the fits (wall-clock, for information only).

Callgrind runs 50 to 1,000 times slower than the machine (the exact
solver's AVX2 loops at a few million instructions a second): to keep a run
to a few minutes, SCENT and the A&R estimators, the dearest epochs
natively, fit the first rows only (``ROWS``, ``--rows NAME=N``), the same
rows in every tree. Also counted, in every
tree alike: pandas' import calls ``functools.reduce`` twice (a few
thousand instructions). Repeating a run gives the same count to about
1e-6; runs whose command lines differ move by up to about 3e-4 (memory
layout).

StochasticBoundClassifier keeps a dense curvature over n_classes x
(n_features + 1) parameters: it gets a small dense problem cut from the
same data (first ``--bound-rows`` rows, first ``--bound-features`` columns
made dense, labels ``y % --bound-classes``).

Usage (each tree built in place first; the interpreter must be a real
binary, not a pyenv shim, for valgrind to follow it)::

    python benchmarks/bench_epoch_counts.py \\
        --trees main=/work/wt-cg b83cc5d=/tmp/cg-b83 \\
        [--estimators UMaxSoftmaxClassifier ImplicitSGDClassifier:sampler=uniform]
        [--repeats 2] [--cache-sim] [--workdir DIR [--reuse]]
        [--out results/epoch_counts.md]

Ratios are the first tree's count over each other tree's (``main / b83``
above 1 means main executes more instructions per epoch).
"""

import argparse
import ast
import functools
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve()

ESTIMATORS = (
    "SoftmaxClassifier",
    "UMaxSoftmaxClassifier",
    "ImplicitSGDClassifier",
    "SampledSoftmaxClassifier",
    "SCENTClassifier",
    "ARSoftmaxClassifier",
    "ARProbitClassifier",
    "ARLogisticClassifier",
    "StochasticBoundClassifier",
)
COMMON = dict(
    n_jobs=1, eta0=0.05, max_iter=1, tol=None, warm_start=True, random_state=0
)
# per estimator, on top of COMMON
EXTRA = {
    "SoftmaxClassifier": dict(solver="exact", early_stopping=False, eta0=1.0),
    "StochasticBoundClassifier": dict(eta0=1.0),
}
DENSE_SMALL = ("StochasticBoundClassifier",)
# the estimators whose epochs are dearest natively fit the first rows only
ROWS = {
    "SCENTClassifier": 4_000,
    "ARSoftmaxClassifier": 5_000,
    "ARProbitClassifier": 5_000,
    "ARLogisticClassifier": 5_000,
}
PYTHON = "/root/.pyenv/versions/3.11.7/bin/python"
CYCLE_WEIGHTS = dict(I1mr=10, D1mr=10, D1mw=10, ILmr=100, DLmr=100, DLmw=100)


# --- the child: data, one estimator, the counted fits ---------------------


def make_data(spec):
    """Write X (CSR float32) and y once, from the first tree's generator."""
    import numpy as np
    import scipy
    import scipy.sparse as sp
    import sklearn

    import sksoftmax
    from sksoftmax.datasets import make_softmax_classification

    X, y = make_softmax_classification(
        n_samples=spec["n_samples"],
        n_features=spec["n_features"],
        n_classes=spec["n_classes"],
        density=spec["density"],
        random_state=spec["seed"],
        dtype=np.float32,
    )
    X = sp.csr_matrix(X, dtype=np.float32)
    folder = Path(spec["data"])
    sp.save_npz(folder / "X.npz", X, compressed=False)
    np.save(folder / "y.npy", y)
    return dict(
        shape=list(X.shape),
        nnz=int(X.nnz),
        n_classes_seen=int(np.unique(y).shape[0]),
        numpy=np.__version__,
        scipy=scipy.__version__,
        sklearn=sklearn.__version__,
        python=platform.python_version(),
        sksoftmax=sksoftmax.__file__,
    )


def load_data(spec, name):
    import numpy as np
    import scipy.sparse as sp

    folder = Path(spec["data"])
    X = sp.load_npz(folder / "X.npz").tocsr()
    y = np.load(folder / "y.npy")
    if name in DENSE_SMALL:
        rows, cols = spec["bound_rows"], spec["bound_features"]
        X = np.ascontiguousarray(X[:rows, :cols].toarray())
        y = y[:rows] % spec["bound_classes"]
    elif spec.get("rows"):
        X, y = X[: spec["rows"]], y[: spec["rows"]]
    return X, y


def child(spec):
    """One estimator of one tree: warm-up fit, then the counted fits."""
    warnings.simplefilter("ignore")
    import sksoftmax

    name = spec["estimator"]
    cls = getattr(sksoftmax, name)
    valid = cls().get_params()
    params = {k: v for k, v in spec["params"].items() if k in valid}
    dropped = sorted(set(spec["params"]) - set(params))
    X, y = load_data(spec, name)
    est = cls(**params)
    for _ in range(spec.get("warmup", 1)):
        est.fit(X, y)
    n_iter_warm = getattr(est, "n_iter_", None)

    def epochs():
        return functools.reduce(
            lambda acc, _: (est.fit(X, y), acc)[1], range(spec["repeats"]), 0
        )

    start = time.perf_counter()
    epochs()  # the counted region under callgrind
    seconds = time.perf_counter() - start
    result = dict(
        spec={k: v for k, v in spec.items() if k not in ("probe", "result")},
        sksoftmax=sksoftmax.__file__,
        params=params,
        dropped=dropped,
        shape=list(X.shape),
        n_iter_warm=n_iter_warm,
        n_iter=getattr(est, "n_iter_", None),
        seconds_per_fit=seconds / spec["repeats"],
    )
    if spec["probe"]:
        # fit must not call functools.reduce itself: the toggle would switch
        # collection off inside it
        calls = []

        def watch(frame, event, arg):
            if event == "c_call" and arg is functools.reduce:
                calls.append(1)

        sys.setprofile(watch)
        try:
            est.fit(X, y)
        finally:
            sys.setprofile(None)
        result["nested_reduce"] = len(calls)
    Path(spec["result"]).write_text(json.dumps(result))


# --- the parent: runs, parsing, table --------------------------------------


def parse_estimator(text):
    """'Name' or 'Name:key=value,key=value' -> (label, name, params)."""
    name, _, rest = text.partition(":")
    params = dict(COMMON)
    params.update(EXTRA.get(name, {}))
    for item in filter(None, rest.split(",")):
        key, _, value = item.partition("=")
        try:
            params[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            params[key] = value
    return text, name, params


def read_totals(path):
    """The events line and totals of a callgrind output file."""
    events, totals = None, None
    for line in Path(path).read_text().splitlines():
        if line.startswith("events:"):
            events = line.split()[1:]
        elif line.startswith("summary:") or (
            line.startswith("totals:") and totals is None
        ):
            totals = [int(v) for v in line.split()[1:]]
    counts = dict(zip(events, totals))
    if all(k in counts for k in CYCLE_WEIGHTS):
        counts["cycles"] = counts["Ir"] + sum(
            w * counts[k] for k, w in CYCLE_WEIGHTS.items()
        )
    return counts


def run_key(spec):
    """What a run's counts depend on (for ``--reuse``)."""
    skip = {"probe", "result"}
    if spec.get("estimator") not in DENSE_SMALL:
        skip |= {"bound_rows", "bound_features", "bound_classes"}
    return {k: v for k, v in spec.items() if k not in skip and v is not None}


def run_child(args, tree, spec, workdir, tag, cache_sim):
    """Native probe, then the callgrind run; returns (result, counts, s).

    With ``--reuse``, a run of the same spec whose files are in the work
    folder is read instead of being repeated.
    """
    out = workdir / f"{tag}{'.cache' if cache_sim else ''}.callgrind"
    done = workdir / f"{tag}{'.cache' if cache_sim else ''}.json"
    wall_file = done.with_suffix(".wall")
    probe_file = workdir / f"{tag}.probe.json"
    if args.reuse and done.exists() and out.exists() and wall_file.exists():
        result = json.loads(done.read_text())
        if run_key(result.get("spec", {})) == run_key(spec):
            probe = json.loads(probe_file.read_text())
            result["seconds_per_fit"] = probe["seconds_per_fit"]
            return result, read_totals(out), float(wall_file.read_text())
    env = dict(
        os.environ,
        PYTHONPATH=tree,
        PYTHONHASHSEED="0",
        OMP_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
    )
    probe = dict(spec, probe=True, result=str(probe_file))
    subprocess.run(
        [args.python, str(HERE), "--child", json.dumps(probe)],
        env=env,
        check=True,
    )
    result = json.loads(Path(probe["result"]).read_text())
    if result["nested_reduce"]:
        raise RuntimeError(f"{tag}: fit calls functools.reduce itself")
    counted = dict(spec, probe=False, result=str(done))
    cmd = [
        args.valgrind,
        "--tool=callgrind",
        "--collect-atstart=no",
        "--toggle-collect=functools_reduce",
        f"--callgrind-out-file={out}",
        f"--cache-sim={'yes' if cache_sim else 'no'}",
        args.python,
        str(HERE),
        "--child",
        json.dumps(counted),
    ]
    start = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    wall_file.write_text(f"{wall:.1f}")
    result = dict(result, **{
        k: v for k, v in json.loads(done.read_text()).items()
        if k in ("spec", "n_iter_warm", "n_iter", "dropped")
    })
    return result, read_totals(out), wall


def git_head(tree):
    try:
        return subprocess.run(
            ["git", "-C", tree, "log", "-1", "--format=%h %cs"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


def cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def fmt(n):
    return f"{n:,.0f}"


def table(rows, labels, key, title):
    """Markdown table of one event (Ir or cycles) per fit."""
    first = labels[0]
    head = ["estimator", "X"] + [f"{lab} {title}/epoch" for lab in labels]
    head += [f"{first} / {lab}" for lab in labels[1:]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for est, per_tree in rows.items():
        values = [per_tree.get(lab, {}).get(key) for lab in labels]
        if values[0] is None and all(v is None for v in values):
            continue
        shape = next(v["shape"] for v in per_tree.values())
        cells = [f"`{est}`", " x ".join(map(str, shape))]
        cells += [fmt(v) if v is not None else "n/a" for v in values]
        for v in values[1:]:
            ok = v is not None and values[0] is not None
            cells.append(f"{values[0] / v:.4f}" if ok else "n/a")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--trees",
        nargs="+",
        required=False,
        metavar="LABEL=PATH",
        help="package trees built in place; the first is the reference",
    )
    parser.add_argument("--estimators", nargs="+", default=list(ESTIMATORS),
                        help="Name or Name:key=value,key=value")
    parser.add_argument("--repeats", type=int, default=2,
                        help="counted one-epoch fits per run")
    parser.add_argument("--warmup", type=int, default=1,
                        help="uncounted one-epoch fits before them (4 with "
                        "--repeats 3 counts epochs 5-7, where a loop of "
                        "warm fits runs no runaway check: the median epoch)")
    parser.add_argument("--cache-sim", action="store_true",
                        help="simulate the caches too (about twice as slow): "
                        "estimated cycles beside Ir")
    parser.add_argument("--n-samples", type=int, default=20_000)
    parser.add_argument("--n-features", type=int, default=5_000)
    parser.add_argument("--n-classes", type=int, default=2_000)
    parser.add_argument("--density", type=float, default=0.002)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rows", nargs="*", default=[], metavar="NAME=N",
                        help="fit only the first N rows for estimator NAME "
                        f"(default {ROWS})")
    parser.add_argument("--bound-rows", type=int, default=1_000)
    parser.add_argument("--bound-features", type=int, default=20)
    parser.add_argument("--bound-classes", type=int, default=10)
    parser.add_argument("--python", default=PYTHON,
                        help="a real interpreter binary (not a shim)")
    parser.add_argument("--valgrind", default="valgrind")
    parser.add_argument("--workdir", default=None,
                        help="keep data and callgrind files here")
    parser.add_argument("--reuse", action="store_true",
                        help="read the runs of the same spec already in "
                        "--workdir instead of repeating them")
    parser.add_argument("--out", default=None, help="append the tables here")
    parser.add_argument(
        "--quick", action="store_true",
        help="CI's smoke run: this checkout (built in place), the front "
        "door's exact solver on tiny data, this interpreter",
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--make-data", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        here = str(HERE.parent.parent)
        args.trees = args.trees or [f"this={here}"]
        args.estimators = ["SoftmaxClassifier"]
        args.n_samples, args.n_features, args.n_classes = 2_000, 500, 100
        args.repeats, args.warmup, args.python = 1, 1, sys.executable
    if args.child:
        return child(json.loads(args.child))
    if args.make_data:
        spec = json.loads(args.make_data)
        Path(spec["info"]).write_text(json.dumps(make_data(spec)))
        return 0
    if not args.trees:
        parser.error("--trees is required")

    trees = dict(t.split("=", 1) for t in args.trees)
    first_rows = dict(ROWS)
    first_rows.update(
        {k: int(v) for k, v in (r.split("=") for r in args.rows)}
    )
    labels = list(trees)
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="epoch_counts-"))
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "data").mkdir(exist_ok=True)
    spec = dict(
        data=str(workdir / "data"),
        n_samples=args.n_samples,
        n_features=args.n_features,
        n_classes=args.n_classes,
        density=args.density,
        seed=args.seed,
        bound_rows=args.bound_rows,
        bound_features=args.bound_features,
        bound_classes=args.bound_classes,
        repeats=args.repeats,
    )
    if args.warmup != 1:
        spec["warmup"] = args.warmup
    info_file = workdir / "data" / "info.json"
    env = dict(os.environ, PYTHONPATH=trees[labels[0]], PYTHONHASHSEED="0")
    subprocess.run(
        [args.python, str(HERE), "--make-data",
         json.dumps(dict(spec, info=str(info_file)))],
        env=env,
        check=True,
    )
    info = json.loads(info_file.read_text())

    rows, notes, walls = {}, [], []
    for text in args.estimators:
        label, name, params = parse_estimator(text)
        rows[label] = {}
        for lab in labels:
            tag = f"{lab}-{label}".replace(":", "_").replace(",", "_")
            tag = tag.replace("=", "-")
            run_spec = dict(
                spec, estimator=name, params=params, rows=first_rows.get(name)
            )
            try:
                result, counts, wall = run_child(
                    args, trees[lab], run_spec, workdir, tag, args.cache_sim
                )
            except (subprocess.CalledProcessError, RuntimeError) as exc:
                notes.append(f"{label} on {lab}: failed ({exc})")
                print(notes[-1], file=sys.stderr)
                continue
            entry = rows[label].setdefault(lab, dict(result))
            entry["Ir"] = counts["Ir"] / args.repeats
            if "cycles" in counts:
                entry["cycles"] = counts["cycles"] / args.repeats
            walls.append(f"{label} on {lab}: {wall:.0f} s")
            print(walls[-1], f"Ir/epoch {entry['Ir']:,.0f}", file=sys.stderr,
                  flush=True)
            entry = rows[label].get(lab)
            if entry and entry["dropped"]:
                notes.append(
                    f"{label} on {lab}: parameters not in this tree, dropped: "
                    + ", ".join(entry["dropped"])
                )

    lines = [
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, {cpu_model()};"
        f" Python {info['python']}, numpy {info['numpy']}, scipy "
        f"{info['scipy']}, scikit-learn {info['sklearn']}; "
        + subprocess.run([args.valgrind, "--version"], capture_output=True,
                         text=True).stdout.strip().splitlines()[0],
        "",
        "Trees: " + ", ".join(f"{lab} = {trees[lab]} ({git_head(trees[lab])})"
                              for lab in labels),
        "",
        f"Data: make_softmax_classification(n_samples={args.n_samples}, "
        f"n_features={args.n_features}, n_classes={args.n_classes}, "
        f"density={args.density}, random_state={args.seed}, dtype=float32), "
        f"CSR: {info['shape'][0]} x {info['shape'][1]}, {info['nnz']} "
        f"nonzeros ({info['nnz'] / info['shape'][0]:.2f} per row), "
        f"{info['n_classes_seen']} classes seen. StochasticBoundClassifier: "
        f"first {args.bound_rows} rows, first {args.bound_features} columns "
        f"dense, y % {args.bound_classes}. First rows only: {first_rows}.",
        "",
        f"Parameters: {COMMON}, plus {EXTRA}; {args.warmup} warm-up fit(s), then "
        f"{args.repeats} counted one-epoch fits (warm_start) per run, "
        "divided by the repeats.",
        "",
    ]
    lines += table(rows, labels, "Ir", "Ir")
    if args.cache_sim:
        lines += ["", "Estimated cycles (Ir + 10 L1 misses + 100 LL misses):",
                  ""]
        lines += table(rows, labels, "cycles", "cycles")
    def per_tree(title, cell):
        """One line: per estimator, each tree's ``cell(figures)``."""
        return ["", title + "; ".join(
            f"{est} " + ", ".join(f"{lab} {cell(v)}" for lab, v in per.items())
            for est, per in rows.items())]

    lines += per_tree(
        "Native wall-clock s per fit (probe run, information only): ",
        lambda v: f"{v['seconds_per_fit']:.3f}")
    lines += per_tree(
        "n_iter_ after the warm-up fit -> after the counted fits: ",
        lambda v: f"{v['n_iter_warm']}->{v['n_iter']}")
    if notes:
        lines += [""] + [f"- {n}" for n in notes]
    lines += ["", "Valgrind runs: " + "; ".join(walls)]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "a") as f:
            f.write(text + "\n")
    if not args.workdir:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
