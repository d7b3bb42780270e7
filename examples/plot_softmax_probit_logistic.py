"""
Softmax, multinomial probit and multinomial logistic models
===========================================================

This example fits the three models of augment and reduce (Ruiz et al.,
2018) on the same data, Bibtex (146 classes), with their default settings:
:class:`~sksoftmax.ARSoftmaxClassifier` (multinomial logit),
:class:`~sksoftmax.ARProbitClassifier` (Gaussian errors on the class
utilities) and :class:`~sksoftmax.ARLogisticClassifier` (independent
logistic factors). It compares their exact test log-loss and accuracy and
how confident and how well calibrated their predicted probabilities are.

The conclusion: the three models score the classes by the same kind of
linear utilities, and with their defaults they reach nearly the same test
log-loss and accuracy here (the softmax slightly ahead); their
probabilities differ in confidence: the softmax model is the most
confident and overconfident (its top class is right less often than it
announces; there is no penalty by default), the probit and logistic
models less so. The two cost much more to evaluate, because their
probabilities are one-dimensional integrals computed by quadrature (eq. 5
of the paper), not a closed form.
"""

# %%
# Data
# ----
# Bibtex from :func:`~sksoftmax.datasets.fetch_bibtex` (downloaded once,
# then cached; first label, unit-L2 rows), or a planted problem of similar
# shape when it cannot be had (no network and no cached copy). The exact
# probit and logistic probabilities cost O(K) quadrature terms per class,
# so the log-loss and the probabilities are evaluated on 600 test rows
# drawn at random; the accuracy (an argmax of linear scores for all three
# models) on all of them.
import time
import warnings

import matplotlib.pyplot as plt
import numpy as np

from sksoftmax import (
    ARLogisticClassifier,
    ARProbitClassifier,
    ARSoftmaxClassifier,
)
from sksoftmax.datasets import fetch_bibtex, make_softmax_classification

try:
    X_train, y_train, X_test, y_test = fetch_bibtex(normalize=True)
    dataset = "Bibtex"
except OSError as exc:
    print(f"Note: Bibtex unavailable ({exc}); using a synthetic")
    print("problem from make_softmax_classification instead; its true")
    print("model is a softmax, which favours the softmax model below.")
    X, y = make_softmax_classification(
        n_samples=7500,
        n_features=2000,
        n_classes=150,
        density=0.005,
        topic_weight=0.2,  # about 10 words a row: not separable
        random_state=0,
    )
    X_train, y_train, X_test, y_test = X[:5000], y[:5000], X[5000:], y[5000:]
    dataset = "synthetic"

seen = np.isin(y_test, np.unique(y_train))
X_test, y_test = X_test[seen], y_test[seen]
rng = np.random.default_rng(0)
sub = np.sort(rng.choice(y_test.size, size=min(600, y_test.size), replace=0))
X_sub, y_sub = X_test[sub], y_test[sub]
print(
    f"{dataset}: {X_train.shape[0]} training rows, {y_test.size} test rows "
    f"({sub.size} for the log-loss), {np.unique(y_train).size} classes"
)

# %%
# Fit the three models
# --------------------
# Default settings except ``max_iter=50`` and ``tol=None``: 50 epochs each
# (the default is up to 100 epochs, which would take this example over a
# minute with the evaluations).
warnings.simplefilter("ignore", UserWarning)
models = {
    "softmax (ARSoftmaxClassifier)": ARSoftmaxClassifier,
    "probit (ARProbitClassifier)": ARProbitClassifier,
    "logistic (ARLogisticClassifier)": ARLogisticClassifier,
}
results = {}
for name, Model in models.items():
    model = Model(max_iter=50, tol=None, random_state=0)
    t0 = time.process_time()
    model.fit(X_train, y_train)
    fit_seconds = time.process_time() - t0
    t0 = time.process_time()
    loss = model.log_loss(X_sub, y_sub)
    # the most probable class of each row with its exact probability
    top_label, top_proba = model.predict_topk(X_sub, k=1)
    eval_seconds = time.process_time() - t0
    results[name] = dict(
        loss=loss,
        accuracy=model.score(X_test, y_test),
        top_proba=top_proba[:, 0],
        correct=top_label[:, 0] == y_sub,
        fit_seconds=fit_seconds,
        eval_seconds=eval_seconds,
        eta0=model.eta0_,
    )

header = "log-loss  accuracy  mean top p  fit CPU s  eval CPU s   eta0_"
print(f"\n{'model':33s} {header}")
for name, r in results.items():
    print(
        f"{name:33s} {r['loss']:8.4f} {r['accuracy']:9.4f} "
        f"{r['top_proba'].mean():11.4f} {r['fit_seconds']:10.2f} "
        f"{r['eval_seconds']:11.2f} {r['eta0']:7.3g}"
    )

# %%
# Confidence and calibration
# --------------------------
# Left: a reliability diagram of the top class. Rows are binned by the
# probability the model gives its most probable class; a calibrated model's
# points lie on the diagonal (the fraction of rows whose top class is right
# equals the probability announced); below it, overconfident; above it,
# underconfident. Right: the distribution of that top
# probability, i.e. how confident each model is.
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4.5))
edges = np.linspace(0, 1, 11)
for (name, r), marker in zip(results.items(), "osD"):
    which = np.clip(np.digitize(r["top_proba"], edges) - 1, 0, 9)
    # bins of fewer than 10 rows would only add noise
    filled = [b for b in range(10) if np.sum(which == b) >= 10]
    mean_p = [r["top_proba"][which == b].mean() for b in filled]
    hit = [r["correct"][which == b].mean() for b in filled]
    ax1.plot(mean_p, hit, marker=marker, label=name)
    ax2.hist(r["top_proba"], bins=edges, histtype="step", lw=2, label=name)
ax1.plot([0, 1], [0, 1], "k:", label="calibrated")
ax1.set_xlabel("probability of the top class (bin mean)")
ax1.set_ylabel("fraction of rows whose top class is right")
ax1.set_title("Reliability of the top class")
ax1.legend(fontsize="small")
ax2.set_xlabel("probability of the top class")
ax2.set_ylabel(f"number of test rows (of {sub.size})")
ax2.set_title("Confidence")
ax2.legend(fontsize="small")
fig.suptitle(f"{dataset}: three models fitted by augment and reduce")
fig.tight_layout()

# %%
# Why they differ
# ---------------
# All three score class k by the same linear utility x . w_k + b_k and
# differ in the noise added to the utilities before the largest wins:
# Gumbel noise gives the softmax's closed form; Gaussian noise (probit)
# and the logistic model's factors give probabilities that are integrals
# over one variable, evaluated here by quadrature, hence the evaluation
# cost printed above. With a lighter-tailed noise, the probit model needs
# larger weights to express the same confidence. Their automatic step
# (``eta0_`` above) is two noise standard deviations of score per step,
# divided by the rows' mean ||x||_1 + 1, and their local step is the
# package's natural-gradient step; with the paper's settings (``eta0=0.02``,
# ``variant='paper'``) the same 50 epochs leave them far behind (test
# log-loss 3.4 and 3.6 on 600 rows) because they scale to the paper's
# binary features and 5,000 steps. Since
# the argmax of the utilities is the prediction for all three, their
# accuracies differ only through the weights learned, not through the link.
