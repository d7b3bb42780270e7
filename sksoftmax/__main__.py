"""``python -m sksoftmax compare``: see :mod:`sksoftmax._compare`."""

import sys

from ._compare import main

sys.exit(main())
