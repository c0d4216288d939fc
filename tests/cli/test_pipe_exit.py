"""Exit codes survive a pipe whose reader leaves early: ``set -o pipefail; zcspec check bad.json | head -1``
exits 1 when the plan breaks a claim, 0 when it is clean, and nothing is printed on stderr (no traceback,
no "Exception ignored ... BrokenPipeError" from Python's flush at exit).

Each plan file is given many times so that the report is several times larger than a pipe's buffer
(64 KiB on Linux): the reader is then certainly gone while zcspec still writes.
"""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

import pytest

# The same interpreter as the tests, so the run checks this checkout, installed or not.
ZCSPEC = shlex.join([sys.executable, "-m", "zcspec.checks.cli.main"])
COPIES = 400    # about 200 KB of reports for the tiny plans below


def tiny_plan(y_offset: int) -> dict:
    """Two 64-byte tensors live at both steps of one arena; ``y_offset`` < 64 makes them share bytes."""
    def tensor(name, offset):
        return {"name": name, "region": "a", "offset": offset, "size": 64, "aligned_size": 64,
                "first": 0, "last": 1, "block": None, "zero_copy": False, "alias_of": None}
    return {"order": ["n0", "n1"], "tensors": [tensor("x", 0), tensor("y", y_offset)],
            "regions": {"a": y_offset + 64}, "arenas": {"a": {"kind": "activations", "alignment": 1}}}


@pytest.fixture
def plans(tmp_path):
    paths = {}
    for name, y_offset in (("bad", 32), ("clean", 64)):
        paths[name] = tmp_path / f"{name}.json"
        paths[name].write_text(json.dumps(tiny_plan(y_offset)))
    return paths


def piped(command: str, *, unbuffered: bool, reader: str = "head -1") -> subprocess.CompletedProcess:
    """``command | reader`` under ``set -o pipefail``: the exit code is zcspec's unless the reader fails."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    return subprocess.run(["bash", "-c", f"set -o pipefail; {command} | {reader}"], env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("unbuffered", [False, True], ids=["buffered", "unbuffered"])
@pytest.mark.parametrize("name, code", [("bad", 1), ("clean", 0)])
def test_check_exit_code_survives_head(plans, name, code, unbuffered):
    path = shlex.quote(str(plans[name]))
    done = piped(f"{ZCSPEC} check {' '.join([path] * COPIES)}", unbuffered=unbuffered)
    assert done.returncode == code, done.stderr
    assert done.stdout.startswith(f"{plans[name].name}: 2 tensors")
    assert done.stderr == ""


def test_one_bad_plan_through_head_exits_1(plans):
    """The small case users hit: whether or not the reader leaves before the last line, exit 1."""
    done = piped(f"{ZCSPEC} check {shlex.quote(str(plans['bad']))}", unbuffered=False)
    assert done.returncode == 1, done.stderr
    assert done.stderr == ""


def test_reader_gone_before_the_first_flush_is_quiet(plans):
    """``true`` leaves before zcspec writes: with buffered output the first write to the pipe is the
    last flush, after main returned, where Python itself would print "Exception ignored"."""
    done = piped(f"{ZCSPEC} check {shlex.quote(str(plans['bad']))}", unbuffered=False, reader="true")
    assert done.returncode == 1, done.stderr
    assert done.stderr == ""


def test_plan_through_head_stays_quiet_and_exits_0():
    """``zcspec plan`` finds no violation: a reader that leaves early is no failure (500 KB of JSON)."""
    done = piped(f"{ZCSPEC} plan zoo:densenet121 --json", unbuffered=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("{")
    assert done.stderr == ""
