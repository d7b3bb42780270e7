"""Collection rules for the whole checkout (pytest's rootdir conftest).

``sksoftmax/distributed``'s doctests start a dask LocalCluster: without
dask.distributed (the ``distributed`` extra; README's test command installs
only ``test``) they are not collected, as tests/test_distributed.py skips,
unless ``SKSOFTMAX_REQUIRE_DASK=1`` (CI), where they must run.
"""

import importlib.util
import os

collect_ignore_glob = []
if (
    importlib.util.find_spec("distributed") is None
    and os.environ.get("SKSOFTMAX_REQUIRE_DASK") != "1"
):
    collect_ignore_glob.append("sksoftmax/distributed/*.py")
