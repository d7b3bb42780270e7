"""``python -m sksoftmax compare``: every estimator beside scikit-learn's.

Fits the package's estimators that apply to the dataset, with their
defaults (``eta0='auto'``, no hand-picked step), and scikit-learn's
LogisticRegression (lbfgs) and SGDClassifier(loss="log_loss", one-vs-rest)
on one dataset, and prints one line per method as soon as it finishes:
fit seconds, train and test log-loss, test accuracy. While a fit runs, a
line on stderr says every ``progress`` seconds how long it has been
running, so nothing looks hung when a fit takes minutes.

Which methods apply: all eight estimators of the package, except
StochasticBoundClassifier when even its low-rank form is estimated beyond
its budget (:func:`sksoftmax._bound.low_rank_seconds`, more than a minute
per epoch); scikit-learn's two only while their dense ``n_classes x
n_features`` coefficients stay below ``SKLEARN_MAX_PARAMS`` (beyond it
LogisticRegression runs out of memory or for hours, and one-vs-rest SGD
makes one pass per class). ``--estimators`` names them explicitly (then
nothing is skipped).
"""

import argparse
import sys
import threading
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression, SGDClassifier
from sklearn.utils import gen_batches

from . import _bound, datasets
from ._registry import ESTIMATORS
from ._softmax import SoftmaxClassifier

# scikit-learn's classifiers hold a dense (n_classes, n_features) matrix
# (LogisticRegression's lbfgs several): beyond this many parameters they
# are left out unless asked for (1,000 classes x 2,000 features: 2e6)
SKLEARN_MAX_PARAMS = 20_000_000


def _ours(cls):
    def make(s):
        params = dict(alpha=s.alpha, random_state=s.random_state)
        if s.max_iter is not None:
            params["max_iter"] = s.max_iter
        if "n_jobs" in cls().get_params():
            params["n_jobs"] = s.n_jobs
        return cls(**params)

    return make


def _front_door(s):
    """SoftmaxClassifier as a user would run it: no arguments but the seed
    and the threads (its own alpha, held-out stopping and step rule)."""
    params = dict(random_state=s.random_state, n_jobs=s.n_jobs)
    if s.max_iter is not None:
        params["max_iter"] = s.max_iter
    return SoftmaxClassifier(**params)


def _logreg(s):
    return LogisticRegression(
        solver="lbfgs",
        C=1.0 / (s.alpha * s.n_samples),
        max_iter=300 if s.max_iter is None else s.max_iter,
    )


def _sgd(s):
    return SGDClassifier(
        loss="log_loss",
        alpha=s.alpha,
        max_iter=50 if s.max_iter is None else s.max_iter,
        tol=1e-4,
        random_state=s.random_state,
        n_jobs=s.n_jobs,
    )


def _bound_applies(s):
    d = s.n_classes * (s.n_features + 1)
    seconds = _bound.low_rank_seconds(s.n_samples, _bound.AUTO_RANK, 1, d)
    if seconds <= _bound.FULL_RANK_MAX_SECONDS:
        return None
    return (
        f"its low-rank form is estimated at {seconds:,.0f} s per epoch "
        f"(d = {d:,}), beyond its budget of "
        f"{_bound.FULL_RANK_MAX_SECONDS:.0f} s"
    )


def _sklearn_applies(s):
    params = s.n_classes * s.n_features
    if params <= SKLEARN_MAX_PARAMS:
        return None
    return (
        f"{s.n_classes:,} x {s.n_features:,} = {params:,} dense "
        f"coefficients, beyond {SKLEARN_MAX_PARAMS:,}"
    )


# the package's estimators that need a rule for when they apply (the rest
# apply to every setting)
_APPLIES = {"bound": _bound_applies}

# key -> (label, factory(setting), applies(setting) -> None or why not):
# the registry's estimators (_registry.py), then scikit-learn's
METHODS = {
    e.key: (
        e.label,
        _front_door if e.name == "SoftmaxClassifier" else _ours(e.load()),
        _APPLIES.get(e.key),
    )
    for e in ESTIMATORS
}
METHODS["logreg"] = ("LogisticRegression lbfgs", _logreg, _sklearn_applies)
METHODS["sgd"] = ("SGDClassifier log_loss OvR", _sgd, _sklearn_applies)


