"""Observe, don't ask: an observe module (impl/**/observe.py) transcribes artefacts; it reaches into impl/
only for the artefact types and transcription helpers listed here, never for a function that decides something
(which I/O is copy-only, which pass is required, what is refreshable, what is aligned, what an op type implies).

Every allowed module says why it is only reading. A new one fails this test until it is listed here with its
reason, so a reviewer sees it. "Reaching" is any of: an import statement at any depth; a name imported from a
module that is itself a module or is defined in another impl module (``from ...load import ops``); an attribute
chain through a module (``load.ops.info``, ``zcspec.impl.compiler.ops``); ``importlib.import_module`` /
``__import__`` of a named module, and of one the source does not name (always refused); a string naming an
impl module (``sys.modules["zcspec.impl..."]``); ``exec``/``eval``. tests/compiler/test_observe_transcribes.py
checks the other side at run time: observing the zoo with impl's deciding functions made to raise."""
from __future__ import annotations

import ast
import importlib
import inspect
import re
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# observe module -> {impl module it may reach: why that is reading, not deciding}
ALLOWED = {
    "checks/input_file_observer.py": {},
    "impl/compiler/observe.py": {
        "zcspec.impl.compiler.ir": "the Graph artefact type",
        "zcspec.impl.compiler.memory.plan_types": "the MemoryPlan artefact type",
        "zcspec.impl.compiler.model_file.encode": "the file format's header layout and constants",
        "zcspec.impl.compiler.model_file.errors": "the loader's refusal, transcribed as the load outcome",
        "zcspec.impl.compiler.model_file.load": "parses the bytes into the CompiledModel artefact",
    },
    "impl/runtime/v1/observe.py": {
        "zcspec.impl.compiler.observe": "the model file's tasks, transcribed",
        "zcspec.impl.device.trace": "the device trace's event types (the session allocator's calls)",
        "zcspec.impl.device.trace_events": "the device trace transcribed into events",
        "zcspec.impl.runtime.io_names": "the I/O naming rule (names, not verdicts)",
        "zcspec.impl.runtime.record": "the ExecutionRecord artefact type",
        "zcspec.impl.runtime.v1.allocator": "the allocation tag the runtime writes (a constant)",
        "zcspec.impl.runtime.v1.args": "task names as the argument tables list them",
    },
    "impl/runtime/v2/observe.py": {
        "zcspec.impl.compiler.observe": "the model file's tasks, transcribed",
        "zcspec.impl.device.trace_events": "the device trace transcribed into events",
        "zcspec.impl.runtime.io_names": "the I/O naming rule (names, not verdicts)",
        "zcspec.impl.runtime.record": "the ExecutionRecord artefact type",
        "zcspec.impl.runtime.v2.errors": "the runtime's error type, transcribed as the call's result",
    },
    "impl/device/observe.py": {
        "zcspec.impl.device.trace": "the device trace's event types",
        "zcspec.impl.device.errors": "the device's refusal, transcribed as a fault",
        "zcspec.impl.device.observe_allocators": "the allocator calls and their tagged memory, transcribed "
                                                 "(it reads the trace's event types alone)",
    },
}

DYNAMIC = "<a module the source does not name>"
CODE = "<exec or eval>"
_IMPORTERS = {"import_module", "__import__"}
_MODULE_NAME = re.compile(r"^\.*zcspec\.impl(\.\w+)*$")


def _resolve(name: str, package: str) -> str:
    """``name`` (``zcspec.impl.x`` or relative, ``..x``) as an absolute dotted name."""
    if not name.startswith("."):
        return name
    level = len(name) - len(name.lstrip("."))
    base = package.split(".")[: len(package.split(".")) - level + 1]
    return ".".join(base + ([name.lstrip(".")] if name.lstrip(".") else []))


def _module(dotted: str) -> types.ModuleType | None:
    try:
        return importlib.import_module(dotted)
    except ImportError:
        return None


def _home(obj, fallback: str) -> str:
    """The impl module ``obj`` belongs to: itself for a module, where it is defined for a function or class,
    else ``fallback`` (a constant is the module's it was imported from)."""
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    if inspect.isfunction(obj) or inspect.isclass(obj) or inspect.isbuiltin(obj):
        home = getattr(obj, "__module__", "") or ""
        return home if home.startswith("zcspec.impl") else fallback
    return fallback


