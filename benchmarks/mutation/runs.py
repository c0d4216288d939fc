"""Running one judge (``zcspec verify`` or the test suite) on one copy, with a time limit.

A run's verdict is ``survived`` (exit 0) or ``killed``; a killed run says how (``kind``):
``violation`` (verify reported a broken claim first, or a test failed), ``crash`` (verify died
with a traceback or first reported a crash of the code under test; pytest's collection or
internal errors), ``bad-input`` (verify's exit 2: the zoo was
refused), ``timeout`` (past the limit: the whole process group is killed and the run counts as
killed). ``reason`` is the first invariant id or failed test the output names.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import attrs

TAIL_LINES = 25
ERR_LINES = 10
_FAILED_TEST = re.compile(r"^(?:FAILED|ERROR) (\S+)", re.M)
_FAILED_ONLY = re.compile(r"^FAILED ", re.M)
# What verify's report (checks/cli/verify.py) names first when it fails, in the order looked for.
_VERIFY_FINDINGS = (("violation", re.compile(r"^VIOLATION (\S+)", re.M)),
                    ("violation", re.compile(r"^Random campaign found a violation of (\S+)", re.M)),
                    ("crash", re.compile(r"^(CRASH in .+)$", re.M)),
                    ("refusal", re.compile(r"^(REFUSED in .+)$", re.M)),
                    ("check", re.compile(r"^(FAILED CHECK in .+)$", re.M)),
                    ("violation", re.compile(r"^corpus: (REGRESSED: .+)$", re.M)),
                    # a Z3 proof that is not proved, under "Z3 proofs (...): N/M proved"
                    ("violation", re.compile(r"^  (\S.*?: (?:refuted|unknown) .+)$", re.M)))
_TRACEBACK = "Traceback (most recent call last):"


# The judges running now, so that an interrupted benchmark can stop them (each is the leader of
# its own process group: pytest's xdist workers and verify's children go with it).
_live: set[subprocess.Popen] = set()
_live_lock = threading.Lock()
_stopping = threading.Event()


class Interrupted(Exception):
    """stop_all() was called: the run's verdict is unknown and must not be recorded."""


def stop_all() -> None:
    """Kill every judge running now; runs in progress or started later raise Interrupted."""
    _stopping.set()
    with _live_lock:
        for proc in _live:
            _kill_group(proc)


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass  # it has ended already


@attrs.frozen
class Run:
    """What one judge said about one copy."""

    judge: str          # "verify" or "suite"
    verdict: str        # "killed" or "survived"
    kind: str           # "" when survived; else violation, crash, bad-input or timeout
    returncode: int | None
    seconds: float
    reason: str         # an invariant id, a test id or a crash's last line; "" if none found
    tail: str           # the last TAIL_LINES lines of stdout and stderr

    @property
    def killed(self) -> bool:
        return self.verdict == "killed"

    def short(self) -> str:
        if not self.killed:
            return "survived"
        return f"killed ({self.kind}{': ' + self.reason if self.reason else ''})"

    def to_json(self) -> dict:
        return attrs.asdict(self)


def zcspec_command() -> list[str]:
    """The installed ``zcspec`` script beside this interpreter (the venv's), run by it."""
    script = Path(sys.executable).parent / "zcspec"
    if not script.is_file():
        raise FileNotFoundError(f"no 'zcspec' script next to {sys.executable!r}; install zcspec in this "
                                f"environment (pip install -e .) and run the benchmark with its python")
    return [sys.executable, str(script)]


def verify_command(extra: list[str], artefacts: Path | None = None) -> list[str]:
    """``zcspec verify`` with ``extra`` arguments, writing its artefacts into ``artefacts`` if given."""
    return [*zcspec_command(), "verify", "--quiet", *(["--artefacts", str(artefacts)] if artefacts else []), *extra]


