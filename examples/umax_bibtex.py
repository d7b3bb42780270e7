"""U-max on Bibtex, in a pipeline, tuned with GridSearchCV.

Loads Bibtex with :func:`sksoftmax.datasets.fetch_bibtex` (downloaded once,
3.5 MB, then read from scikit-learn's data folder) with the papers' protocol
(first label, unit L2 rows), tunes ``eta0`` by 3-fold cross-validation on the exact
log-loss, and prints the test log-loss and accuracy of the refitted model.

Run from the repository root::

    python examples/umax_bibtex.py
"""

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV

from sksoftmax import UMaxSoftmaxClassifier
from sksoftmax.datasets import fetch_bibtex

warnings.simplefilter("ignore", ConvergenceWarning)
X_train, y_train, X_test, y_test = fetch_bibtex(normalize=True)
# Cross-validated log-loss needs every class in every training fold: keep
# the classes with at least 3 training rows (stratified 3-fold then has them).
labels, counts = np.unique(y_train, return_counts=True)
frequent = labels[counts >= 3]
keep = np.isin(y_train, frequent)
X_train, y_train = X_train[keep], y_train[keep]
keep = np.isin(y_test, frequent)
X_test, y_test = X_test[keep], y_test[keep]

search = GridSearchCV(
    UMaxSoftmaxClassifier(max_iter=20, tol=None, random_state=0),
    {"eta0": [0.03, 0.1, 0.3, 1.0]},
    scoring="neg_log_loss",
    cv=3,
)
search.fit(X_train, y_train)
best = search.best_estimator_
print("best eta0:", search.best_params_["eta0"])
print("test log-loss: %.4f" % best.log_loss(X_test, y_test))
print("test accuracy: %.4f" % best.score(X_test, y_test))