class Setting:
    """What the factories and rules of :data:`METHODS` may read."""

    def __init__(self, X, y, alpha, max_iter, n_jobs, random_state):
        self.n_samples, self.n_features = X.shape
        self.n_classes = np.unique(y).shape[0]
        self.alpha, self.max_iter = alpha, max_iter
        self.n_jobs, self.random_state = n_jobs, random_state


def evaluate(clf, X, y, block=2048):
    """Exact mean log-loss and accuracy of ``clf`` on (X, y), by blocks.

    The package's estimators use their own ``log_loss`` (no (n, K)
    array); scikit-learn's go through ``predict_proba`` by blocks. Every
    label of ``y`` must be in ``clf.classes_`` (``compare`` drops the
    others first).
    """
    if hasattr(clf, "score_topk"):
        return clf.log_loss(X, y), clf.score(X, y)
    cols = np.searchsorted(clf.classes_, y)
    nll, correct = 0.0, 0
    for rows in gen_batches(X.shape[0], block):
        P = clf.predict_proba(X[rows])
        p = P[np.arange(P.shape[0]), cols[rows]]
        nll -= np.log(np.maximum(p, np.finfo(np.float64).tiny)).sum()
        correct += int((P.argmax(axis=1) == cols[rows]).sum())
    return nll / X.shape[0], correct / X.shape[0]


