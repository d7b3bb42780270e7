"""Print the ``doc`` extra of pyproject.toml, one requirement a line.

So that the documentation's dependencies install without rebuilding the
package's Cython kernels (``pip install -e ".[doc]"`` would)::

    pip install $(python doc/requirements.py)

The extra stays the one list of those dependencies.
"""

import ast
import re
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def doc_requirements(text):
    try:  # Python >= 3.11
        import tomllib
    except ImportError:  # Python 3.10: the extra is one literal list
        match = re.search(r"^doc\s*=\s*(\[[^\]]*\])", text, re.MULTILINE)
        if match is None:
            raise SystemExit("pyproject.toml has no doc extra")
        return ast.literal_eval(match.group(1))
    extras = tomllib.loads(text)["project"]["optional-dependencies"]
    return extras["doc"]


if __name__ == "__main__":
    print("\n".join(doc_requirements(PYPROJECT.read_text())))
