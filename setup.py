"""Build script: expands the Tempita templates (*.pyx.tp, *.pxd.tp) and cythonizes.

Set ``SKSOFTMAX_CYTHON_CHECKS=1`` to build the kernels with Cython's
``boundscheck`` and ``wraparound`` switched on (CI runs the kernel tests once
under such a build).

A second ``pip install -e .`` (say with ``".[test]"`` after the README's
first command) rebuilds nothing that is up to date: pip builds in a fresh
isolated environment and setuptools compiles editable installs into a
temporary folder, so Cython (whose own ``libc/*.pxd`` are then new) and the
compiler would redo all 14 kernels (about 5 minutes on 2 cores). Here a
kernel's C file is regenerated only when one of the package's own sources
it depends on (.pyx, .pxd, templates) or this script is newer, and a kernel
whose in-place module is newer than its C file is copied, not compiled; a
change of build mode (bounds checks, OpenMP) rebuilds everything.
"""

import os
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
from Cython import Tempita
from Cython.Build import cythonize
from Cython.Build.Dependencies import create_dependency_tree
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).parent
PKG = HERE / "sksoftmax"
CHECKS = os.environ.get("SKSOFTMAX_CYTHON_CHECKS", "0") not in ("", "0")
# The C files of the last build remember its directives; a switch between the
# checked and the optimised build must regenerate them all.
MODE_STAMP = PKG / ".cython-checks"


NO_OPENMP = os.environ.get("SKSOFTMAX_NO_OPENMP", "0") not in ("", "0")


def mode_changed():
    mode = f"checks={int(CHECKS)} no_openmp={int(NO_OPENMP)}"
    old = MODE_STAMP.read_text() if MODE_STAMP.exists() else None
    MODE_STAMP.write_text(mode)
    return old != mode


def expand_templates():
    """Write foo.pyx / foo.pxd from foo.pyx.tp / foo.pxd.tp when stale."""
    for tp in sorted(PKG.rglob("*.tp")):
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
    if NO_OPENMP:
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


def _own_sources_mtime(pyx, tree):
    """Newest mtime of the package's own files that ``pyx`` depends on
    (its .pyx, the .pxd it cimports, their templates) and of this script;
    Cython's and NumPy's .pxd are left out (new in every isolated build)."""
    newest = Path(__file__).stat().st_mtime
    for dep in tree.all_dependencies(str(pyx.relative_to(HERE))):
        path = (HERE / dep).resolve()
        if PKG.resolve() in path.parents:
            newest = max(newest, path.stat().st_mtime)
            tp = path.with_name(path.name + ".tp")
            if tp.exists():
                newest = max(newest, tp.stat().st_mtime)
    return newest


def extensions(force):
    """The kernels: those whose C file is stale go through cythonize, the
    others are built from their C file as it is."""
    expand_templates()
    macros = [("NPY_NO_DEPRECATED_API", "NPY_1_9_API_VERSION")]
    omp = openmp_flags()
    tree = create_dependency_tree()
    stale, fresh = [], []
    for pyx in sorted(PKG.rglob("*.pyx")):
        c_file = pyx.with_suffix(".c")
        up_to_date = (
            not force
            and c_file.exists()
            and c_file.stat().st_mtime >= _own_sources_mtime(pyx, tree)
        )
        source = c_file if up_to_date else pyx
        ext = Extension(
            ".".join(pyx.relative_to(HERE).with_suffix("").parts),
            [str(source.relative_to(HERE))],
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
        (fresh if up_to_date else stale).append(ext)
    if stale:
        stale = cythonize(
            stale, compiler_directives=directives, force=True, build_dir=None
        )
    return sorted(stale + fresh, key=lambda ext: ext.name)


directives = {
    "language_level": 3,
    "boundscheck": CHECKS,
    "wraparound": CHECKS,
    "initializedcheck": CHECKS,
    "cdivision": True,
}
FORCE = mode_changed()


class BuildExt(build_ext):
    """Copies a kernel's in-place module instead of compiling it when that
    module is newer than its C file and the build mode is unchanged."""

    def build_extension(self, ext):
        target = Path(self.get_ext_fullpath(ext.name))
        inplace = HERE / self.get_ext_filename(ext.name)
        c_files = [HERE / src for src in ext.sources]
        if (
            not FORCE
            and target.resolve() != inplace.resolve()
            and inplace.exists()
            and all(
                inplace.stat().st_mtime >= c.stat().st_mtime for c in c_files
            )
        ):
            print(f"sksoftmax: {ext.name} is up to date: not recompiled")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(inplace, target)
            return
        super().build_extension(ext)


setup(ext_modules=extensions(FORCE), cmdclass={"build_ext": BuildExt})