class _Ticker:
    """Say on ``stream`` every ``every`` seconds that ``what`` still runs."""

    def __init__(self, what, every, stream):
        self.what, self.every, self.stream = what, every, stream
        self._stop = threading.Event()
        self._thread = None

    def __enter__(self):
        if self.every and self.every > 0:
            start = time.perf_counter()

            def tick():
                while not self._stop.wait(self.every):
                    elapsed = time.perf_counter() - start
                    print(
                        f"  ... {self.what}: {elapsed:.0f} s",
                        file=self.stream,
                        flush=True,
                    )

            self._thread = threading.Thread(target=tick, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self._thread is not None:
            self._thread.join()


def _subsample(X, y, n_rows, seed):
    if n_rows is None or X.shape[0] <= n_rows:
        return X, y
    rows = np.sort(
        np.random.RandomState(seed).choice(X.shape[0], n_rows, replace=False)
    )
    return X[rows], y[rows]


def compare(
    X_train,
    y_train,
    X_test,
    y_test,
    estimators=None,
    *,
    alpha=1e-5,
    max_iter=None,
    eval_rows=None,
    n_jobs=None,
    random_state=0,
    progress=15.0,
    out=print,
    err=sys.stderr,
):
    """Fit each method and return the table rows (printed as they come).

    Parameters
    ----------
    X_train, y_train, X_test, y_test : arrays
        Data; test rows with a label absent from training are dropped.
    estimators : list of str, default=None
        Keys of :data:`METHODS`; None runs every method that applies (see
        the module docstring). Named methods always run.
    alpha : float, default=1e-5
        L2 penalty of the mean log-loss, the same for every method.
    max_iter : int, default=None
        Epochs for every method; None keeps each estimator's default.
    eval_rows : int, default=None
        Evaluate the train and test log-loss on at most this many rows of
        each (a fixed random subset); None uses all of them.
    n_jobs : int, default=None
        Passed to the estimators that take it.
    random_state : int, default=0
    progress : float, default=15.0
        Seconds between the "still fitting" lines on ``err``; 0 for none.
    out : callable, default=print
        Receives each line of the table.
    err : file, default=sys.stderr
        Where progress lines go.

    Returns
    -------
    rows : list of tuple
        (key, label, fit_seconds, train_log_loss, test_log_loss,
        test_accuracy, eval_seconds) of the methods that ran;
        eval_seconds is the wall time of the two evaluations (the train
        and test rows scored).

    Examples
    --------
    >>> from sksoftmax._compare import compare
    >>> from sksoftmax.datasets import make_softmax_classification
    >>> X, y = make_softmax_classification(600, 50, 5, density=0.1,
    ...                                    random_state=0)
    >>> rows = compare(X[:500], y[:500], X[500:], y[500:],
    ...                estimators=["umax", "logreg"], out=lambda s: None)
    >>> [r[0] for r in rows]
    ['umax', 'logreg']
    """
    if estimators is not None:
        unknown = sorted(set(estimators) - set(METHODS))
        if unknown:
            raise ValueError(
                f"unknown estimators {unknown}; choose from "
                f"{', '.join(METHODS)}."
            )
    setting = Setting(X_train, y_train, alpha, max_iter, n_jobs, random_state)
    seen = np.isin(y_test, np.unique(y_train))
    X_test, y_test = X_test[seen], y_test[seen]
    X_tr_eval, y_tr_eval = _subsample(X_train, y_train, eval_rows, 1)
    X_te_eval, y_te_eval = _subsample(X_test, y_test, eval_rows, 2)
    out(
        f"train {X_train.shape[0]:,} x {X_train.shape[1]:,}, test "
        f"{X_test.shape[0]:,} rows ({int((~seen).sum()):,} with unseen "
        f"labels dropped), {setting.n_classes:,} classes; log-loss on "
        f"{X_tr_eval.shape[0]:,} train and {X_te_eval.shape[0]:,} test rows"
    )
    out(
        "SoftmaxClassifier with no arguments (its own alpha, held-out "
        "stopping and steps); "
        f"alpha={alpha:g} for every other method; each estimator's "
        "default step "
        f"(eta0='auto') and "
        + ("its default epochs" if max_iter is None else f"{max_iter} epochs")
    )
    header = (
        f"{'method':<28} {'fit s':>9} {'eval s':>8} {'train logloss':>14} "
        f"{'test logloss':>13} {'test acc':>9}"
    )
    out(header)
    out("-" * len(header))
    rows = []
    for key in METHODS if estimators is None else estimators:
        label, factory, applies = METHODS[key]
        if estimators is None and applies is not None:
            why = applies(setting)
            if why is not None:
                out(f"{label:<28} skipped: {why} (--estimators {key} runs it)")
                continue
        clf = factory(setting)
        start = time.perf_counter()
        with (
            _Ticker(f"fitting {label}", progress, err),
            warnings.catch_warnings(),
        ):
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf.fit(X_train, y_train)
        seconds = time.perf_counter() - start
        start = time.perf_counter()
        with _Ticker(f"evaluating {label}", progress, err):
            train_ll, _ = evaluate(clf, X_tr_eval, y_tr_eval)
            test_ll, test_acc = evaluate(clf, X_te_eval, y_te_eval)
        eval_seconds = time.perf_counter() - start
        rows.append(
            (key, label, seconds, train_ll, test_ll, test_acc, eval_seconds)
        )
        out(
            f"{label:<28} {seconds:>9.2f} {eval_seconds:>8.2f} "
            f"{train_ll:>14.4f} {test_ll:>13.4f} {test_acc:>9.4f}"
        )
    return rows


def plot(rows, path, title):
    """Write test log-loss against fit time, one point per method."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the machine
        raise SystemExit(f"--plot needs matplotlib ({exc}).") from None
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for key, label, seconds, _, test_ll, *_ in rows:
        ours = key in METHODS and key not in ("logreg", "sgd")
        ax.scatter(
            seconds,
            test_ll,
            marker="o" if ours else "s",
            s=50,
            label=label + ("" if ours else " (scikit-learn)"),
        )
    ax.set_xscale("log")
    ax.set_xlabel("fit time (s, wall clock)")
    ax.set_ylabel("test log-loss (nats)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _load(args):
    if args.dataset == "svmlight":
        if not (args.train and args.test):
            raise SystemExit("--dataset svmlight needs --train and --test")
        return datasets.load_svmlight_pair(
            args.train, args.test, normalize=not args.raw
        )
    if args.train or args.test:
        raise SystemExit("--train and --test go with --dataset svmlight")
    if args.dataset == "tokens":
        return datasets.make_python_tokens(n_classes=args.n_classes)
    X, y = datasets.make_softmax_classification(
        n_samples=args.n_samples + args.n_samples // 4,
        n_features=args.n_features,
        n_classes=args.n_classes,
        density=args.density,
        random_state=args.random_state,
    )
    n = args.n_samples
    return X[:n], y[:n], X[n:], y[n:]


def build_parser():
    """The argument parser of ``python -m sksoftmax``."""
    parser = argparse.ArgumentParser(
        prog="python -m sksoftmax", description="sksoftmax command line."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    cmp = sub.add_parser(
        "compare",
        help="fit sksoftmax's and scikit-learn's classifiers on one "
        "dataset and print fit time, log-loss and accuracy",
        description="Fit every applicable estimator with its defaults "
        "beside scikit-learn's LogisticRegression and SGDClassifier on one "
        "dataset; print a line per method as it finishes.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    cmp.add_argument(
        "--dataset",
        choices=["synthetic", "tokens", "svmlight"],
        default="synthetic",
        help="synthetic: make_softmax_classification (sized by --n-*); "
        "tokens: next-token prediction on Python's standard library "
        "(make_python_tokens, --n-classes classes; the first call builds it); "
        "svmlight: --train and --test files",
    )
    cmp.add_argument(
        "--estimators",
        nargs="+",
        choices=list(METHODS),
        default=None,
        metavar="NAME",
        help="methods to run, from: "
        + ", ".join(METHODS)
        + " (default: every one that applies to the data's size)",
    )
    cmp.add_argument(
        "--train",
        help="training svmlight file (multi-label allowed: the first "
        "label is kept)",
    )
    cmp.add_argument("--test", help="test svmlight file")
    cmp.add_argument(
        "--raw",
        action="store_true",
        help="svmlight: keep raw feature values (otherwise unit L2 rows)",
    )
    cmp.add_argument(
        "--n-samples",
        type=int,
        default=20000,
        help="synthetic: training rows (a quarter more for test)",
    )
    cmp.add_argument(
        "--n-features", type=int, default=2000, help="synthetic: features"
    )
    cmp.add_argument(
        "--n-classes",
        type=int,
        default=1000,
        help="synthetic and tokens: classes",
    )
    cmp.add_argument(
        "--density",
        type=float,
        default=0.005,
        help="synthetic: share of nonzero features per row",
    )
    cmp.add_argument(
        "--alpha",
        type=float,
        default=1e-5,
        help="L2 penalty of the mean log-loss, for every method",
    )
    cmp.add_argument(
        "--max-iter",
        type=int,
        default=None,
        help="epochs for every method (default: each estimator's own)",
    )
    cmp.add_argument(
        "--eval-rows",
        type=int,
        default=2000,
        help="train and test log-loss on at most this many rows of each "
        "(0: all)",
    )
    cmp.add_argument(
        "--n-jobs",
        type=int,
        default=None,
        help="threads for the estimators that take n_jobs (-1: all cores)",
    )
    cmp.add_argument(
        "--plot",
        metavar="FILE",
        default=None,
        help="also write test log-loss against fit time to FILE (PNG, "
        "needs matplotlib)",
    )
    cmp.add_argument(
        "--progress",
        type=float,
        default=15.0,
        help="seconds between 'still fitting' lines on stderr (0: none)",
    )
    cmp.add_argument("--random-state", type=int, default=0, help="seed")
    return parser


def main(argv=None):
    """Entry point of ``python -m sksoftmax``."""
    args = build_parser().parse_args(argv)
    if args.command == "compare":
        for name in ("n_samples", "n_features", "n_classes"):
            if getattr(args, name) < 2:
                raise SystemExit(f"--{name.replace('_', '-')} must be >= 2")
        if args.eval_rows < 0:
            raise SystemExit("--eval-rows must be >= 0")
        data = _load(args)
        rows = compare(
            *data,
            estimators=args.estimators,
            alpha=args.alpha,
            max_iter=args.max_iter,
            eval_rows=args.eval_rows or None,
            n_jobs=args.n_jobs,
            random_state=args.random_state,
            progress=args.progress,
            out=lambda line: print(line, flush=True),
        )
        if args.plot:
            title = f"{args.dataset}: {data[0].shape[0]:,} training rows"
            plot(rows, args.plot, title)
            print(f"wrote {args.plot}", flush=True)
    return 0
