"""Where code lives: the import rules between impl/, checks/, tests/ and benchmarks/.

- impl/ imports nothing from checks/: the checker drives the implementation from outside
  (checker code does not live inside impl/);
- no test module imports another test module (``test_*``): what tests share lives in
  tests/helpers/ (or in a conftest fixture), so running or renaming one test file never
  changes another;
- every other module under tests/ is in tests/helpers/, the one place helpers live;
- benchmarks/ import nothing from tests/: a figure depends on product code only.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HELPERS = ROOT / "tests" / "helpers"


def _package_of(path: Path) -> list[str]:
    """The dotted package a source file belongs to, as its importers name it (``zcspec.impl...``, ``tests...``)."""
    parts = list(path.relative_to(ROOT).parent.parts)
    return ["zcspec", *parts] if parts and parts[0] in ("spec", "impl", "checks") else parts


def imported_modules(path: Path, package: list[str]) -> list[tuple[int, str]]:
    """(line, absolute dotted name) of every module ``path`` imports, and of every name it imports
    from a module (which may itself be a module); relative imports are resolved against ``package``,
    the file's own."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = []
            if node.level:
                base = package[:len(package) - node.level + 1]
            module = ".".join(base + ([node.module] if node.module else []))
            if node.module:
                found.append((node.lineno, module))
            found += [(node.lineno, f"{module}.{a.name}" if module else a.name) for a in node.names]
    return found


def _offenders(folder: str, bad) -> list[str]:
    return [f"{path.relative_to(ROOT)}:{line}: imports {name}"
            for path in sorted((ROOT / folder).rglob("*.py"))
            for line, name in imported_modules(path, _package_of(path)) if bad(name)]


def imports_a_test_module(name: str) -> bool:
    return name.rsplit(".", 1)[-1].startswith("test_")


def imports_checks(name: str) -> bool:
    parts = name.split(".")
    return parts[:2] == ["zcspec", "checks"] or parts[0] == "checks"


def imports_tests(name: str) -> bool:
    return name.split(".")[0] == "tests"


def test_impl_imports_nothing_from_checks():
    assert _offenders("impl", imports_checks) == []


def test_no_test_module_imports_another_test_module():
    assert _offenders("tests", imports_a_test_module) == [], "move what they share to tests/helpers/"


def test_benchmarks_import_nothing_from_tests():
    assert _offenders("benchmarks", imports_tests) == [], "move what they need to impl/ or checks/, or into the benchmark"


def test_test_helpers_live_in_tests_helpers():
    stray = [str(p.relative_to(ROOT)) for p in sorted((ROOT / "tests").rglob("*.py"))
             if not p.name.startswith("test_") and p.name not in ("conftest.py", "__init__.py")
             and HELPERS not in p.parents]
    assert stray == [], "shared test code goes in tests/helpers/"


def test_the_rules_see_each_kind_of_import(tmp_path):
    """The scanner resolves plain, from- and relative imports; otherwise the rules above would pass vacuously."""
    sample = tmp_path / "sample.py"
    sample.write_text("import tests.memory.test_sweep\nfrom tests.runtime_v2 import test_models\n"
                      "from .test_executor import relu_neg\nfrom tests.helpers.runtime_v2 import stage\n",
                      encoding="utf-8")
    names = [n for _, n in imported_modules(sample, ["tests", "runtime_v2"])]
    assert [n for n in names if imports_a_test_module(n)] == [
        "tests.memory.test_sweep", "tests.runtime_v2.test_models", "tests.runtime_v2.test_executor"]
    assert all(imports_tests(n) for n in names)
    assert imports_checks("zcspec.checks.execution") and not imports_checks("zcspec.impl.device")
