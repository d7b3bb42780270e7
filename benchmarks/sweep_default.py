"""Sweep one setting of ``SoftmaxClassifier`` over the sets of bench_defaults.

For the leave-one-dataset-out check of a package constant: each value of
the setting (a constructor parameter, a module constant of
``SoftmaxClassifier``'s modules (``sksoftmax._softmax``,
``_solver_choice``, ``_step_pilot``, ...) when written ``module:NAME``,
set in every module of the package that holds it, or a parameter of
the solver's expert estimator when written ``solver_param:NAME``, with
``--solver`` naming the solver) is fitted on every
set with ``random_state`` 0 .. seeds-1, everything else at its default;
the test log-loss, averaged over the seeds (a single seed's order moves
the test log-loss of the small sets by several percent), is written as
one JSON line per (set, value) in the format that
``bench_defaults.py --leave-one-out`` reads, which then prints the table.

Usage (from benchmarks/)::

    python sweep_default.py n_iter_no_change 2,3,5,8 \\
        --sets digits,digits_raw,bibtex,docstrings --seeds 3 \\
        --out results/sweep_n_iter_no_change.jsonl
    python bench_defaults.py --leave-one-out \\
        results/sweep_n_iter_no_change.jsonl
    python sweep_default.py solver_param:momentum 0.1,1.0 --solver scent \\
        --sets bibtex,docstrings --seeds 3 \\
        --out results/sweep_scent_momentum.jsonl
    python sweep_default.py --quick   # CI's smoke run
"""

import argparse
import json
import time
import warnings

import bench_defaults as bd
import numpy as np


def _parse(text):
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


# the modules of SoftmaxClassifier whose constants ``module:NAME`` sets
FRONT_DOOR = (
    "_softmax", "_solver_choice", "_step_pilot", "_held_out", "_descent",
    "_step_rule_race", "_centring", "_full_batch_fit", "_partial_fit",
)


def _holders(attr):
    """The package's modules that hold ``SoftmaxClassifier``'s constant
    ``attr``: the module of FRONT_DOOR that defines it and every module
    that imports it by name (the same object)."""
    import importlib
    import sys

    for name in FRONT_DOOR:
        owner = importlib.import_module(f"sksoftmax.{name}")
        if hasattr(owner, attr):
            break
    else:
        raise AttributeError(f"no module of SoftmaxClassifier holds {attr}")
    return [
        module for key, module in list(sys.modules.items())
        if key.startswith("sksoftmax.")
        and getattr(module, attr, None) is getattr(owner, attr)
    ]


def run(name, setting, value, seeds, data, solver="auto"):
    from sksoftmax import SoftmaxClassifier, _solver_choice

    kwargs, saved, chooser = {}, [], None
    if setting.startswith("module:"):
        attr = setting.split(":", 1)[1]
        for module in _holders(attr):
            saved.append((module, getattr(module, attr)))
            setattr(module, attr, value)
    elif setting.startswith("solver_param:"):
        # a parameter of the solver's expert estimator, set where the
        # estimator sets the ones it chooses itself for memory
        # (_solver_choice.memory_params, which sets _solver_params)
        param = setting.split(":", 1)[1]
        chooser = _solver_choice.memory_params

        def choose(est, *args, **kw):
            return {param: value}, ""

        _solver_choice.memory_params = choose
    else:
        kwargs[setting] = value
    losses, cpu, epochs = [], [], []
    try:
        for seed in range(seeds):
            clf = SoftmaxClassifier(
                random_state=seed, solver=solver, **kwargs
            )
            start = time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                clf.fit(data["X_train"], data["y_train"])
            cpu.append(time.process_time() - start)
            losses.append(clf.log_loss(data["X_test"], data["y_test"]))
            epochs.append(clf.n_iter_)
    finally:
        for module, old in saved:
            setattr(module, setting.split(":", 1)[1], old)
        if chooser is not None:
            _solver_choice.memory_params = chooser
    return dict(
        set=name,
        solver=solver,
        setting=setting,
        value=value,
        log_loss=float(np.mean(losses)),
        log_losses=[float(v) for v in losses],
        cpu_s=float(np.mean(cpu)),
        epochs=epochs,
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("setting", nargs="?")
    parser.add_argument(
        "values", nargs="?", help="comma-separated (JSON) values"
    )
    parser.add_argument(
        "--solver", default="auto",
        help="SoftmaxClassifier's solver (default 'auto')",
    )
    parser.add_argument("--sets")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--out")
    parser.add_argument(
        "--quick", action="store_true",
        help="CI's smoke run: n_iter_no_change 2,8 on digits and "
        "digits_raw, one seed, to a temporary file, then its "
        "leave-one-dataset-out table",
    )
    args = parser.parse_args()
    if args.quick:
        import tempfile

        args.setting, args.values = "n_iter_no_change", "2,8"
        args.sets, args.seeds = "digits,digits_raw", 1
        args.out = tempfile.mkstemp(suffix=".jsonl")[1]
    if not (args.setting and args.values and args.sets and args.out):
        parser.error("give a setting, its values, --sets and --out")
    values = [_parse(v) for v in args.values.split(",")]
    with open(args.out, "a") as out:
        for name in args.sets.split(","):
            data, _ = bd.prepare(name)
            for value in values:
                r = run(
                    name, args.setting, value, args.seeds, data, args.solver
                )
                print(
                    f"{name:>24} {args.setting}={value!r:<8} "
                    f"log-loss {r['log_loss']:.4f} "
                    f"({', '.join(f'{v:.4f}' for v in r['log_losses'])}) "
                    f"CPU {r['cpu_s']:.2f} s epochs {r['epochs']}",
                    flush=True,
                )
                out.write(json.dumps(r) + "\n")
    if args.quick:
        bd.leave_one_out(args.out)


if __name__ == "__main__":
    main()
