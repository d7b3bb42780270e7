"""``python -m sksoftmax compare``: methods, skip rules, progress, options."""

import io
import re
import time

import numpy as np
import pytest

from sksoftmax import _compare
from sksoftmax._compare import METHODS, build_parser, compare, main
from sksoftmax.datasets import make_softmax_classification


@pytest.fixture(scope="module")
def small():
    X, y = make_softmax_classification(600, 40, 6, density=0.2, random_state=0)
    return X[:480], y[:480], X[480:], y[480:]


def test_every_estimator_of_the_package_is_a_method():
    import sksoftmax

    ours = {
        type(factory(_setting())).__name__
        for _, factory, _ in METHODS.values()
    }
    public = {
        name for name in sksoftmax.__all__ if name.endswith("Classifier")
    }
    assert public <= ours


def _setting(n=100, d=10, K=5):
    X = np.zeros((n, d))
    y = np.arange(n) % K
    return _compare.Setting(X, y, 1e-5, None, None, 0)


def test_lines_come_as_each_method_finishes(small, monkeypatch):
    """One table line per method, printed before the next method's fit
    starts (not the whole table at the end), with finite log-losses and
    accuracies in [0, 1]."""
    events = []

    def recording(key):
        label, factory, applies = METHODS[key]

        def make(s):
            clf = factory(s)
            fit = clf.fit

            def logged_fit(X, y):
                events.append(f"fit {key}")
                return fit(X, y)

            clf.fit = logged_fit
            return clf

        return label, make, applies

    keys = ["umax", "sgd", "ar-probit"]
    for key in keys:
        monkeypatch.setitem(_compare.METHODS, key, recording(key))
    rows = compare(*small, estimators=keys, out=events.append, progress=0)
    assert [r[0] for r in rows] == keys
    # the table's header names the evaluation time beside the fit time
    assert any("fit s" in e and "eval s" in e for e in events if isinstance(e, str))
    table = [
        e for e in events if e.startswith(("fit ", "U-max", "SGD", "A&R"))
    ]
    assert [t.split()[0] for t in table] == [
        "fit",
        "U-max",
        "fit",
        "SGDClassifier",
        "fit",
        "A&R",
    ]
    for key, label, seconds, train_ll, test_ll, acc, eval_s in rows:
        assert seconds > 0 and eval_s > 0
        assert np.isfinite(train_ll) and np.isfinite(test_ll)
        assert 0.0 <= acc <= 1.0
    assert rows[0][4] < np.log(6)  # better than the uniform model


def test_skip_rules_and_explicit_names(small, monkeypatch):
    """Beyond their size rules the bound method and scikit-learn's are
    skipped with the reason; named with --estimators they run anyway."""
    monkeypatch.setattr(_compare, "SKLEARN_MAX_PARAMS", 10)
    monkeypatch.setattr(
        _compare,
        "METHODS",
        {k: METHODS[k] for k in ("umax", "bound", "logreg")},
    )
    monkeypatch.setattr(_compare._bound, "FULL_RANK_MAX_SECONDS", 0.0)
    lines = []
    rows = compare(*small, out=lines.append, progress=0)
    assert [r[0] for r in rows] == ["umax"]
    text = "\n".join(lines)
    assert re.search(r"Stochastic bound .*skipped: its low-rank form", text)
    assert re.search(r"LogisticRegression .*skipped: 6 x 40 = 240", text)
    rows = compare(
        *small, estimators=["logreg"], out=lambda s: None, progress=0
    )
    assert [r[0] for r in rows] == ["logreg"]


def test_progress_lines_while_a_fit_runs(small, monkeypatch):
    class Slow:
        classes_ = np.arange(6)

        def fit(self, X, y):
            time.sleep(0.35)
            return self

        def predict_proba(self, X):
            return np.full((X.shape[0], 6), 1 / 6)

    monkeypatch.setitem(
        _compare.METHODS, "slow", ("Slow one", lambda s: Slow(), None)
    )
    err = io.StringIO()
    rows = compare(
        *small,
        estimators=["slow"],
        out=lambda s: None,
        progress=0.1,
        err=err,
    )
    assert "... fitting Slow one" in err.getvalue()
    assert rows[0][4] == pytest.approx(np.log(6))


def test_unknown_estimator_is_refused(small):
    with pytest.raises(ValueError, match="unknown estimators.*nope"):
        compare(*small, estimators=["nope"], out=lambda s: None)
    with pytest.raises(SystemExit):
        main(["compare", "--estimators", "nope"])


def test_help_describes_every_option_with_its_default(capsys):
    parser = build_parser()
    sub = parser._subparsers._group_actions[0].choices["compare"]
    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for action in sub._actions:
        if action.dest == "help":
            continue
        assert action.help, action.dest
        assert action.option_strings[0] in text
    for default in (
        "(default: synthetic)",
        "(default: 2000)",
        "(default: 1e-05)",
        "(default: 15.0)",
    ):
        assert default in text


def test_main_prints_and_plots(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    path = tmp_path / "ll.png"
    main(
        [
            "compare",
            "--n-samples",
            "400",
            "--n-features",
            "30",
            "--n-classes",
            "5",
            "--density",
            "0.3",
            "--estimators",
            "umax",
            "logreg",
            "--plot",
            str(path),
            "--progress",
            "0",
        ]
    )
    out = capsys.readouterr().out
    assert "U-max" in out and "LogisticRegression" in out
    assert path.stat().st_size > 1000
    assert f"wrote {path}" in out


def test_bad_sizes_and_dataset_options_are_refused():
    with pytest.raises(SystemExit, match="n-classes"):
        main(["compare", "--n-classes", "1"])
    with pytest.raises(SystemExit, match="svmlight needs"):
        main(["compare", "--dataset", "svmlight"])
    with pytest.raises(SystemExit, match="go with --dataset svmlight"):
        main(["compare", "--train", "a.svm", "--test", "b.svm"])
