"""The import graph of spec/, impl/ and checks/: no cycle, no zcspec import inside a function, layers respected.

The graph is built from the sources with ``ast`` (nothing is imported): a node per module
(``zcspec.impl.device.hccl``; a package is its ``__init__``), an edge per ``import`` of a
zcspec name, resolved to the module that defines it (``from zcspec.impl.compiler import ops``
is an edge to ``...compiler.ops``; ``from zcspec.impl.device import Device`` one to the
package). Imports at module level and inside functions both count. The rules
(docs/errors.md, "Layers"):

- no cycle between modules (a cycle is only hidden by a function-level import, never solved);
- no import of a zcspec module inside a function: dependencies are read at the module's top.
  A function-level import of a third-party module is allowed (to defer an expensive one);
- the layers: platform <- compiler, device <- runtime <- checks, and spec alone. A package
  imports only itself and what ``ALLOWED`` lists for it, so impl/platform imports no other
  zcspec package, impl/device and impl/compiler import neither each other nor the runtimes,
  impl/ imports nothing of checks/, and spec/ nothing of impl/ or checks/.

The rules are tested on the real tree, and each once on a small tree made to break it.
"""
from __future__ import annotations

import ast
import itertools
from pathlib import Path

import attrs
import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("spec", "impl", "checks")

# The layer of a module is its package under zcspec (impl's sub-packages are layers of their own);
# a layer may import itself and the layers listed. spec is the vocabulary every layer observes with.
ALLOWED = {
    "spec": set(),
    "impl": set(),                      # zcspec.impl itself: an empty namespace
    "impl.platform": set(),
    "impl.compiler": {"impl.platform", "spec"},
    "impl.device": {"impl.platform", "spec"},
    "impl.runtime": {"impl.platform", "impl.compiler", "impl.device", "spec"},
    "checks": {"impl.platform", "impl.compiler", "impl.device", "impl.runtime", "spec"},
}


@attrs.frozen
class Import:
    """``importer`` imports ``imported`` (both module names) at ``file:line``; ``local`` if inside a function."""

    importer: str
    imported: str
    file: str
    line: int
    local: bool

    def __str__(self) -> str:
        where = "inside a function" if self.local else "at module level"
        return f"{self.file}:{self.line}: {self.importer} imports {self.imported} {where}"


