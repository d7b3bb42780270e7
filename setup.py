"""Build script: the Cython kernels, built under ``build/`` with setuptools.

Everything the build makes goes to one folder per build mode,
``build/<python>[-checks][-noomp]/`` (``-checks`` with
``SKSOFTMAX_CYTHON_CHECKS=1``: Cython's ``boundscheck``, ``wraparound`` and
``initializedcheck`` on, as CI runs the kernel tests once; ``-noomp`` with
``SKSOFTMAX_NO_OPENMP=1``):

- ``src/``: the kernels' sources as Cython reads them: the Tempita
  templates (``*.pyx.tp``, ``*.pxd.tp``) expanded into float64 and float32
  variants, beside copies of the hand-written ``.pyx`` / ``.pxd`` and of the
  packages' ``__init__.py`` (so ``cimport sksoftmax._shared...`` finds
  both), and the C files Cython writes from them;
- ``temp/``: object files; ``lib/``: the extension modules, which the
  editable install copies next to the package's sources (setuptools'
  editable mode) and a wheel takes from there.

Nothing is generated in ``sksoftmax/`` but those copied modules. Switching
modes leaves the other mode's folder as it is: switching back recompiles
nothing.

Up-to-date checks are Cython's and setuptools' own: ``cythonize`` rewrites
a C file only when the file or one of its dependencies (the ``.pyx``, every
``.pxd`` it cimports) is newer, and setuptools' ``build_ext`` compiles an
extension only when its C file is newer than its module in ``lib/``. One
gap is closed here: pip builds every ``pip install -e`` in a fresh isolated
environment, whose Cython and SciPy ``.pxd`` files (``libc/math.pxd``,
``cython_blas.pxd``) are newer than any C file, so Cython regenerates the C
of every kernel that cimports them (about 20 s). A C file it rewrote with
the same bytes gets its previous timestamp back, so setuptools compiles only
the kernels whose C code changed: a second ``pip install -e`` with nothing
changed runs no C compiler.
"""

import hashlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

from Cython import Tempita
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext as setuptools_build_ext
from setuptools.errors import CompileError, LinkError

PACKAGE = "sksoftmax"


def _env_flag(name):
    return os.environ.get(name, "0") not in ("", "0")


CHECKS = _env_flag("SKSOFTMAX_CYTHON_CHECKS")
NO_OPENMP = _env_flag("SKSOFTMAX_NO_OPENMP")
MODE = (
    sys.implementation.cache_tag
    + ("-checks" if CHECKS else "")
    + ("-noomp" if NO_OPENMP else "")
)
BUILD = Path("build") / MODE
CYTHON_TREE = BUILD / "src"

DIRECTIVES = {
    "language_level": 3,
    "boundscheck": CHECKS,
    "wraparound": CHECKS,
    "initializedcheck": CHECKS,
    "cdivision": True,
}
# no errno or FP-exception state is read anywhere: without them sqrt is one
# instruction and branch-free loops vectorise; -g0: no debug info (Python's
# own CFLAGS ask for -g, which doubled the size of the installed package)
GCC_ARGS = ["-O3", "-fno-math-errno", "-fno-trapping-math", "-g0"]


def extensions():
    """One extension per ``.pyx`` or ``.pyx.tp`` of the package, its source
    the ``.pyx`` in the Cython tree (cythonized when built)."""
    names = set()
    for path in Path(PACKAGE).rglob("*.pyx*"):
        if path.name.endswith((".pyx", ".pyx.tp")):
            names.add(path.as_posix().split(".pyx")[0])
    return [
        Extension(
            name.replace("/", "."),
            [str(CYTHON_TREE / f"{name}.pyx")],
            define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_9_API_VERSION")],
        )
        for name in sorted(names)
    ]


def _write_if_changed(path, text):
    """Write ``text`` to ``path`` unless it holds exactly that already, so
    that the file's time says when its content last changed."""
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def prepare_cython_tree():
    """Expand the templates and copy the hand-written Cython sources and the
    ``__init__.py`` of the packages into ``CYTHON_TREE``.

    Copies keep their source's modification time, expansions are rewritten
    only when their text changes: Cython's dependency tracking sees the
    times of the real edits.
    """
    for path in sorted(Path(PACKAGE).rglob("*")):
        target = CYTHON_TREE / path
        if path.suffix == ".tp":
            text = Tempita.Template(
                path.read_text(encoding="utf-8"), name=str(path)
            ).substitute()
            header = f"# Generated from {path.name} by setup.py: edit the template.\n"
            _write_if_changed(target.with_suffix(""), header + text)
        elif path.name == "__init__.py" or (
            path.suffix in (".pyx", ".pxd")
            # a .pyx or .pxd beside its template is an old in-place expansion
            and not path.with_name(path.name + ".tp").exists()
        ):
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)


