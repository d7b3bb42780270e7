"""Build script: expands the Tempita templates (*.pyx.tp, *.pxd.tp) and cythonizes.

Set ``SKSOFTMAX_CYTHON_CHECKS=1`` to build the kernels with Cython's
``boundscheck`` and ``wraparound`` switched on (CI runs the kernel tests once
under such a build).
"""
import os
from pathlib import Path

import numpy as np
from Cython import Tempita
from Cython.Build import cythonize
from setuptools import Extension, setup

HERE = Path(__file__).parent
PKG = HERE / "sksoftmax"
CHECKS = os.environ.get("SKSOFTMAX_CYTHON_CHECKS", "0") not in ("", "0")
# The C files of the last build remember its directives; a switch between the
# checked and the optimised build must regenerate them all.
MODE_STAMP = PKG / ".cython-checks"


def mode_changed():
    mode = "1" if CHECKS else "0"
    old = MODE_STAMP.read_text() if MODE_STAMP.exists() else None
    MODE_STAMP.write_text(mode)
    return old != mode


def expand_templates():
    """Write foo.pyx / foo.pxd from foo.pyx.tp / foo.pxd.tp when stale."""
    for tp in sorted(PKG.glob("*.tp")):
        out = tp.with_suffix("")
        if out.exists() and out.stat().st_mtime >= tp.stat().st_mtime:
            continue
        text = Tempita.Template(tp.read_text(), name=str(tp)).substitute()
        header = f"# Generated from {tp.name} by setup.py: edit the template.\n"
        out.write_text(header + text)


def extensions():
    expand_templates()
    macros = [("NPY_NO_DEPRECATED_API", "NPY_1_9_API_VERSION")]
    return [
        Extension(
            f"sksoftmax.{pyx.stem}",
            [str(pyx.relative_to(HERE))],
            include_dirs=[np.get_include()],
            define_macros=macros,
            # no errno or FP-exception state is read anywhere: without them
            # sqrt is one instruction and branch-free loops vectorise
            extra_compile_args=[
                "-O3", "-fno-math-errno", "-fno-trapping-math"
            ],
        )
        for pyx in sorted(PKG.glob("*.pyx"))
    ]


directives = {
    "language_level": 3,
    "boundscheck": CHECKS,
    "wraparound": CHECKS,
    "initializedcheck": CHECKS,
    "cdivision": True,
}

setup(
    ext_modules=cythonize(
        extensions(),
        compiler_directives=directives,
        force=mode_changed(),
        build_dir=None,
    ),
)
