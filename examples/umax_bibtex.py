"""U-max on Bibtex, in a pipeline, tuned with GridSearchCV.

Loads Bibtex from ../shared/data with the papers' protocol (first label,
unit L2 rows), tunes ``eta0`` by 3-fold cross-validation on the exact
log-loss, and prints the test log-loss and accuracy of the refitted model.

Run from the repository root::

    python examples/umax_bibtex.py
"""
import warnings

from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV

from sksoftmax import UMaxSoftmaxClassifier
from sksoftmax.datasets import load_bibtex

warnings.simplefilter("ignore", ConvergenceWarning)
X_train, y_train, X_test, y_test = load_bibtex(normalize=True)

search = GridSearchCV(
    UMaxSoftmaxClassifier(max_iter=20, tol=None, random_state=0),
    {"eta0": [0.03, 0.1, 0.3, 1.0]}, scoring="neg_log_loss", cv=3)
search.fit(X_train, y_train)
best = search.best_estimator_
print("best eta0:", search.best_params_["eta0"])
seen = [c in set(best.classes_) for c in y_test]
print("test log-loss: %.4f" % best.log_loss(X_test[seen], y_test[seen]))
print("test accuracy: %.4f" % best.score(X_test, y_test))
