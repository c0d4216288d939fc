"""The mutation benchmark's sandbox (benchmarks/mutation/sandbox.py) and runs (runs.py): a mutant's copy is
what Python, pytest and its xdist workers import, never the checkout, and a run past its limit dies with
its children."""
from __future__ import annotations

import hashlib
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from benchmarks.mutation import mutator
from benchmarks.mutation.runs import run
from benchmarks.mutation.sandbox import Sandbox, SandboxError

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def impl_sites():
    return mutator.sites(REPO)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_mutants_copy_is_what_python_imports_not_the_checkout(tmp_path, impl_sites):
    m = next(s for s in impl_sites if s.path == "impl/compiler/memory/lifetimes.py")
    checkout_before = _digest(REPO / m.path)
    box = Sandbox.create(REPO, tmp_path / "m", commit=None)
    box.write(m.path, m.apply((box.tree / m.path).read_text(encoding="utf-8")))
    (box.tree / "impl" / "_mutant_marker.py").write_text("COPY = True\n")
    probe = ("import inspect, zcspec.spec, zcspec.impl, zcspec.checks, zcspec.impl._mutant_marker\n"
             "import zcspec.impl.compiler.memory.lifetimes as lt\n"
             "print(zcspec.spec.__file__, zcspec.impl.__file__, zcspec.checks.__file__, lt.__file__)\n"
             f"assert {m.after!r} in inspect.getsource(lt)\n")
    done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=box.env(), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert all(Path(f).is_relative_to(box.tree) for f in done.stdout.split()), done.stdout
    assert _digest(REPO / m.path) == checkout_before
    assert not (REPO / "impl" / "_mutant_marker.py").exists()


def test_pytest_and_its_xdist_workers_import_the_copy(tmp_path):
    box = Sandbox.create(REPO, tmp_path / "m", commit=None)
    (box.tree / "impl" / "_mutant_marker.py").write_text("COPY = True\n")
    (box.tree / "tests" / "test_zz_copy_probe.py").write_text(textwrap.dedent(f"""\
        import pytest, zcspec.impl, zcspec.checks.pytest_plugin as plugin
        @pytest.mark.parametrize("i", range(4))
        def test_copy(i):
            import zcspec.impl._mutant_marker
            assert zcspec.impl.__file__.startswith({str(box.tree)!r})
            assert plugin.__file__.startswith({str(box.tree)!r})
        """))
    done = subprocess.run([sys.executable, "-m", "pytest", "-n", "2", "-q", "-p", "no:cacheprovider",
                           "tests/test_zz_copy_probe.py"], cwd=box.tree, env=box.env(), capture_output=True, text=True)
    assert done.returncode == 0 and "4 passed" in done.stdout, done.stdout + done.stderr


def test_a_copy_without_the_packages_is_refused(tmp_path):
    (tmp_path / "src" / "spec").mkdir(parents=True)
    with pytest.raises(SandboxError, match="no package folder"):
        Sandbox.create(tmp_path / "src", tmp_path / "m", commit=None)


def test_a_run_past_its_limit_is_killed_with_its_children(tmp_path):
    pid_file = tmp_path / "child.pid"
    spawn = ("import subprocess, sys, time\n"
             "c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
             f"open({str(pid_file)!r}, 'w').write(str(c.pid)); time.sleep(60)\n")
    t0 = time.monotonic()
    r = run("suite", [sys.executable, "-c", spawn], tmp_path, {}, timeout=2)
    assert (r.verdict, r.kind) == ("killed", "timeout") and time.monotonic() - t0 < 20
    child = int(pid_file.read_text())
    time.sleep(0.2)
    status = Path(f"/proc/{child}/stat")
    assert not status.exists() or status.read_text().split()[2] == "Z", "the grandchild outlived the time-out"