def _digest(path):
    return hashlib.sha256(path.read_bytes()).digest()


OPENMP_TEST = r"""
#include <omp.h>
int main(void) {
    int n = 0;
    #pragma omp parallel reduction(+:n)
    n += 1;
    return omp_get_max_threads() > 0 && n > 0 ? 0 : 1;
}
"""


class build_ext(setuptools_build_ext):
    """setuptools' build_ext with the Cython stage and the OpenMP check
    (named as the command it replaces: setuptools finds a command's options,
    the folders below, by its class name)."""

    def build_extensions(self):
        omp = self.openmp_flags()
        args = [] if self.compiler.compiler_type == "msvc" else GCC_ARGS
        for ext in self.extensions:
            ext.extra_compile_args = args + omp
            ext.extra_link_args = list(omp)
        self.cythonize()
        super().build_extensions()

    def copy_extensions_to_source(self):
        """The editable install's copy of the modules next to the sources,
        after removing the modules there: setuptools copies a module only
        when it is newer than the one in place, which after a switch back to
        a build mode built before (bounds-checked, then optimised) it is
        not."""
        for inplace in self.get_output_mapping().values():
            Path(inplace).unlink(missing_ok=True)
        super().copy_extensions_to_source()

    def cythonize(self):
        """Cythonize every extension into its C file in the Cython tree.

        A C file that Cython rewrote with the same bytes (pip's fresh
        isolated environment makes Cython's own .pxd look new) gets its
        previous time back, so build_ext does not recompile it.
        """
        import numpy as np

        prepare_cython_tree()
        c_files = [Path(ext.sources[0]).with_suffix(".c") for ext in self.extensions]
        before = {
            c: (_digest(c), c.stat().st_atime_ns, c.stat().st_mtime_ns)
            for c in c_files
            if c.exists()
        }
        cythonized = cythonize(
            self.extensions,
            compiler_directives=DIRECTIVES,
            include_path=[str(CYTHON_TREE)],
            force=self.force,
            nthreads=self.parallel or 0,
        )
        sources = {new.name: new.sources for new in cythonized}
        for ext in self.extensions:
            ext.sources = sources[ext.name]
            ext.include_dirs.append(np.get_include())
        for c, (digest, atime, mtime) in before.items():
            if c.stat().st_mtime_ns != mtime and _digest(c) == digest:
                os.utime(c, ns=(atime, mtime))

    def openmp_flags(self):
        """The compiler's OpenMP flag if a test program builds and links
        with it, else none.

        The kernels' ``prange`` loops (prediction, threaded training) run on
        ``n_jobs`` threads with OpenMP; without it they compile to plain
        loops and every estimator runs on one thread
        (``sksoftmax.openmp_enabled()`` then returns False and n_jobs > 1
        warns). ``SKSOFTMAX_NO_OPENMP=1`` builds without it on purpose.
        """
        if NO_OPENMP:
            print("sksoftmax: SKSOFTMAX_NO_OPENMP set: building without OpenMP")
            return []
        flag = "/openmp" if self.compiler.compiler_type == "msvc" else "-fopenmp"
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / "omp_test.c"
            src.write_text(OPENMP_TEST)
            try:
                objs = self.compiler.compile(
                    [str(src)], output_dir=tmp, extra_postargs=[flag]
                )
                self.compiler.link_executable(
                    objs, "omp_test", output_dir=tmp, extra_postargs=[flag]
                )
            except (CompileError, LinkError) as exc:
                print(
                    f"sksoftmax: the compiler does not build OpenMP code ({exc}); "
                    "building without it: every estimator runs on one thread",
                    file=sys.stderr,
                )
                return []
        print(f"sksoftmax: building with OpenMP ({flag})")
        return [flag]


# build/<mode>/ for every build command. build_ext gets the folders itself
# too: an editable install points the "build" command at temporary folders,
# which would recompile every kernel each time.
folders = {"build_lib": str(BUILD / "lib"), "build_temp": str(BUILD / "temp")}
setup(
    ext_modules=extensions(),
    cmdclass={"build_ext": build_ext},
    options={
        "build": folders,
        "build_ext": {**folders, "parallel": os.cpu_count() or 1},
    },
)
