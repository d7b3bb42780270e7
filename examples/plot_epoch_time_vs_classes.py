"""
Time per epoch against the number of classes
============================================

This example measures the CPU time of one pass over the same number of
training rows as the number of classes K grows from 100 to 20,000, for the
sksoftmax estimators whose cost per update does not depend on K (U-max,
Implicit SGD, the sampled-softmax baseline, SCENT) and for scikit-learn's
:class:`~sklearn.linear_model.SGDClassifier` with ``loss='log_loss'``, which
fits one binary classifier per class (one-vs-rest).

The conclusion: the sksoftmax epochs stay flat in K, while one-vs-rest pays
a pass over the data per class, so its epoch time grows linearly and is
already two orders of magnitude slower at a thousand classes. What does
grow with K in sksoftmax is the first call, whose automatic step-size pilot
scores held-out rows exactly against all K classes.
"""

# %%
# The problem
# -----------
# For each K, :func:`~sksoftmax.datasets.make_softmax_classification` draws
# 10,000 sparse rows (500 features, about 10 nonzeros a row) with labels
# from a planted softmax model over K classes. ``partial_fit`` is given
# ``classes=np.arange(K)``, so every model holds all K classes even when some
# have no row in the sample.
import time
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import SGDClassifier

from sksoftmax import (
    ImplicitSGDClassifier,
    SampledSoftmaxClassifier,
    SCENTClassifier,
    UMaxSoftmaxClassifier,
)
from sksoftmax.datasets import make_softmax_classification

n_samples, n_features = 10_000, 500
class_counts = [100, 300, 1_000, 3_000, 10_000, 20_000]

estimators = {
    "U-max": lambda: UMaxSoftmaxClassifier(random_state=0),
    "Implicit SGD": lambda: ImplicitSGDClassifier(random_state=0),
    "Sampled softmax (OVE)": lambda: SampledSoftmaxClassifier(random_state=0),
    "SCENT": lambda: SCENTClassifier(random_state=0),
    "SGDClassifier one-vs-rest": lambda: SGDClassifier(
        loss="log_loss", random_state=0
    ),
}

# %%
# Timing one epoch
# ----------------
# The first ``partial_fit`` call allocates the K x 500 weights and, for the
# sksoftmax estimators, runs the short pilot that picks the step size (its
# held-out log-loss is exact, so O(K) per row: this call grows with K). The
# sksoftmax estimators also check the fitted model against the class prior
# on up to 256 training rows on calls 1, 2, 4, 8, ... (an exact O(K)
# evaluation, which would otherwise go unnoticed for a diverged step). The
# *third* call is a plain epoch, and that is the one timed, with
# :func:`time.process_time`. One-vs-rest is dropped from larger K once an
# epoch costs more than a few seconds, to keep the example under a minute;
# its trend is already plain by then.
warnings.simplefilter("ignore", UserWarning)
ovr_budget = 2.0  # CPU seconds per epoch before one-vs-rest is left out
times = {name: [] for name in estimators}
first_call = {name: [] for name in estimators}
for K in class_counts:
    X, y = make_softmax_classification(
        n_samples=n_samples,
        n_features=n_features,
        n_classes=K,
        density=0.02,
        random_state=0,
    )
    classes = np.arange(K)
    for name, make in estimators.items():
        previous = times[name]
        if previous and previous[-1][1] > ovr_budget:
            continue
        model = make()
        start = time.process_time()
        model.partial_fit(X, y, classes=classes)
        first_call[name].append((K, time.process_time() - start))
        if name.startswith("SGDClassifier"):
            # no pilot, nothing to set up beyond zeros: the first call is
            # already a plain epoch, and a second one would double the cost
            times[name].append(first_call[name][-1])
            continue
        model.partial_fit(X, y)
        start = time.process_time()
        model.partial_fit(X, y)
        times[name].append((K, time.process_time() - start))

print(f"CPU seconds for one epoch over {n_samples:,} rows:")
print(f"{'K':>8s} " + " ".join(f"{name[:13]:>14s}" for name in estimators))
for i, K in enumerate(class_counts):
    row = [
        f"{times[n][i][1]:14.3f}" if i < len(times[n]) else f"{'-':>14s}"
        for n in estimators
    ]
    print(f"{K:8d} " + " ".join(row))
print("CPU seconds of the first call (allocation, step-size pilot):")
for i, K in enumerate(class_counts):
    row = [
        f"{first_call[n][i][1]:14.3f}" if i < len(times[n]) else f"{'-':>14s}"
        for n in estimators
    ]
    print(f"{K:8d} " + " ".join(row))

# %%
# Plot
# ----
# Log scales on both axes: a flat line is a cost independent of K, a line of
# slope one a cost proportional to K. The dotted lines are the first calls
# of the sksoftmax estimators, paid once per model.
fig, ax = plt.subplots(figsize=(7, 4.5))
for (name, points), marker in zip(times.items(), "osD^x"):
    K, seconds = np.array(points).T
    style = "--" if name.startswith("SGDClassifier") else "-"
    (line,) = ax.plot(K, seconds, style, marker=marker, label=name)
    if not name.startswith("SGDClassifier"):
        K, seconds = np.array(first_call[name]).T
        ax.plot(K, seconds, ":", color=line.get_color(), lw=1)
ax.plot([], [], "k:", lw=1, label="dotted: first call, with the pilot")
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("number of classes K")
ax.set_ylabel(f"CPU time of one epoch over {n_samples:,} rows (s)")
ax.set_title("Cost of an epoch as the number of classes grows")
ax.legend(fontsize="small")
fig.tight_layout()
