"""The exact solver's cost bound, chosen leave-one-dataset-out.

``SoftmaxClassifier(solver='auto')`` fits with the exact gradient while
a row costs at most ``EXACT_MAX_MADDS`` multiply-adds (n_classes x (mean
nonzeros per row + 1)) and with SCENT beyond. This script reads
``bench_defaults.py``'s records (``results/defaults.jsonl``) and, for
every set where both solvers ran, prints:

- the set's multiply-adds per row;
- each solver's best test log-loss over everything it ran there (its
  grid points at every step, and the default's fit when the default took
  it) and the CPU seconds to that best;
- the CPU seconds the exact solver took to reach SCENT's best, if it
  did;
- the winner: the solver of the lower best test log-loss;
- leave-one-dataset-out: the bound fitted on the other sets (the
  geometric mean of the least per-row cost of a set SCENT won and the
  largest of a set the exact solver won below it; the largest set
  measured when SCENT won none) and the solver it gives the set left
  out, right or wrong.

Usage (from this folder)::

    python loo_solver_bound.py [--records results/defaults.jsonl]
                               [--out results/loo_solver_bound.md]
"""

import argparse
import math
from pathlib import Path

from bench_defaults import RESULTS, load_records


def _pool(records, solver):
    """The records of one solver on one set: its grid, and the default
    when the default took it."""
    out = []
    for (method, _config), r in records.items():
        if r.get("status") != "ok" or r.get("best_log_loss") is None:
            continue
        if method == solver or (
            method == "default" and r.get("solver_") == solver
        ):
            out.append(r)
    return out


def _cpu_to(records, loss):
    """Least CPU seconds at which any curve of ``records`` reached
    ``loss`` (None if none did)."""
    hits = [
        c["cpu_s"]
        for r in records
        for c in r.get("curve") or []
        if c["log_loss"] <= loss
    ]
    if not hits:
        hits = [
            r["cpu_s"]
            for r in records
            if r["best_log_loss"] <= loss and r.get("cpu_s") is not None
        ]
    return min(hits) if hits else None


def compare(path):
    """One row per set where both solvers ran."""
    facts, runs = load_records(path)
    rows = []
    for s in sorted({k[0] for k in runs}):
        records = {k[1:]: r for k, r in runs.items() if k[0] == s}
        exact, scent = _pool(records, "exact"), _pool(records, "scent")
        f = facts.get(s)
        if not exact or not scent or f is None:
            continue
        best = {}
        for name, pool in (("exact", exact), ("scent", scent)):
            r = min(pool, key=lambda r: r["best_log_loss"])
            best[name] = (r["best_log_loss"], r.get("best_cpu_s"))
        rows.append(
            dict(
                set=s,
                madds=f["n_classes"] * (f["nnz_per_row"] + 1.0),
                exact=best["exact"],
                scent=best["scent"],
                exact_to_scent=_cpu_to(exact, best["scent"][0]),
                winner="exact" if best["exact"][0] <= best["scent"][0]
                else "scent",
            )
        )
    return sorted(rows, key=lambda r: r["madds"])


def fitted_bound(rows):
    """The bound the rows give. Below the least per-row cost of a set
    SCENT won, the largest of a set the exact solver won; the bound is
    the geometric mean of the two (the middle of the gap, in log, taking
    neither side). When SCENT won none, the largest set measured: beyond
    it nothing is known, and the exact gradient's cost grows with the
    classes."""
    lose = min(
        (r["madds"] for r in rows if r["winner"] == "scent"), default=math.inf
    )
    win = max(
        (r["madds"] for r in rows if r["winner"] == "exact" and r["madds"] < lose),
        default=0.0,
    )
    if math.isinf(lose):
        return win
    if win == 0.0:
        return 0.0
    return math.sqrt(win * lose)


HEADER = (
    "set",
    "multiply-adds a row",
    "exact: best (CPU s)",
    "SCENT: best (CPU s)",
    "exact's CPU s to SCENT's best",
    "winner",
    "bound fitted without it",
    "its solver there",
)


def table_rows(rows):
    """The cells of the table, one list per set; and how many sets the
    bound fitted without them got right."""
    out, right = [], 0
    for r in rows:
        bound = fitted_bound([o for o in rows if o is not r])
        chosen = "exact" if r["madds"] <= bound else "scent"
        right += chosen == r["winner"]
        to = r["exact_to_scent"]
        out.append(
            [
                r["set"],
                f"{r['madds']:.3g}",
                f"{r['exact'][0]:.4f} ({r['exact'][1]:.1f})",
                f"{r['scent'][0]:.4f} ({r['scent'][1]:.1f})",
                "not reached" if to is None else f"{to:.1f}",
                r["winner"],
                f"{bound:.3g}",
                f"{chosen} ({'right' if chosen == r['winner'] else 'wrong'})",
            ]
        )
    return out, right


def rst_table(rows):
    """The table as an reStructuredText list-table (the user guide's)."""
    cells, _ = table_rows(rows)
    lines = [".. list-table::", "   :header-rows: 1", ""]
    for row in [list(HEADER), *cells]:
        lines.append(f"   * - {row[0]}")
        lines += [f"     - {c}" for c in row[1:]]
    return "\n".join(lines)


def report(rows):
    lines = [
        "| " + " | ".join(HEADER) + " |",
        "|" + "---|" * len(HEADER),
    ]
    cells, right = table_rows(rows)
    lines += ["| " + " | ".join(c) + " |" for c in cells]
    bound = fitted_bound(rows)
    lines += [
        "",
        f"Left out, the bound fitted on the other sets chose the winner on "
        f"{right} of {len(rows)} sets.",
        f"Fitted on all {len(rows)} sets: {bound:.4g} multiply-adds a row "
        f"(SCENT won {sum(r['winner'] == 'scent' for r in rows)} of them).",
    ]
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--records", type=Path, default=RESULTS / "defaults.jsonl")
    p.add_argument("--out", type=Path)
    p.add_argument(
        "--rst", action="store_true", help="also print an rst list-table"
    )
    args = p.parse_args(argv)
    rows = compare(args.records)
    text = (
        "# The exact solver's cost bound, leave-one-dataset-out\n\n"
        "From `benchmarks/loo_solver_bound.py` over "
        f"`{args.records.name}`: each solver's best test log-loss over "
        "what it ran on the set (CPU seconds to it, evaluation "
        "excluded).\n\n" + report(rows) + "\n"
    )
    print(text)
    if args.rst:
        print(rst_table(rows))
    if args.out:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
