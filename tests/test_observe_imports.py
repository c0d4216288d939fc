"""Observe, don't ask: an observe module (impl/**/observe.py) transcribes artefacts; it imports from impl/
only the artefact types and transcription helpers listed here, never a function that decides something
(which I/O is copy-only, which pass is required, what is refreshable, what is aligned).

Every allowed import says why it is only reading. A new import fails this test until it is listed here
with its reason, so a reviewer sees it."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# observe module -> {impl module it may import: why that is reading, not deciding}
ALLOWED = {
    "impl/compiler/observe.py": {
        "zcspec.impl.compiler.ir": "the Graph artefact type",
        "zcspec.impl.compiler.memory.plan_types": "the MemoryPlan artefact type",
        "zcspec.impl.compiler.model_file.encode": "the file format's header layout and constants",
        "zcspec.impl.compiler.model_file.errors": "the loader's refusal, transcribed as the load outcome",
        "zcspec.impl.compiler.model_file.load": "parses the bytes into the CompiledModel artefact",
        "zcspec.impl.compiler.ops": "op attributes as declared (continuous input, atomic): the op desc, not a decision",
    },
    "impl/runtime/v1/observe.py": {
        "zcspec.impl.compiler.observe": "the model file's tasks, transcribed",
        "zcspec.impl.device.trace_events": "the device trace transcribed into events",
        "zcspec.impl.runtime.io_names": "the I/O naming rule (names, not verdicts)",
        "zcspec.impl.runtime.record": "the ExecutionRecord artefact type",
        "zcspec.impl.runtime.v1.allocator": "the allocation tag the runtime writes (a constant)",
        "zcspec.impl.runtime.v1.args": "task names as the argument tables list them",
    },
    "impl/runtime/v2/observe.py": {
        "zcspec.impl.device.trace_events": "the device trace transcribed into events",
        "zcspec.impl.runtime.io_names": "the I/O naming rule (names, not verdicts)",
        "zcspec.impl.runtime.record": "the ExecutionRecord artefact type",
        "zcspec.impl.runtime.v2.errors": "the runtime's error type, transcribed as the call's result",
    },
    "impl/device/observe.py": {
        "zcspec.impl.device.trace": "the device trace's event types",
        "zcspec.impl.device.errors": "the device's refusal, transcribed as a fault",
    },
}


def impl_imports(source: str, package: str) -> set[str]:
    """Every zcspec.impl module ``source`` imports, at any depth (function-level imports too);
    ``from zcspec.impl.x import y`` counts as ``zcspec.impl.x``; relative imports resolve against ``package``."""
    out = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("zcspec.impl")}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            if base.startswith("zcspec.impl"):
                # ``from zcspec.impl.compiler import ops`` imports the module zcspec.impl.compiler.ops
                out |= {f"{base}.{a.name}" if _is_module(f"{base}.{a.name}") else base for a in node.names}
    return out


def _is_module(dotted: str) -> bool:
    path = ROOT.joinpath(*dotted.split(".")[1:])
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def _package(rel: str) -> str:
    return "zcspec." + ".".join(Path(rel).parent.parts)


def observe_modules() -> list[str]:
    return sorted(str(p.relative_to(ROOT)) for p in (ROOT / "impl").rglob("observe.py"))


def test_every_observe_module_has_an_allow_list():
    assert set(observe_modules()) <= set(ALLOWED), "a new observe module needs its allowed imports listed here"


@pytest.mark.parametrize("rel", observe_modules())
def test_observe_modules_import_only_what_they_transcribe(rel):
    found = impl_imports((ROOT / rel).read_text(), _package(rel))
    extra = sorted(found - set(ALLOWED.get(rel, {})))
    assert extra == [], f"{rel} imports {extra}: an observe module may not ask impl for a verdict"


def test_the_check_sees_a_deciding_import_even_inside_a_function():
    """The bug issue 13 found: observe_model_file asked the MemcpyAddrAsync pass whether a node refreshes."""
    source = "def _nodes(g):\n    from zcspec.impl.compiler.passes.memcpy_addr_async import refreshable\n"
    rel = "impl/compiler/observe.py"
    found = impl_imports(source, _package(rel)) - set(ALLOWED[rel])
    assert found == {"zcspec.impl.compiler.passes.memcpy_addr_async"}
    assert impl_imports("from ..runtime.v1 import zero_copy\n", "zcspec.impl.device") == {"zcspec.impl.runtime.v1.zero_copy"}
