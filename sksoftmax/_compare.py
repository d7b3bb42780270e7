"""``python -m sksoftmax compare``: our estimators beside scikit-learn's.

Fits every estimator of :data:`METHODS` and scikit-learn's
LogisticRegression (lbfgs) and SGDClassifier(loss="log_loss") on one dataset
and prints one table: fit seconds, train and test log-loss, test accuracy.
Later estimators join the table by adding an entry to ``METHODS``.
"""

import argparse
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression, SGDClassifier
from sklearn.utils import gen_batches

from . import datasets
from ._implicit import ImplicitSGDClassifier
from ._sampled import SampledSoftmaxClassifier
from ._umax import UMaxSoftmaxClassifier

# name -> factory(setting) with setting.alpha (the L2 penalty of the mean
# log-loss, the same for every method), setting.n_samples, setting.eta0
# ('auto', each estimator's default, or a learning rate for rows of unit
# norm divided by the median squared row norm of the data) and
# setting.random_state.


def _step(s, factor=1.0):
    # a hand-set rate is scaled per method (minibatch means and the
    # implicit step take larger ones); 'auto' is left to each estimator
    return s.eta0 if s.eta0 == "auto" else factor * s.eta0


METHODS = {
    "U-max (sksoftmax)": lambda s: UMaxSoftmaxClassifier(
        eta0=_step(s),
        alpha=s.alpha,
        max_iter=50,
        tol=None,
        random_state=s.random_state,
    ),
    "Implicit SGD (sksoftmax)": lambda s: ImplicitSGDClassifier(
        eta0=_step(s, 100),
        alpha=s.alpha,
        max_iter=50,
        tol=None,
        random_state=s.random_state,
    ),
    # biased: one-vs-each with 100-row minibatches sharing 5 classes; the
    # step follows a minibatch mean, hence the larger rate
    "OVE sampled softmax (sksoftmax)": lambda s: SampledSoftmaxClassifier(
        loss="ove",
        eta0=_step(s, 100),
        alpha=s.alpha,
        max_iter=50,
        tol=None,
        random_state=s.random_state,
    ),
    "LogisticRegression lbfgs": lambda s: LogisticRegression(
        solver="lbfgs", C=1.0 / (s.alpha * s.n_samples), max_iter=300
    ),
    "SGDClassifier log_loss (OvR)": lambda s: SGDClassifier(
        loss="log_loss",
        alpha=s.alpha,
        max_iter=50,
        tol=1e-4,
        random_state=s.random_state,
    ),
}


class Setting:
    """What the factories of :data:`METHODS` may read."""

    def __init__(self, alpha, n_samples, eta0, random_state):
        self.alpha, self.n_samples = alpha, n_samples
        self.eta0, self.random_state = eta0, random_state


def evaluate(clf, X, y, block=2048):
    """Exact mean log-loss of ``clf.predict_proba`` and accuracy, by blocks.

    Rows whose label the classifier never saw are scored as probability 0
    would be: they are removed by the caller instead (see ``main``).
    """
    index = {c: j for j, c in enumerate(clf.classes_)}
    cols = np.array([index[c] for c in y])
    nll, correct = 0.0, 0
    for rows in gen_batches(X.shape[0], block):
        P = clf.predict_proba(X[rows])
        p = P[np.arange(P.shape[0]), cols[rows]]
        nll -= np.log(np.maximum(p, np.finfo(np.float64).tiny)).sum()
        correct += int((P.argmax(axis=1) == cols[rows]).sum())
    return nll / X.shape[0], correct / X.shape[0]


def _load(args):
    if args.train:
        if not args.test:
            raise SystemExit("--train needs --test")
        return datasets.load_svmlight_pair(
            args.train, args.test, normalize=not args.raw
        )
    X, y = datasets.make_softmax_classification(
        n_samples=args.n_samples + args.n_samples // 4,
        n_features=args.n_features,
        n_classes=args.n_classes,
        density=args.density,
        random_state=args.random_state,
    )
    n = args.n_samples
    return X[:n], y[:n], X[n:], y[n:]


