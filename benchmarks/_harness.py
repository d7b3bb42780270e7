"""Timing and memory machinery shared by the benchmark scripts.

- ``fit_verbose``: per-epoch kernel seconds of a sksoftmax estimator, read
  from its verbose lines (setup and the final fold are not in them).
- ``scaling``: per-epoch time and peak memory of one estimator at several
  numbers of classes with rows, features and nonzeros per row fixed, each
  size in a fresh subprocess (``python _harness.py --child ...``) so that
  peak RSS belongs to that model alone.
- ``json_child``: run any such child and read the JSON lines it prints.
- ``load_bibtex``: :func:`sksoftmax.datasets.fetch_bibtex`, offline from
  the project's ``../shared/data`` when it is there (``shared_data_dir``).

Peak memory is read from /proc/self/status (VmHWM), not from
``resource.getrusage``: on Linux a child's ``ru_maxrss`` starts from its
parent's peak (the mm copied at fork is the one measured at exec), so it
would not be the child's own.
"""

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import sksoftmax
from sksoftmax.datasets import fetch_bibtex, make_softmax_classification

EPOCH_LINE = re.compile(r"^Epoch (\d+): ([\d.]+) s")


BIBTEX_FILES = ("bibtex_train.svm.gz", "bibtex_test.svm.gz")


def shared_data_dir():
    """The folder of the project's real data, or None when absent.

    ``$SKSOFTMAX_SHARED_DATA`` first, then ``../shared/data`` beside the
    checkout; only an existing folder counts.
    """
    candidates = []
    env = os.environ.get("SKSOFTMAX_SHARED_DATA")
    if env:
        candidates.append(Path(env).expanduser())
    # <checkout>/benchmarks/_harness.py -> <checkout>/../shared/data
    candidates.append(Path(__file__).resolve().parents[2] / "shared" / "data")
    for path in candidates:
        if path.is_dir():
            return path
    return None


def load_bibtex(normalize=True, dtype=np.float64):
    """Bibtex by ``fetch_bibtex``, without the network when it can.

    The shared folder's Bibtex files are the very files fetch_bibtex
    caches: copied into a temporary data home, they are read with
    ``download_if_missing=False``. Without them, fetch_bibtex reads its
    cache in scikit-learn's data home, downloading Mulan's files the first
    time. Raises OSError when neither is possible.
    """
    folder = shared_data_dir()
    if folder is None or not all((folder / n).is_file() for n in BIBTEX_FILES):
        return fetch_bibtex(normalize=normalize, dtype=dtype)
    with tempfile.TemporaryDirectory() as home:
        # the cache folder fetch_bibtex's docstring names
        cache = Path(home) / "sksoftmax_multilabel"
        cache.mkdir()
        for name in BIBTEX_FILES:
            shutil.copyfile(folder / name, cache / name)
        return fetch_bibtex(
            data_home=home,
            download_if_missing=False,
            normalize=normalize,
            dtype=dtype,
        )


def make_estimator(name, **params):
    """A sksoftmax estimator by class name."""
    return getattr(sksoftmax, name)(**params)


def fit_verbose(clf, X, y):
    """Fit with verbose=1 and return the per-epoch kernel seconds."""
    clf.set_params(verbose=1)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        clf.fit(X, y)
    clf.set_params(verbose=0)
    return [
        float(m.group(2))
        for m in map(EPOCH_LINE.match, buf.getvalue().splitlines())
        if m
    ]


def child(estimator, n_classes, n_samples, n_features, density, epochs):
    """Run in a subprocess: one model, print per-epoch time and peak memory."""
    X, y = make_softmax_classification(
        n_samples=n_samples,
        n_features=n_features,
        n_classes=n_classes,
        density=density,
        random_state=0,
    )
    x_bytes = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    w_bytes = n_classes * n_features * X.dtype.itemsize
    before = _reset_peak_rss()
    # partial_fit with every class declared: W has n_classes rows even when
    # the rows do not show every class (fit would keep only the observed).
    clf = make_estimator(
        estimator,
        learning_rate="constant",
        eta0=0.05,
        random_state=0,
        verbose=1,
    )
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        for _ in range(epochs):
            clf.partial_fit(X, y, classes=np.arange(n_classes))
    seconds = [
        float(m.group(2))
        for m in map(EPOCH_LINE.match, buf.getvalue().splitlines())
        if m
    ]
    assert clf.coef_.shape == (n_classes, n_features)
    peak = _peak_rss_bytes()
    print(
        json.dumps(
            {
                "n_classes": n_classes,
                "epoch_s": float(np.min(seconds[1:])),
                "epoch_median_s": float(np.median(seconds[1:])),
                "fit_peak_bytes": max(peak - before, 0) + x_bytes,
                "x_plus_w_bytes": x_bytes + w_bytes,
                "nnz_per_row": X.nnz / X.shape[0],
            }
        )
    )


