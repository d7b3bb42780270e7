"""Softmax models on a dask.distributed cluster, W split by classes over
the workers (needs the ``distributed`` extra: dask and distributed).

:class:`DistributedSoftmaxClassifier` fits by DS-MLR (Raman et al., KDD
2019) with the class blocks of W moving between the workers in a ring, and
predicts exactly with W left where it is (each worker scores its class
shard; per row only a few numbers travel). See
``doc/user_guide/distributed.rst``.
"""

from ._estimator import DistributedSoftmaxClassifier

__all__ = ["DistributedSoftmaxClassifier"]
