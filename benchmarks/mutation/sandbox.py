"""An isolated copy of the checkout in which one mutant runs, never touching the checkout itself.

``Sandbox.create(repo, into)`` copies the sources (``git archive`` of a commit, or the working
tree's files) into ``into/tree`` and writes ``into/boot/sitecustomize.py``. With ``env()``,
``into/boot`` is on PYTHONPATH; Python imports ``sitecustomize`` at start-up, after the site
``.pth`` files, so our finder goes to the front of ``sys.meta_path`` ahead of the editable
install's finder, which maps ``zcspec`` and ``zcspec.spec``/``impl``/``checks`` to the checkout. Ours
maps them, as pyproject's ``package-dir`` does, to ``tree/api``, ``tree/spec``, ``tree/impl`` and
``tree/checks``, so every
process started with that environment (``zcspec verify``, pytest and its xdist workers, the CLI
subprocesses of the tests) imports the copy. The folders stay at the copy's root, so code that
finds docs/ next to its sources (spec/document.py) finds the copy's.
"""
from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import attrs

# The packages pyproject.toml's [tool.setuptools.package-dir] maps, and the folder of each.
# ``zcspec`` itself is mapped too, and ``boot/zcspec`` links to the copy's ``api/``: under a
# non-editable install pytest marks every module of the installed distribution for assertion
# rewriting, and its rewriting finder, first on sys.meta_path, searches sys.path for ``zcspec``
# (finding boot's link before site-packages) and then that package's path for ``zcspec.impl``
# (the copy's ``api/``, which holds no ``impl``), so our finder answers for the subpackages.
PACKAGE_DIRS = {"zcspec": "api", "zcspec.spec": "spec", "zcspec.impl": "impl", "zcspec.checks": "checks"}
# Working-tree copies leave out what is not source (and would only slow the copy down).
IGNORED = (".git", "__pycache__", "*.egg-info", ".pytest_cache", ".hypothesis", "*.pyc")
# Variables that would make a run test something else than the copy's own default behaviour:
# an outer PYTHONPATH, or a fault-catalogue variant switched on (checks/faults/registry.py).
STRIPPED_ENV = ("PYTHONPATH", "ZCSPEC_FAULT")

_FINDER = '''\
"""Written by benchmarks/mutation/sandbox.py: import zcspec.spec/impl/checks from this copy."""
import sys
from importlib.machinery import PathFinder
from importlib.util import spec_from_file_location

_MAPPING = {mapping!r}


class _MutantCopyFinder:
    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        folder = _MAPPING.get(fullname)
        if folder is not None:
            return spec_from_file_location(fullname, folder + "/__init__.py",
                                           submodule_search_locations=[folder])
        parent, _, _ = fullname.rpartition(".")
        if parent in _MAPPING:
            return PathFinder.find_spec(fullname, [_MAPPING[parent]])
        return None


sys.meta_path.insert(0, _MutantCopyFinder)
'''


class SandboxError(Exception):
    """The copy could not be made (no such commit, not a git checkout, a package folder missing)."""


@attrs.frozen
class Sandbox:
    """A copy of the sources at ``tree`` and the start-up hook at ``boot`` that makes it imported."""

    tree: Path
    boot: Path

    @classmethod
    def create(cls, repo: Path, into: Path, commit: str | None = "HEAD") -> "Sandbox":
        """Copy ``repo`` at ``commit`` (``None``: the working tree as it is) into ``into``, a new
        or empty folder. Raises SandboxError naming the repo and what is missing."""
        repo, into = Path(repo).resolve(), Path(into)
        tree, boot = into / "tree", into / "boot"
        if commit is None:
            shutil.copytree(repo, tree, ignore=shutil.ignore_patterns(*IGNORED), symlinks=True)
        else:
            _extract(repo, commit, tree)
        missing = [d for d in PACKAGE_DIRS.values() if not (tree / d / "__init__.py").is_file()]
        if missing:
            raise SandboxError(f"copy of {str(repo)!r} at {commit or 'the working tree'} has no package folder "
                               f"{missing!r}; is it the zcspec checkout?")
        boot.mkdir(parents=True)
        mapping = {name: str(tree / folder) for name, folder in PACKAGE_DIRS.items()}
        (boot / "sitecustomize.py").write_text(_FINDER.format(mapping=mapping), encoding="utf-8")
        (boot / "zcspec").symlink_to(tree / PACKAGE_DIRS["zcspec"], target_is_directory=True)
        return cls(tree=tree, boot=boot)

    def env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """The environment for a process that must import this copy: ``base`` (default os.environ)
        without STRIPPED_ENV, with ``boot`` (and nothing else) on PYTHONPATH."""
        env = {k: v for k, v in (os.environ if base is None else base).items() if k not in STRIPPED_ENV}
        env["PYTHONPATH"] = str(self.boot)
        return env

    def write(self, relpath: str, text: str) -> None:
        """Replace one file of the copy (a mutant's module); the path must already exist there."""
        target = self.tree / relpath
        if not target.is_file():
            raise SandboxError(f"{relpath!r} is not a file of the copy at {str(self.tree)!r}")
        target.write_text(text, encoding="utf-8")


def _extract(repo: Path, commit: str, tree: Path) -> None:
    run = subprocess.run(["git", "-C", str(repo), "archive", "--format=tar", commit],
                         capture_output=True)
    if run.returncode != 0:
        raise SandboxError(f"git archive of {str(repo)!r} at {commit!r} failed: "
                           f"{run.stderr.decode(errors='replace').strip()}")
    tree.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(run.stdout)) as tar:
        tar.extractall(tree, filter="data")