def suite_command(workers: int, extra: list[str]) -> list[str]:
    # -p no:cacheprovider: no .pytest_cache and no last-failed reordering between runs.
    xdist = ["-n", str(workers)] if workers > 1 else []
    return [sys.executable, "-m", "pytest", *xdist, "-q", "-x", "-p", "no:cacheprovider", *extra]


def run(judge: str, cmd: list[str], cwd: Path, env: dict[str, str], timeout: float) -> Run:
    """Run ``cmd`` in its own process group; past ``timeout`` seconds the group is killed."""
    t0 = time.monotonic()
    with _live_lock:
        if _stopping.is_set():
            raise Interrupted(judge)
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, errors="replace", start_new_session=True)
        _live.add(proc)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, err = proc.communicate()
        if _stopping.is_set():
            raise Interrupted(judge) from None
        return Run(judge, "killed", "timeout", None, time.monotonic() - t0,
                   f"over {timeout:.0f} s", _tail(out, err))
    finally:
        with _live_lock:
            _live.discard(proc)
    if _stopping.is_set():
        raise Interrupted(judge)
    seconds = time.monotonic() - t0
    if proc.returncode == 0:
        return Run(judge, "survived", "", 0, seconds, "", _tail(out, err))
    kind = _kind(judge, proc.returncode, out, err)
    reason = _signalled(proc.returncode) or _reason(judge, kind, out, err)
    return Run(judge, "killed", kind, proc.returncode, seconds, reason, _tail(out, err))


def _signalled(returncode: int) -> str:
    """"killed by SIGSEGV" when a signal ended the judge (a negative exit code), else ""."""
    if returncode >= 0:
        return ""
    try:
        return f"killed by {signal.Signals(-returncode).name}"
    except ValueError:
        return f"killed by signal {-returncode}"


def _kind(judge: str, returncode: int, out: str, err: str) -> str:
    if returncode < 0:
        # A signal ended it: a segfault in numba-compiled code (compiled without bounds checks), an
        # abort, the kernel's OOM killer. No report, no verdict file: the code under test crashed.
        return "crash"
    if judge == "verify":
        if _TRACEBACK in err:
            return "crash"  # verify itself died
        if returncode == 2:
            return "bad-input"
        first = _first_finding(out)
        return "crash" if first and first[0] == "crash" else "violation"
    # pytest -x under xdist exits 2 ("Interrupted") after a failed test, so the exit code cannot tell
    # a failed test from a collection error or an internal one: the FAILED lines can.
    return "violation" if _FAILED_ONLY.search(out) else "crash"


def _reason(judge: str, kind: str, out: str, err: str) -> str:
    if judge == "suite":
        found = _FAILED_TEST.search(out)
        return found.group(1) if found else _last_line(out)
    if _TRACEBACK in err:
        return _exception_line(err)
    first = _first_finding(out)
    return first[1][:120] if first else _last_line(out + "\n" + err)


def _first_finding(out: str) -> tuple[str, str] | None:
    """(kind, text) of the first thing verify's report names, in _VERIFY_FINDINGS' order."""
    for kind, pattern in _VERIFY_FINDINGS:
        found = pattern.search(out)
        if found:
            return kind, found.group(1)
    return None


def _exception_line(err: str) -> str:
    """The exception of the last traceback: its first line at column 0 (frames are indented)."""
    after = err[err.rindex(_TRACEBACK) + len(_TRACEBACK):].splitlines()
    line = next((x for x in after if x and not x[0].isspace()), "")
    return line.strip()[:120]


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:120] if lines else ""


def _tail(out: str, err: str) -> str:
    """The ends of stdout and of stderr, each its own share: a judge's stderr full of warnings (pytest
    plugins print them last) must not push out the stdout lines that say what failed."""
    lines = out.rstrip().splitlines()[-TAIL_LINES:]
    if err.strip():
        lines += ["--- stderr ---", *err.rstrip().splitlines()[-ERR_LINES:]]
    return "\n".join(lines)
