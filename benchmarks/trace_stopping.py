"""Trace default fits, then replay the held-out stopping rule on the traces.

The stopping tolerance (``tol``) decides when ``SoftmaxClassifier``'s
held-out phase ends; with the exact solver it changes nothing else before
that point (an epoch's undo depends on the best epoch, not on ``tol``), so
one fit that runs long records every shorter fit a larger ``tol`` would
have made. ``trace`` fits ``SoftmaxClassifier(random_state=0, tol=0)`` on a
set of bench_defaults.py and saves, after every epoch of its held-out
phase, the held-out rows' per-row log-losses and the test log-loss and
CPU seconds (evaluations excluded); it stops when the refit starts or
after ``--max-epochs``. ``simulate`` replays the rule (an epoch counts
when its held-out loss is below the best by more than ``tol`` times the
best; the phase ends after ``n_iter_no_change`` = 8 epochs that do not)
on every trace for each ``tol`` and writes one JSON line per (set, tol)
for ``bench_defaults.py --leave-one-out --within``: the test log-loss of
the epoch kept, and the CPU seconds of the phase plus the refit's replay
of the kept epochs when the set is refitted. A value whose phase would
end after the trace does is left out (``stopped`` false).

Usage (from benchmarks/)::

    python trace_stopping.py trace tokens_small --max-epochs 40
    (the traces go to benchmarks/traces/, not kept in git)
    python trace_stopping.py simulate --out results/sweep_tol_traces.jsonl
    python bench_defaults.py --leave-one-out \\
        results/sweep_tol_traces.jsonl --within 0.005
"""

import argparse
import glob
import json
import os
import sys
import time
import warnings

import numpy as np

TOLS = [0.0, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2]
PATIENCE = 8


class _Stop(Exception):
    pass


def trace(name, max_epochs, out_dir):
    import bench_defaults as bd

    import sksoftmax._softmax as module
    from sksoftmax import SoftmaxClassifier

    data, _ = bd.prepare(name)
    rows, weights, epochs = [], [], []
    losses = module.SoftmaxClassifier._held_out_losses

    def recording(self, held_out):
        r = losses(self, held_out)
        rows.append(np.asarray(r, dtype=np.float64).copy())
        if not weights:
            weights.append(np.asarray(held_out[2], dtype=np.float64).copy())
        return r

    path = os.path.join(out_dir, f"trace_{name}.npz")

    def save(refit):
        np.savez(
            path,
            rows=np.array(rows, dtype=object),
            p=weights[0] if weights else np.empty(0),
            epochs=np.array(epochs),
            refit=refit,
        )

    clf = SoftmaxClassifier(random_state=0, tol=0.0, verbose=1)
    state = dict(cb=0.0)

    def callback(model):
        enter = time.process_time()
        loss = float(model.log_loss(data["X_test"], data["y_test"]))
        # (held-out evaluations so far, CPU s, test log-loss)
        epochs.append((len(rows), enter - state["start"] - state["cb"], loss))
        state["cb"] += time.process_time() - enter
        refit = len(epochs) >= 2 and epochs[-1][0] == epochs[-2][0]
        save(refit)
        if refit:
            raise _Stop("the refit started")
        if len(epochs) >= max_epochs:
            raise _Stop(f"{max_epochs} epochs")

    module.SoftmaxClassifier._held_out_losses = recording
    clf._epoch_callback = callback
    warnings.simplefilter("ignore")
    state["start"] = time.process_time()
    try:
        clf.fit(data["X_train"], data["y_train"])
    except _Stop as why:
        print(f"[{name}] trace ends: {why}")
    finally:
        module.SoftmaxClassifier._held_out_losses = losses
    print(f"[{name}] {len(epochs)} epochs traced into {path}")


def load(path):
    """(held-out losses of the epochs of the phase, their test log-losses,
    CPU seconds, refit): the phase's epochs are the callbacks whose
    held-out evaluation count rose (the refit's do not evaluate)."""
    z = np.load(path, allow_pickle=True)
    rows, p = z["rows"], z["p"]
    kept, last = [], None
    for n_evals, cpu, loss in z["epochs"]:
        if last is not None and int(n_evals) == last:
            break
        kept.append((int(n_evals) - 1, cpu, loss))
        last = int(n_evals)
    held = np.array([rows[i] @ p for i, _, _ in kept])
    test = np.array([t for _, _, t in kept])
    cpu = np.array([c for _, c, _ in kept])
    return held, test, cpu, bool(z["refit"])


def stop_epoch(held, tol, patience=PATIENCE):
    """(epoch the phase ends, epoch kept, whether it ended in the trace):
    epoch 1 (the pilot's winner or the first epoch) is the start."""
    best = kept = held[0]
    kept_epoch, n_bad = 1, 0
    for epoch, loss in enumerate(held[1:], 2):
        improved = loss < best - tol * abs(best)
        best = min(best, loss)
        if loss < kept:
            kept, kept_epoch = loss, epoch
        n_bad = 0 if improved else n_bad + 1
        if n_bad >= patience:
            return epoch, kept_epoch, True
    return len(held), kept_epoch, False


def simulate(trace_dir, out):
    with open(out, "w") as f:
        for path in sorted(glob.glob(os.path.join(trace_dir, "trace_*.npz"))):
            name = os.path.basename(path)[len("trace_"):-len(".npz")]
            held, test, cpu, refit = load(path)
            for tol in TOLS:
                stop, kept, ended = stop_epoch(held, tol)
                seconds = cpu[stop - 1] + (cpu[kept - 1] if refit else 0.0)
                print(
                    f"{name:>22} tol={tol:<7g} ends at epoch {stop}"
                    f"{'' if ended else '+ (after the trace)'}, keeps "
                    f"{kept}: test {test[kept - 1]:.5f}, ~{seconds:.0f} CPU s"
                )
                if not ended:
                    continue
                f.write(json.dumps(dict(
                    set=name, setting="tol", value=tol,
                    log_loss=float(test[kept - 1]), cpu_s=float(seconds),
                    stop=stop, kept=kept, refit=refit,
                    traced_epochs=len(held),
                    best_traced_log_loss=float(test.min()),
                )) + "\n")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("trace")
    t.add_argument("set")
    t.add_argument("--max-epochs", type=int, default=100)
    t.add_argument("--dir", default="traces")
    s = sub.add_parser("simulate")
    s.add_argument("--dir", default="traces")
    s.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    if args.command == "trace":
        os.makedirs(args.dir, exist_ok=True)
        trace(args.set, args.max_epochs, args.dir)
    else:
        simulate(args.dir, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
