"""
A softmax model whose W is split over the workers
=================================================

Fit :class:`sksoftmax.distributed.DistributedSoftmaxClassifier` on a dask
cluster of two workers: W is cut by classes into two shards, one per
worker, and stays there. ``fit`` runs DS-MLR (each worker trains one class
block with its rows, then the blocks move on in a ring); ``predict_topk``
and ``log_loss`` are computed shard by shard, only a few numbers per row
travelling. ``to_local()`` gathers the model into an ordinary
:class:`sksoftmax.SoftmaxClassifier`, here to check that both predict the
same.

Needs the ``distributed`` extra: ``pip install "sksoftmax[distributed]"``.
"""

# %%
# A local cluster
# ---------------
# Two workers of one thread each. ``processes=False`` keeps the workers in
# this process (sphinx-gallery runs the script without an
# ``if __name__ == "__main__":`` guard, which worker processes need); in a
# script of your own, put the code under that guard and drop it.
import dask.array as da
import matplotlib.pyplot as plt
import numpy as np
from distributed import Client, LocalCluster

from sksoftmax.datasets import make_softmax_classification
from sksoftmax.distributed import DistributedSoftmaxClassifier

cluster = LocalCluster(
    n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
)
client = Client(cluster)

# %%
# Data as a dask array of CSR blocks
# ----------------------------------
X, y = make_softmax_classification(
    n_samples=6000, n_features=300, n_classes=200, density=0.03, random_state=0
)
X_train, y_train, X_test, y_test = X[:5000], y[:5000], X[5000:], y[5000:]
known = np.isin(y_test, y_train)
X_test, y_test = X_test[known], y_test[known]
Xd = da.from_array(X_train, chunks=(1000, 300))
yd = da.from_array(y_train, chunks=1000)

# %%
# Fit with W split by classes
# ---------------------------
clf = DistributedSoftmaxClassifier(max_iter=15, tol=None, random_state=0)
clf.fit(Xd, yd)
for (lo, hi), worker in zip(clf.class_ranges_, clf.shard_workers_):
    print(f"classes {lo}..{hi - 1}: held by {worker}")

# %%
# Sharded exact evaluation, and the gathered model
# ------------------------------------------------
labels, proba = clf.predict_topk(X_test, k=5)
local = clf.to_local()
print(f"test log-loss, sharded: {clf.log_loss(X_test, y_test):.4f}")
print(f"test log-loss, gathered: {local.log_loss(X_test, y_test):.4f}")
same = bool((labels == local.predict_topk(X_test, k=5)[0]).all())
print("top-5 classes equal:", same)

fig, ax = plt.subplots(figsize=(5, 3))
ax.plot(np.arange(1, len(clf.loss_curve_) + 1), clf.loss_curve_, marker="o")
ax.set_xlabel("epoch")
ax.set_ylabel("training objective (estimate)")
ax.set_title("DS-MLR on 2 workers")
fig.tight_layout()

client.close()
cluster.close()