def _status_kb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"{field} not in /proc/self/status")


def _reset_peak_rss():
    """Reset the kernel's peak-RSS mark (VmHWM) and return the current RSS.

    Writing 5 to clear_refs resets VmHWM (Linux >= 4.0), so the peak read
    after the fit is the fit's own, not the data generator's.
    """
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    return _status_kb("VmRSS")


def _peak_rss_bytes():
    return _status_kb("VmHWM")


def json_child(argv, env=None):
    """Run ``argv`` and yield the JSON objects it prints, one a line.

    The child's other output lines go to stderr as they come (its stderr
    is inherited), so that a long run shows its progress.

    Parameters
    ----------
    argv : list of str
        The command, e.g. ``[sys.executable, script, "--child", spec]``.
    env : dict or None, default=None
        The child's environment; None inherits this one.

    Yields
    ------
    record : dict
        One per line of the child's stdout that starts with ``{``.

    Raises
    ------
    subprocess.CalledProcessError
        After the last record, when the child exits with a non-zero code
        (killed for lack of memory, an exception...).
    """
    with subprocess.Popen(
        argv, stdout=subprocess.PIPE, text=True, env=env
    ) as proc:
        for line in proc.stdout:
            if line.startswith("{"):
                yield json.loads(line)
            else:
                sys.stderr.write(line)
    if proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, argv[:3])


def scaling(estimator, sizes, n_samples, n_features, density, epochs, repeats):
    """Per-epoch time and peak memory per n_classes, each fit in a subprocess.

    The sizes are run in turn ``repeats`` times, interleaved, and the time
    kept is the fastest epoch (epochs 2.., over repeats): on a shared, noisy
    machine the minimum is the cost of the work itself. Medians are printed
    too.
    """
    print(
        f"\n== {estimator}, scaling in n_classes: {n_samples} rows, "
        f"{n_features} "
        f"features, density {density}, {epochs} epochs x {repeats} runs "
        "per size"
    )
    runs = {k: [] for k in sizes}
    for _ in range(repeats):
        for k in sizes:
            out = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--child",
                    estimator,
                    str(k),
                    str(n_samples),
                    str(n_features),
                    str(density),
                    str(epochs),
                ],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            runs[k].append(json.loads(out.strip().splitlines()[-1]))
    print(
        f"{'n_classes':>10}{'min s/ep':>10}{'vs 100':>8}{'median':>9}"
        f"{'vs 100':>8}{'nnz/row':>9}{'peak MB':>9}{'X+W MB':>8}"
        f"{'ratio':>7}"
    )
    rows = []
    for k in sizes:
        r = dict(runs[k][0])
        r["epoch_s"] = min(x["epoch_s"] for x in runs[k])
        r["epoch_median_s"] = float(
            np.median([x["epoch_median_s"] for x in runs[k]])
        )
        r["fit_peak_bytes"] = max(x["fit_peak_bytes"] for x in runs[k])
        rows.append(r)
        base = rows[0]
        print(
            f"{k:>10}{r['epoch_s']:>10.4f}"
            f"{r['epoch_s'] / base['epoch_s']:>8.2f}"
            f"{r['epoch_median_s']:>9.4f}"
            f"{r['epoch_median_s'] / base['epoch_median_s']:>8.2f}"
            f"{r['nnz_per_row']:>9.1f}{r['fit_peak_bytes'] / 2**20:>9.1f}"
            f"{r['x_plus_w_bytes'] / 2**20:>8.1f}"
            f"{r['fit_peak_bytes'] / r['x_plus_w_bytes']:>7.2f}"
        )
    return rows


def report(checks, quick=False):
    """Print PASS/FAIL per (name, ok, value) target; the exit code. With
    ``quick`` (a smoke run at sizes the targets are not about) the
    verdicts are printed and the exit code is 0."""
    print()
    for name, ok, value in checks:
        print(f"{'PASS' if ok else 'FAIL'}  {name}: {value}")
    if quick:
        print("(--quick: sizes far below the targets'; verdicts not enforced)")
        return 0
    return 0 if all(ok for _, ok, _ in checks) else 1


QUICK_HELP = (
    "a smoke run at tiny sizes, as CI runs every script: the code paths "
    "of a full run, figures that mean nothing, nothing written to results/"
)


if __name__ == "__main__" and sys.argv[1:2] == ["--child"]:
    name, k, n, d, dens, e = sys.argv[2:8]
    child(name, int(k), int(n), int(d), float(dens), int(e))
