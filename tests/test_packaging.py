"""One import namespace: zcspec installs as ``zcspec.spec``, ``zcspec.impl`` and ``zcspec.checks``, nothing else.

The folders stay at the repository root (spec/, impl/, checks/); pyproject.toml maps them under
``zcspec`` and lists every package. These tests fail when a package folder is missing from that list,
when a module imports the old top-level names, or when the installed copy exposes ``spec``, ``impl``
or ``checks`` at the top level.
"""
from __future__ import annotations

import ast
import os
import subprocess
import sys

from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("spec", "impl", "checks")
OLD_NAMES = set(SOURCES)


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_every_package_folder_is_installed_under_zcspec():
    listed = set(_pyproject()["tool"]["setuptools"]["packages"])
    folders = {"zcspec." + str(p.parent.relative_to(ROOT)).replace(os.sep, ".")
               for top in SOURCES for p in (ROOT / top).rglob("__init__.py")}
    folders.add("zcspec")   # api/: the top-level package
    assert folders - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
    assert listed - folders == set(), "listed in pyproject.toml but not a package folder"
    dirs = _pyproject()["tool"]["setuptools"]["package-dir"]
    assert dirs == {"zcspec": "api", **{f"zcspec.{top}": top for top in SOURCES}}


def test_every_source_folder_is_a_package():
    """A folder of modules without __init__.py would silently stay out of the installed copy."""
    missing = [str(d.relative_to(ROOT)) for top in SOURCES for d in [ROOT / top, *(ROOT / top).rglob("*")]
               if d.is_dir() and any(d.glob("*.py")) and not (d / "__init__.py").exists()]
    assert missing == []


def _python_files():
    for top in (*SOURCES, "tests", "benchmarks"):
        yield from (ROOT / top).rglob("*.py")


def test_no_module_imports_the_old_top_level_names():
    offenders = []
    for path in _python_files():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            else:
                continue
            offenders += [f"{path.relative_to(ROOT)}:{node.lineno}: {n}" for n in names
                          if n.split(".")[0] in OLD_NAMES]
    assert offenders == []


def _python(code: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True)


@pytest.mark.parametrize("name", sorted(OLD_NAMES))
def test_the_install_exposes_no_generic_top_level_package(name, tmp_path):
    """Run from outside the checkout, so only what is installed can be imported."""
    run = _python(f"import {name}", tmp_path)
    assert run.returncode != 0 and "ModuleNotFoundError" in run.stderr, run.stdout + run.stderr


def test_the_install_imports_as_zcspec(tmp_path):
    run = _python("import zcspec, zcspec.spec, zcspec.impl.compiler.compile, zcspec.checks.cli.main; print('ok')",
                  tmp_path)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stdout + run.stderr


def test_the_version_has_one_home(tmp_path):
    """``zcspec.__version__`` is what the installed metadata says (pyproject reads it from api/__init__.py)."""
    run = _python("import zcspec, importlib.metadata as m; print(zcspec.__version__ == m.version('zcspec'))", tmp_path)
    assert run.stdout.strip() == "True", run.stdout + run.stderr


def test_importing_the_spec_loads_no_checker(tmp_path):
    """``zcspec`` resolves its entry points lazily: the spec alone stays light and independent of impl/."""
    code = ("import sys, zcspec.spec.check; "
            "print(sorted(m for m in sys.modules if m.startswith(('zcspec.checks', 'zcspec.impl'))))")
    run = _python(code, tmp_path)
    assert run.stdout.strip() == "[]", run.stdout + run.stderr
