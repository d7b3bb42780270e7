"""The estimator registry (sksoftmax/_registry.py) is the one list of the
estimators: everything that lists them agrees with it."""

from sklearn.base import ClassifierMixin

import sksoftmax
from sksoftmax._compare import METHODS
from sksoftmax._registry import ESTIMATORS, by_name, solver_classes
from sksoftmax._softmax import SOLVERS


def test_entries_are_distinct_classifiers():
    names = [e.name for e in ESTIMATORS]
    keys = [e.key for e in ESTIMATORS]
    assert len(set(names)) == len(names)
    assert len(set(keys)) == len(keys)
    for entry in ESTIMATORS:
        cls = entry.load()
        assert cls.__name__ == entry.name
        assert issubclass(cls, ClassifierMixin)
        assert by_name(entry.name) is entry
        # the summary table has every cell
        for cell in ("model", "classes", "features", "cost", "memory"):
            assert getattr(entry, cell).strip()


def test_public_names_follow_the_registry():
    for entry in ESTIMATORS:
        assert getattr(sksoftmax, entry.name) is entry.load()
        assert entry.name in sksoftmax.__all__


def test_front_door_solvers_follow_the_registry():
    solvers = solver_classes()
    assert SOLVERS == ("exact", "lbfgs") + tuple(solvers)
    for name, cls in solvers.items():
        est = sksoftmax.SoftmaxClassifier(solver=name)
        # the constructor check accepts every registered solver name
        est._validate_params()
        assert cls in [e.load() for e in ESTIMATORS]


def test_compare_runs_every_registered_estimator():
    for entry in ESTIMATORS:
        label, factory, _ = METHODS[entry.key]
        assert label == entry.label
        assert callable(factory)
