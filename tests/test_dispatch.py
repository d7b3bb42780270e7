"""SKSOFTMAX_CPU_DISPATCH: the instruction set the kernels dispatch to can
be capped, so that one machine runs another's code paths (CI runs the
suite under 'generic'), and a misspelt value is an error, not ignored."""

import os
import subprocess
import sys

import pytest

from sksoftmax._shared._special import cpu_dispatch

LEVELS = ("generic", "avx2", "avx512")


def _run(code, value):
    env = dict(os.environ)
    env.pop("SKSOFTMAX_CPU_DISPATCH", None)
    if value is not None:
        env["SKSOFTMAX_CPU_DISPATCH"] = value
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True
    )


def _level(value):
    out = _run(
        "import sksoftmax; from sksoftmax._shared._special import "
        "cpu_dispatch; print(cpu_dispatch())",
        value,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_this_process_reports_a_level():
    assert cpu_dispatch() in LEVELS


@pytest.mark.parametrize("cap", ["generic", "avx2"])
def test_the_cap_is_honoured_and_never_raises_the_level(cap):
    found = _level(None)
    capped = _level(cap)
    assert LEVELS.index(capped) == min(LEVELS.index(cap), LEVELS.index(found))


def test_a_misspelt_cap_is_a_value_error():
    out = _run("import sksoftmax", "avx-2")
    assert out.returncode != 0
    assert "ValueError" in out.stderr
    assert "SKSOFTMAX_CPU_DISPATCH" in out.stderr