def compare(
    X_train,
    y_train,
    X_test,
    y_test,
    methods=None,
    alpha=1e-5,
    eta0="auto",
    random_state=0,
    out=print,
):
    """Fit each method and return the table rows (also printed via ``out``).

    Parameters
    ----------
    X_train, y_train, X_test, y_test : arrays
        Data; test rows with a label absent from training are dropped.
    methods : dict, default=None
        name -> factory(Setting); None uses :data:`METHODS`.
    alpha : float, default=1e-5
        L2 penalty of the mean log-loss, the same for every method.
    eta0 : 'auto' or float, default='auto'
        'auto': each stochastic estimator's default step. A float: the
        learning rate for unit-norm rows, divided by the median squared
        row norm of X_train (and multiplied by 100 for the methods whose
        steps are minibatch means or implicit).
    random_state : int, default=0
    out : callable, default=print

    Returns
    -------
    rows : list of tuple
        (name, fit_seconds, train_log_loss, test_log_loss, test_accuracy).

    Examples
    --------
    >>> from sksoftmax._compare import compare
    >>> from sksoftmax.datasets import make_softmax_classification
    >>> X, y = make_softmax_classification(600, 50, 5, density=0.1,
    ...                                    random_state=0)
    >>> rows = compare(X[:500], y[:500], X[500:], y[500:], out=lambda s: None)
    >>> len(rows[0])
    5
    """
    methods = METHODS if methods is None else methods
    sq = (
        np.asarray(X_train.multiply(X_train).sum(axis=1)).ravel()
        if hasattr(X_train, "multiply")
        else (X_train**2).sum(axis=1)
    )
    step = eta0 if eta0 == "auto" else eta0 / np.median(sq)
    setting = Setting(alpha, X_train.shape[0], step, random_state)
    seen = np.isin(y_test, np.unique(y_train))
    X_test, y_test = X_test[seen], y_test[seen]
    out(
        f"train {X_train.shape[0]} x {X_train.shape[1]}, test "
        f"{X_test.shape[0]} rows ({int((~seen).sum())} with unseen labels "
        f"dropped), {np.unique(y_train).shape[0]} classes"
    )
    header = (
        f"{'method':<32} {'fit s':>8} {'train logloss':>14} "
        f"{'test logloss':>13} {'test acc':>9}"
    )
    shown = step if step == "auto" else f"{step:.4g}"
    out(f"alpha={alpha:g} for every method; stochastic eta0={shown}")
    out(header)
    out("-" * len(header))
    rows = []
    for name, factory in methods.items():
        clf = factory(setting)
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf.fit(X_train, y_train)
        seconds = time.perf_counter() - start
        train_ll, _ = evaluate(clf, X_train, y_train)
        test_ll, test_acc = evaluate(clf, X_test, y_test)
        rows.append((name, seconds, train_ll, test_ll, test_acc))
        out(
            f"{name:<32} {seconds:>8.2f} {train_ll:>14.4f} {test_ll:>13.4f} "
            f"{test_acc:>9.4f}"
        )
    return rows


def main(argv=None):
    """Entry point of ``python -m sksoftmax``."""
    parser = argparse.ArgumentParser(
        prog="python -m sksoftmax", description="sksoftmax command line."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    cmp = sub.add_parser(
        "compare",
        help="fit sksoftmax and scikit-learn classifiers on one "
        "dataset and print fit time, log-loss and accuracy",
    )
    cmp.add_argument(
        "--train",
        help="training svmlight file (multi-label "
        "allowed: the first label is kept)",
    )
    cmp.add_argument("--test", help="test svmlight file")
    cmp.add_argument(
        "--raw",
        action="store_true",
        help="keep raw feature values (default: unit L2 rows)",
    )
    cmp.add_argument(
        "--n-samples",
        type=int,
        default=20000,
        help="synthetic training rows (a quarter more for test)",
    )
    cmp.add_argument("--n-features", type=int, default=2000)
    cmp.add_argument("--n-classes", type=int, default=1000)
    cmp.add_argument("--density", type=float, default=0.005)
    cmp.add_argument(
        "--alpha",
        type=float,
        default=1e-5,
        help="L2 penalty of the mean log-loss, for every method",
    )
    cmp.add_argument(
        "--eta0",
        type=float,
        default=None,
        help="learning rate for unit-norm rows (divided by the "
        "median squared row norm of the data); default: each "
        "estimator's eta0='auto'",
    )
    cmp.add_argument("--random-state", type=int, default=0)
    args = parser.parse_args(argv)
    if args.command == "compare":
        compare(
            *_load(args),
            alpha=args.alpha,
            eta0="auto" if args.eta0 is None else args.eta0,
            random_state=args.random_state,
        )
    return 0
