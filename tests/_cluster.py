"""A real dask.distributed cluster for the tests of sksoftmax.distributed.

``require_distributed()`` returns ``dask.array``, or skips the calling
test module when dask.distributed is not installed (the ``distributed``
or ``dask`` extra), unless ``SKSOFTMAX_REQUIRE_DASK=1`` (as CI sets),
where the import error fails the run. ``cluster_client(n)`` is a client
of a ``LocalCluster`` of ``n`` worker processes of one thread each.
"""

import contextlib
import os

import pytest


def require_distributed():
    try:
        import dask.array as da
        import distributed  # noqa: F401
    except ImportError:
        if os.environ.get("SKSOFTMAX_REQUIRE_DASK") == "1":
            raise
        pytest.skip(
            "dask.distributed is not installed (the 'distributed' extra)",
            allow_module_level=True,
        )
    return da


@contextlib.contextmanager
def cluster_client(n_workers):
    from distributed import Client, LocalCluster

    with LocalCluster(
        n_workers=n_workers,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
    ) as cluster, Client(cluster) as client:
        client.wait_for_workers(n_workers)
        yield client
