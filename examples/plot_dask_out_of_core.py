"""
Out-of-core fitting on a dask cluster
=====================================

Stream sparse blocks of rows through :class:`sksoftmax.UMaxSoftmaxClassifier`
with dask-ml's ``Incremental`` on a ``distributed`` cluster, and follow the
exact held-out log-loss pass after pass.

``Incremental`` calls the estimator's ``partial_fit`` once per block of a
dask array: the model travels from block to block (one worker at a time),
the data never meet in one process. The held-out loss is computed where its
blocks live with :func:`sksoftmax.metrics.neg_log_loss_scorer`.

Needs the ``dask`` extra: ``pip install "sksoftmax[dask]"``.
"""

# %%
# A local cluster
# ---------------
# Two workers of one thread each; on a real cluster, pass the scheduler's
# address to ``Client`` instead. ``processes=False`` keeps the workers in
# this process: distributed starts worker processes with the "spawn"
# method, which re-runs the main script in each of them, and a script run
# by sphinx-gallery has no ``if __name__ == "__main__":`` guard to stop
# that ("Nanny failed to start"). In a script of your own, put the code
# under that guard and drop ``processes=False``.
import os
import shutil
import tempfile
import time

import dask
import dask.array as da
import matplotlib.pyplot as plt
import numpy as np
import scipy.sparse as sp
from dask_ml.wrappers import Incremental
from distributed import Client, LocalCluster

from sksoftmax import UMaxSoftmaxClassifier
from sksoftmax.datasets import make_softmax_classification
from sksoftmax.metrics import neg_log_loss_scorer

cluster = LocalCluster(
    n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
)
client = Client(cluster)

# %%
# Data as a dask array of CSR blocks read from disk
# -------------------------------------------------
# A planted softmax problem with 200 classes, so that the best possible
# log-loss (the true model's) is known. Its rows are written to disk in
# blocks of 10,000, one ``.npz`` file each, and the dask array reads each
# block where and when a worker needs it: the whole is never held by the
# workers. With real data, the files are already there (or
# ``dask.delayed(load_svmlight_file)(path)`` reads svmlight files alike).
n_classes, n_features, block = 200, 2000, 10_000
X, y, coef, intercept = make_softmax_classification(
    n_samples=80_000,
    n_features=n_features,
    n_classes=n_classes,
    density=0.005,
    topic_weight=0.2,
    random_state=0,
    return_coef=True,
)
folder = tempfile.mkdtemp()


def as_dask(X, y, name):
    """Save X and y in row blocks; a dask array of CSR blocks reading them
    back, and one of labels."""
    xs, ys = [], []
    for lo in range(0, X.shape[0], block):
        path = os.path.join(folder, f"{name}_{lo}.npz")
        sp.save_npz(path, X[lo : lo + block])
        np.save(path + ".y.npy", y[lo : lo + block])
        n = min(block, X.shape[0] - lo)
        xs.append(
            da.from_delayed(
                dask.delayed(sp.load_npz)(path),
                shape=(n, X.shape[1]),
                dtype=X.dtype,
                meta=sp.csr_matrix((0, 0), dtype=X.dtype),
            )
        )
        ys.append(
            da.from_delayed(
                dask.delayed(np.load)(path + ".y.npy"),
                shape=(n,),
                dtype=y.dtype,
            )
        )
    return da.concatenate(xs), da.concatenate(ys)


X_train, y_train = as_dask(X[:60_000], y[:60_000], "train")
X_test, y_test = as_dask(X[60_000:], y[60_000:], "test")
print(X_train)


def true_log_loss(X, y):
    scores = (X @ coef.T).toarray() + intercept
    scores -= scores.max(axis=1, keepdims=True)
    log_p = scores - np.log(np.exp(scores).sum(axis=1, keepdims=True))
    return -log_p[np.arange(y.shape[0]), y].mean()


bayes = true_log_loss(X[60_000:], y[60_000:])
print(f"true model's held-out log-loss: {bayes:.3f}")

# %%
# Passes over the blocks
# ----------------------
# The estimator's defaults (``eta0='auto'`` picks the step from the data);
# ``classes`` on every call, as ``partial_fit`` requires on the first. Each
# ``partial_fit`` of ``Incremental`` is one pass over all training blocks,
# in a new random order of blocks.
inc = Incremental(UMaxSoftmaxClassifier(random_state=0), random_state=0)
classes = np.arange(n_classes)
losses = []
start = time.perf_counter()
for n_pass in range(1, 6):
    inc.partial_fit(X_train, y_train, classes=classes)
    losses.append(-neg_log_loss_scorer(inc, X_test, y_test))
    print(
        f"pass {n_pass}: held-out log-loss {losses[-1]:.3f}"
        f" ({time.perf_counter() - start:.1f} s)"
    )

# %%
# Learning curve
# --------------
fig, ax = plt.subplots(figsize=(5, 3.5))
ax.plot(range(1, len(losses) + 1), losses, "o-", label="UMax, held out")
ax.axhline(bayes, color="gray", linestyle="--", label="true model")
ax.axhline(np.log(n_classes), color="gray", linestyle=":", label="uniform")
ax.set_xlabel("passes over the training blocks")
ax.set_ylabel("log-loss")
ax.legend()
fig.tight_layout()
plt.show()

# %%
client.close()
cluster.close()
shutil.rmtree(folder)