def modules(root: Path) -> dict[str, Path]:
    """Module name -> source file, for every .py file under root/spec, root/impl and root/checks."""
    out = {}
    for top in SOURCES:
        for path in sorted((root / top).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(["zcspec", *parts])] = path
    return out


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The module that defines ``name`` (a module, or a name inside one), if it is one of ours."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def _names(node: ast.AST, module: str, is_package: bool) -> list[str]:
    """The absolute dotted names an import statement asks for (``from m import a`` asks for ``m.a``)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    package = module.split(".") if is_package else module.split(".")[:-1]
    base = package[:len(package) - node.level + 1] if node.level else []
    source = ".".join(base + ([node.module] if node.module else []))
    return [f"{source}.{a.name}" for a in node.names]


def _function_nodes(tree: ast.AST) -> set[int]:
    inner = set()
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            inner |= {id(n) for n in ast.walk(fn) if n is not fn}
    return inner


def imports(root: Path) -> list[Import]:
    """Every import of one of our modules by another, module-level and function-level alike."""
    known = modules(root)
    found = []
    for module, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        local = _function_nodes(tree)
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for name in _names(node, module, path.name == "__init__.py"):
                target = _resolve(name, known)
                if target and target != module:
                    found.append(Import(module, target, path.relative_to(root).as_posix(), node.lineno,
                                        id(node) in local))
    return found


def layer(module: str) -> str:
    """``zcspec.impl.device.hccl`` -> ``impl.device``; ``zcspec.checks.cli.main`` -> ``checks``."""
    parts = module.split(".")[1:]
    return ".".join(parts[:2]) if parts[0] == "impl" and len(parts) > 1 else parts[0]


def cycles(found: list[Import], limit: int = 10) -> list[str]:
    """Up to ``limit`` import cycles, each as its modules in order (``a -> b -> a``)."""
    graph = nx.DiGraph((i.importer, i.imported) for i in found)
    return [" -> ".join([*c, c[0]]) for c in itertools.islice(nx.simple_cycles(graph), limit)]


def local_imports(found: list[Import]) -> list[str]:
    return [str(i) for i in found if i.local]


def layer_breaks(found: list[Import]) -> list[str]:
    return [f"{i} (layer {layer(i.importer)} may import only {sorted(ALLOWED[layer(i.importer)]) or 'itself'})"
            for i in found
            if layer(i.imported) != layer(i.importer) and layer(i.imported) not in ALLOWED[layer(i.importer)]]


# --- the real tree -----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def tree_imports() -> list[Import]:
    return imports(ROOT)


def test_the_graph_sees_the_whole_tree(tree_imports):
    # A builder that resolved nothing would pass every rule: make sure it sees what is there.
    assert len(modules(ROOT)) > 200
    edges = {(i.importer, i.imported) for i in tree_imports}
    assert ("zcspec.impl.device.hccl", "zcspec.impl.device.operands") in edges
    assert ("zcspec.impl.compiler.ir", "zcspec.impl.platform.dtypes") in edges
    assert {layer(i.importer) for i in tree_imports} >= set(ALLOWED) - {"impl"}


def test_no_import_cycle_between_modules(tree_imports):
    found = cycles(tree_imports)
    assert not found, "import cycles:\n" + "\n".join(found)


def test_no_zcspec_module_is_imported_inside_a_function(tree_imports):
    found = local_imports(tree_imports)
    assert not found, "move these imports to the module's top:\n" + "\n".join(found)


def test_every_import_respects_the_layers(tree_imports):
    found = layer_breaks(tree_imports)
    assert not found, "imports across the layers:\n" + "\n".join(found)


# --- each rule broken once on purpose ----------------------------------------------------------------------

def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for top in SOURCES:
        (tmp_path / top).mkdir(exist_ok=True)
    return tmp_path


def test_a_cycle_is_reported_with_its_modules(tmp_path):
    root = _tree(tmp_path, {
        "impl/device/__init__.py": "",
        "impl/device/executor.py": "from zcspec.impl.device import hccl\n",
        "impl/device/hccl.py": "def run():\n    from zcspec.impl.device.executor import bind\n",
    })
    found = cycles(imports(root))
    assert len(found) == 1
    assert set(found[0].split(" -> ")) == {"zcspec.impl.device.executor", "zcspec.impl.device.hccl"}


def test_a_function_level_import_of_ours_is_reported_and_a_third_party_one_is_not(tmp_path):
    root = _tree(tmp_path, {
        "checks/zoo.py": "def load(name):\n    import onnx\n    from zcspec.checks.models import load_graph\n",
        "checks/models.py": "",
    })
    assert local_imports(imports(root)) == [
        "checks/zoo.py:3: zcspec.checks.zoo imports zcspec.checks.models inside a function"]


@pytest.mark.parametrize("importer, statement, imported_layer", [
    ("impl/device/errors.py", "from zcspec.impl.compiler.errors import GraphError", "impl.compiler"),
    ("impl/platform/soc.py", "from zcspec.impl.compiler import ops", "impl.compiler"),
    ("impl/platform/soc.py", "from zcspec.impl.device.errors import DeviceError", "impl.device"),
    ("impl/compiler/options.py", "from zcspec.impl.device.soc import get_soc", "impl.device"),
    ("impl/runtime/acl.py", "import zcspec.checks.zoo", "checks"),
    ("spec/check.py", "from zcspec.impl.compiler.ir import Graph", "impl.compiler"),
    ("spec/check.py", "from zcspec.checks import zoo", "checks"),
])
def test_an_import_across_the_layers_is_reported(tmp_path, importer, statement, imported_layer):
    target = {"impl.compiler": "impl/compiler/errors.py", "impl.device": "impl/device/errors.py",
              "checks": "checks/zoo.py"}[imported_layer]
    root = _tree(tmp_path, {importer: statement + "\n", target: "", "impl/compiler/ops.py": "",
                            "impl/compiler/ir.py": "", "impl/device/soc.py": "", "checks/__init__.py": ""})
    found = layer_breaks(imports(root))
    assert len(found) == 1 and found[0].startswith(f"{importer}:1: ") and imported_layer in found[0], found


def test_relative_imports_resolve_like_absolute_ones(tmp_path):
    root = _tree(tmp_path, {
        "impl/platform/__init__.py": "from . import soc\n",
        "impl/platform/soc.py": "from ..compiler import ops\n",
        "impl/compiler/ops.py": "",
    })
    found = {(i.importer, i.imported) for i in imports(root)}
    assert found == {("zcspec.impl.platform", "zcspec.impl.platform.soc"),
                     ("zcspec.impl.platform.soc", "zcspec.impl.compiler.ops")}