class _Reach(ast.NodeVisitor):
    """Collects every zcspec.impl module a source reaches (see the module doc)."""

    def __init__(self, package: str):
        self.package, self.found, self.bound = package, set(), {}   # bound: local name -> module name

    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            if a.name.startswith("zcspec.impl"):
                self.found.add(a.name)
            if a.name.split(".")[0] == "zcspec":
                self.bound[a.asname or "zcspec"] = a.name if a.asname else "zcspec"
            elif a.name == "importlib":
                self.bound[a.asname or "importlib"] = "importlib"

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = _resolve("." * node.level + (node.module or ""), self.package) if node.level else node.module or ""
        if not base.startswith("zcspec"):
            if base == "importlib":
                self.bound.update({a.asname or a.name: f"importlib.{a.name}" for a in node.names})
            return
        mod = _module(base)
        for a in node.names:
            target = getattr(mod, a.name, None) if mod is not None else None
            home = _home(target, base) if target is not None else (f"{base}.{a.name}" if _module(f"{base}.{a.name}") else base)
            if home.startswith("zcspec.impl"):
                self.found.add(home)
            if isinstance(target, types.ModuleType) or _module(f"{base}.{a.name}") is not None:
                self.bound[a.asname or a.name] = home

    def visit_Attribute(self, node: ast.Attribute) -> None:
        chain, root = [], node
        while isinstance(root, ast.Attribute):
            chain.append(root.attr)
            root = root.value
        if isinstance(root, ast.Name) and root.id in self.bound and not self.bound[root.id].startswith("importlib"):
            obj = _module(self.bound[root.id])
            where = self.bound[root.id]
            for attr in reversed(chain):
                obj = getattr(obj, attr, None) if isinstance(obj, types.ModuleType) else None
                if obj is None:
                    break
                where = _home(obj, where)
                if where.startswith("zcspec.impl") and not hasattr(obj, "__path__"):   # a package is a way through
                    self.found.add(where)
            return   # the chain is judged whole: its inner Attribute nodes are its prefixes
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        if isinstance(f, ast.Name) and f.id in self.bound and self.bound[f.id].startswith("importlib."):
            name = self.bound[f.id].split(".", 1)[1]
        if name in ("exec", "eval") and isinstance(f, ast.Name):
            self.found.add(CODE)
        if name in _IMPORTERS:
            arg = node.args[0] if node.args else None
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                target = _resolve(arg.value, self.package)
                if target.startswith("zcspec"):
                    self.found.add(target)
            else:
                self.found.add(DYNAMIC)
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and _MODULE_NAME.match(node.value):
            self.found.add(_resolve(node.value, self.package))


def impl_reach(source: str, package: str) -> set[str]:
    """Every zcspec.impl module ``source`` (a module of ``package``) reaches, plus DYNAMIC / CODE markers."""
    visitor = _Reach(package)
    visitor.visit(ast.parse(source))
    return visitor.found


def _package(rel: str) -> str:
    return "zcspec." + ".".join(Path(rel).parent.parts)


# Observers outside impl/: the checker's transcription of an input file reaches no impl module at all.
CHECKER_OBSERVERS = ("checks/input_file_observer.py",)


def observe_modules() -> list[str]:
    return sorted([str(p.relative_to(ROOT)) for p in (ROOT / "impl").rglob("observe.py")] + list(CHECKER_OBSERVERS))


def _extra(source: str, rel: str) -> list[str]:
    return sorted(impl_reach(source, _package(rel)) - set(ALLOWED.get(rel, {})))


def test_every_observe_module_has_an_allow_list():
    assert set(observe_modules()) <= set(ALLOWED), "a new observe module needs its allowed imports listed here"


@pytest.mark.parametrize("rel", observe_modules())
def test_observe_modules_reach_only_what_they_transcribe(rel):
    extra = _extra((ROOT / rel).read_text(), rel)
    assert extra == [], f"{rel} reaches {extra}: an observe module may not ask impl for a verdict"


OBSERVE = "impl/compiler/observe.py"


@pytest.mark.parametrize("source, culprit", [
    # The bug issue 13 found: observe_model_file asked the MemcpyAddrAsync pass whether a node refreshes.
    ("def _nodes(g):\n    from zcspec.impl.compiler.passes.memcpy_addr_async import refreshable\n",
     "zcspec.impl.compiler.passes.memcpy_addr_async"),
    # Issue 35's: the same question asked through importlib, which the import statements alone never showed.
    ("import importlib\n\ndef _nodes(g, n):\n"
     "    return importlib.import_module('zcspec.impl.compiler.passes.memcpy_addr_async').refreshable(n)\n",
     "zcspec.impl.compiler.passes.memcpy_addr_async"),
    ("from importlib import import_module as im\nx = im('.passes.memcpy_addr_async', __package__)\n",
     "zcspec.impl.compiler.passes.memcpy_addr_async"),
    ("x = __import__('zcspec.impl.compiler.ops', fromlist=['info']).info('ReduceSum')\n", "zcspec.impl.compiler.ops"),
    ("import importlib\nname = 'ops'\nx = importlib.import_module(name)\n", DYNAMIC),
    ("import sys\nops = sys.modules['zcspec.impl.compiler.ops']\n", "zcspec.impl.compiler.ops"),
    # Attribute access into a deciding module, through an allowed one or from the package root.
    ("from zcspec.impl.compiler.model_file import load\nx = load.ops.info('ReduceSum').atomic\n",
     "zcspec.impl.compiler.ops"),
    ("import zcspec\nx = zcspec.impl.compiler.memory.rules.atomic\n", "zcspec.impl.compiler.memory.rules"),
    ("import zcspec.impl.compiler.ir\nx = zcspec.impl.compiler.ops.task_kinds\n", "zcspec.impl.compiler.ops"),
    # A deciding module or function re-exported by an allowed one.
    ("from zcspec.impl.compiler.model_file.load import ops\n", "zcspec.impl.compiler.ops"),
    ("from zcspec.impl.compiler.model_file.load import SimpleNamespace, KERNEL_OPS\nexec('1')\n", CODE),
    ("from ..runtime.v1 import zero_copy\n", "zcspec.impl.runtime.v1.zero_copy"),
])
def test_the_check_sees_every_way_of_reaching_a_deciding_module(source, culprit):
    assert culprit in _extra(source, OBSERVE), impl_reach(source, _package(OBSERVE))


def test_reading_an_allowed_module_passes():
    source = ("from zcspec.impl.compiler.model_file import load\nfrom zcspec.impl.compiler.ir import Graph\n"
              "m = load.load_model(b'')\ng = Graph\n")
    assert _extra(source, OBSERVE) == []
