"""
Streaming with partial_fit: a learning curve
============================================

This example trains on a stream of mini-batches, one ``partial_fit`` call
per batch, as one would when the data do not fit in memory or keep arriving,
and plots the exact held-out log-loss after every batch. Three sksoftmax
estimators with their default settings are compared with scikit-learn's
:class:`~sklearn.linear_model.SGDClassifier` (``loss='log_loss'``,
one-vs-rest), and with the log-loss of the true model that generated the
data, the best any classifier can do.

The conclusion: the sksoftmax estimators learn from the first batches with
no step size to set. After one pass, Implicit SGD and SCENT are within
about 0.2 nats of the true model and U-max within 0.5, while the
one-vs-rest probabilities stay about 0.8 nats away, at several times
the CPU time.
"""

# %%
# A stream from a planted softmax model
# -------------------------------------
# :func:`~sksoftmax.datasets.make_softmax_classification` draws sparse word
# counts whose class posterior is exactly a linear softmax over 300 classes;
# ``return_coef=True`` gives that true model, hence the best achievable
# held-out log-loss. The first 5,000 rows are held out; the next 40,000
# arrive in batches of 2,000.
import time
import warnings

import matplotlib.pyplot as plt
import numpy as np
from scipy.special import log_softmax
from sklearn.linear_model import SGDClassifier
from sklearn.metrics import log_loss

from sksoftmax import (
    ImplicitSGDClassifier,
    SCENTClassifier,
    UMaxSoftmaxClassifier,
)
from sksoftmax.datasets import make_softmax_classification

n_classes, n_test, n_stream, batch_size = 300, 5_000, 40_000, 2_000
X, y, coef, intercept = make_softmax_classification(
    n_samples=n_test + n_stream,
    n_features=2_000,
    n_classes=n_classes,
    density=0.005,
    random_state=0,
    return_coef=True,
)
X_test, y_test = X[:n_test], y[:n_test]
X_stream, y_stream = X[n_test:], y[n_test:]
classes = np.arange(n_classes)

true_log_proba = log_softmax((X_test @ coef.T).toarray() + intercept, axis=1)
bayes_loss = -true_log_proba[np.arange(n_test), y_test].mean()
print(f"true model's held-out log-loss: {bayes_loss:.4f}")
print(f"uniform model's (log K):        {np.log(n_classes):.4f}")

# %%
# One pass over the stream
# ------------------------
# ``classes`` is passed on the first call, since a batch need not hold every
# class. After each batch the held-out log-loss is computed: exactly with
# the estimators' ``log_loss`` for sksoftmax, with scikit-learn's
# :func:`~sklearn.metrics.log_loss` on ``predict_proba`` for
# ``SGDClassifier``. Only the ``partial_fit`` calls are timed.
warnings.simplefilter("ignore", UserWarning)
models = {
    "U-max": UMaxSoftmaxClassifier(random_state=0),
    "Implicit SGD": ImplicitSGDClassifier(random_state=0),
    "SCENT": SCENTClassifier(random_state=0),
    "SGDClassifier(loss='log_loss'), one-vs-rest": SGDClassifier(
        loss="log_loss", random_state=0
    ),
}
curves = {name: [] for name in models}
cpu = dict.fromkeys(models, 0.0)
for start in range(0, n_stream, batch_size):
    X_batch = X_stream[start : start + batch_size]
    y_batch = y_stream[start : start + batch_size]
    for name, model in models.items():
        t0 = time.process_time()
        model.partial_fit(X_batch, y_batch, classes=classes)
        cpu[name] += time.process_time() - t0
        if hasattr(model, "log_loss"):
            loss = model.log_loss(X_test, y_test)
        else:
            proba = model.predict_proba(X_test)
            loss = log_loss(y_test, proba, labels=classes)
        curves[name].append(loss)

seen = np.arange(batch_size, n_stream + 1, batch_size)
print(
    f"\n{'model':45s} {'after 1 batch':>13s} {'at the end':>11s} {'CPU s':>7s}"
)
for name, losses in curves.items():
    print(f"{name:45s} {losses[0]:13.4f} {losses[-1]:11.4f} {cpu[name]:7.2f}")
print("every fourth batch:")
for name, losses in curves.items():
    print(f"  {name[:13]:13s} " + " ".join(f"{v:.3f}" for v in losses[::4]))
for name in list(models)[:3]:
    print(f"{name}: eta0_ = {models[name].eta0_:.3g}")

# %%
# Learning curves
# ---------------
# The dotted line is the true model: the gap to it is what more data (or
# more passes) could still win. Note that the default ``'exponential'``
# schedule decays the step once per ``partial_fit`` call (by ``decay=0.9``),
# as ``fit`` does once per epoch: after the 20 calls here U-max's step is
# 0.12 times its start, which is part of why its curve flattens early. With
# many small batches, fewer larger batches (or a ``decay`` closer to 1) keep
# the step up.
fig, ax = plt.subplots(figsize=(7, 4.5))
for (name, losses), marker in zip(curves.items(), "osD^"):
    style = "--" if name.startswith("SGDClassifier") else "-"
    ax.plot(seen, losses, style, marker=marker, ms=3, label=name)
ax.axhline(bayes_loss, color="k", ls=":", label="true model")
ax.set_xlabel("training rows streamed (one partial_fit call per 2,000)")
ax.set_ylabel("held-out log-loss (nats)")
ax.set_title(f"Streaming, {n_classes} classes: one pass, default settings")
ax.legend(fontsize="small")
fig.tight_layout()
