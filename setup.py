"""Build script: expands the Tempita templates (*.pyx.tp, *.pxd.tp) and cythonizes.

Set ``SKSOFTMAX_CYTHON_CHECKS=1`` to build the kernels with Cython's
``boundscheck`` and ``wraparound`` switched on (CI runs the kernel tests once
under such a build).
"""

import os
import sys
import tempfile
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
        header = (
            f"# Generated from {tp.name} by setup.py: edit the template.\n"
        )
        out.write_text(header + text)


OPENMP_TEST = r"""
#include <omp.h>
int main(void) {
    int n = 0;
    #pragma omp parallel reduction(+:n)
    n += 1;
    return omp_get_max_threads() > 0 && n > 0 ? 0 : 1;
}
"""


def openmp_flags():
    """The compiler's OpenMP flag if a test program builds and links with it.

    The kernels' ``prange`` loops (prediction, threaded training) run on
    ``n_jobs`` threads with OpenMP; without it they compile to plain loops
    and every estimator runs on one thread (``sksoftmax.openmp_enabled()``
    then returns False and n_jobs > 1 warns). ``SKSOFTMAX_NO_OPENMP=1``
    builds without it on purpose.
    """
    if os.environ.get("SKSOFTMAX_NO_OPENMP", "0") not in ("", "0"):
        print("sksoftmax: SKSOFTMAX_NO_OPENMP set: building without OpenMP")
        return []
    from setuptools._distutils.ccompiler import new_compiler
    from setuptools._distutils.sysconfig import customize_compiler

    compiler = new_compiler()
    customize_compiler(compiler)
    flag = "/openmp" if compiler.compiler_type == "msvc" else "-fopenmp"
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "omp_test.c"
        src.write_text(OPENMP_TEST)
        try:
            objs = compiler.compile(
                [str(src)], output_dir=tmp, extra_postargs=[flag]
            )
            compiler.link_executable(
                objs, "omp_test", output_dir=tmp, extra_postargs=[flag]
            )
        except Exception as exc:  # any compile or link error: no OpenMP
            print(
                f"sksoftmax: the compiler does not build OpenMP code ({exc}); "
                "building without it: every estimator runs on one thread",
                file=sys.stderr,
            )
            return []
    print(f"sksoftmax: building with OpenMP ({flag})")
    return [flag]


def extensions():
    expand_templates()
    macros = [("NPY_NO_DEPRECATED_API", "NPY_1_9_API_VERSION")]
    omp = openmp_flags()
    return [
        Extension(
            f"sksoftmax.{pyx.stem}",
            [str(pyx.relative_to(HERE))],
            include_dirs=[np.get_include()],
            define_macros=macros,
            # no errno or FP-exception state is read anywhere: without them
            # sqrt is one instruction and branch-free loops vectorise
            # -g0: no debug info (Python's own CFLAGS ask for -g, which
            # doubled the size of the installed package)
            extra_compile_args=[
                "-O3",
                "-fno-math-errno",
                "-fno-trapping-math",
                "-g0",
            ]
            + omp,
            extra_link_args=omp,
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
