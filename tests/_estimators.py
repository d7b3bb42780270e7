"""What several test modules share: the nine public estimator classes and
a small four-class problem."""

from sklearn.datasets import make_classification

from sksoftmax._registry import ESTIMATORS

# every public estimator, from the package's one table of them
ALL_ESTIMATORS = [entry.load() for entry in ESTIMATORS]


def four_class_problem(n_samples=300, n_features=8):
    """Dense rows, 4 classes, 5 informative features (seed 0)."""
    return make_classification(
        n_samples=n_samples,
        n_features=n_features,
        n_informative=min(5, n_features - 1),
        n_classes=4,
        random_state=0,
    )
