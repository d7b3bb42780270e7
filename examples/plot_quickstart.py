"""
Quick start: SoftmaxClassifier on a planted softmax problem
===========================================================

Draw a sparse problem with 200 classes whose posterior is exactly a linear
softmax (:func:`~sksoftmax.datasets.make_softmax_classification`), fit
:class:`~sksoftmax.SoftmaxClassifier` with no arguments (it picks its
solver, step and epochs from the data), and compare its exact test
log-loss with the class-prior model's and with the uniform model's
``log K``.
"""

# %%
# The data
# --------
# Sparse count features, 200 classes, 80/20 split.
import numpy as np

from sksoftmax import SoftmaxClassifier
from sksoftmax.datasets import make_softmax_classification

X, y = make_softmax_classification(
    n_samples=6000, n_features=500, n_classes=200, density=0.02,
    random_state=0,
)
X_train, y_train, X_test, y_test = X[:4800], y[:4800], X[4800:], y[4800:]
print(X_train.shape, "training rows x features;", np.unique(y).size,
      "classes")

# %%
# Fit with the defaults
# ---------------------
# The solver (``solver_``), the step (a pilot on rows not trained on yet)
# and the epochs (held-out log-loss) come from the data; ``log_loss`` is
# exact (the full softmax over all classes, in blocks, never an (n, K)
# array).
clf = SoftmaxClassifier(random_state=0)
clf.fit(X_train, y_train)
print("solver:", clf.solver_, "- step:", clf.eta0_, "- epochs:", clf.n_iter_)

counts = np.bincount(np.searchsorted(clf.classes_, y_train),
                     minlength=clf.classes_.size) + 1.0
prior = counts / counts.sum()
in_train = np.isin(y_test, clf.classes_)
prior_loss = -np.mean(np.log(prior[np.searchsorted(clf.classes_,
                                                   y_test[in_train])]))
test_loss = clf.log_loss(X_test[in_train], y_test[in_train])
print(f"test log-loss {test_loss:.3f} (class prior {prior_loss:.3f}, "
      f"log K {np.log(clf.classes_.size):.3f})")
print(f"top-5 accuracy {clf.score_topk(X_test[in_train], y_test[in_train], k=5):.3f}")

# %%
# The training curve
# ------------------
# ``validation_loss_`` holds the exact log-loss of the held-out rows after
# each epoch of the held-out phase (a worse epoch is undone and retried
# with half the step); the kept epochs are then refitted on every row.
import matplotlib.pyplot as plt

fig, ax = plt.subplots(figsize=(5, 3))
ax.plot(np.arange(1, len(clf.validation_loss_) + 1), clf.validation_loss_,
        marker="o")
ax.axvline(clf.best_iter_, color="gray", linestyle=":")
ax.set_xlabel("epoch")
ax.set_ylabel("held-out log-loss")
ax.set_title("SoftmaxClassifier, 200 classes")
fig.tight_layout()
plt.show()
