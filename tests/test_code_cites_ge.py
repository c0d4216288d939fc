"""Code and docs cite GE by its own files and functions, and those exist in GE's source.

- No source file of api/ impl/ spec/ checks/ benchmarks/ tests/ points at the developers' private
  notes (ge-facts.md, planning-facts.md, DESIGN.md, ../shared): a reader of the code, or of an error
  message, cannot follow them.
- Every GE citation in docs/ of the form `file.cc` `Function` (a file name in backticks, then
  function names in backticks: `block_mem_assigner.cc` `ReuseBlock`, `AddLifeReuseBlock`) names a
  file of GE's source and names that the file defines, and every "GE's `Class::Method`" or
  "GE's `FunctionName`" names a function GE defines.
- Every claim's ``ge_source`` in spec/ (what docs/SPEC.md prints as "GE source") names GE files and
  function names they define.
- Comments, docstrings and messages in code that name a GE file and then a function
  (``davinci_model.cc ConstructZeroCopyIoActiveBaseAddrs``) or a ported case
  (``block_mem_assigner_unittest.cc TEST_F(Suite, case)``) name ones the file has.

The file list is tests/data/ge_functions.json, written from a snapshot of GE (github mirror-cann/ge,
commit in the file) by benchmarks/ge_functions.py; files of other projects that the docs cite are
listed in OTHER_PROJECTS. Text only: nothing here imports zcspec.
"""
from __future__ import annotations

import ast
import io
import json
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "ge_functions.json"

INTERNAL_NOTES = re.compile(r"ge-facts|planning-facts|DESIGN\.md|\.\./shared", re.IGNORECASE)
# Files allowed to name the notes: the tests that forbid them.
NOTE_CHECKERS = {"tests/test_docs_cite_ge.py", "tests/test_code_cites_ge.py"}

# Files of other projects the docs cite, each with its project: not GE's, so not in the list.
OTHER_PROJECTS = {
    "arena_planner.cc": "TensorFlow Lite",
    "main.cc": "MiniMalloc",
    "solver.cc": "MiniMalloc",
    "converter.cc": "MiniMalloc",
}

FILE = r"[\w./{},*-]*\w\.(?:cc|cpp|h)"
NAME = r"~?[A-Za-z_]\w*(?:::~?[A-Za-z_]\w*)*"
# `file.cc` followed by names in backticks, separated by commas, slashes, "and"/"or", possessives.
CITATION = re.compile(rf"`(?P<file>{FILE})`(?P<names>(?:(?:'s)?\s*(?:,|/|\band\b|\bor\b)?\s*`{NAME}`)+)")
CITED_NAME = re.compile(rf"`({NAME})`")
# GE's `Class::Method` or GE's `FunctionName` (two capitals or more, so op types such as `Identity`
# are not taken for functions): a function named alone.
QUALIFIED_ALONE = re.compile(rf"\bGE(?:'s)?\s+`((?:\w+::)+~?\w+|[A-Z][a-z0-9]+[A-Z]\w*)`")


def _sources(suffixes=(".py",)) -> list[Path]:
    found = []
    for top in ("api", "impl", "spec", "checks", "benchmarks", "tests"):
        found += [p for p in sorted((ROOT / top).rglob("*")) if p.suffix in suffixes
                  and p.relative_to(ROOT).as_posix() not in NOTE_CHECKERS]
    return found


def test_code_cites_no_internal_notes():
    """Python sources, and the JSON that ships with them (the counterexample corpus' notes)."""
    sources = _sources((".py", ".json"))
    assert len(sources) > 100, "no sources found"
    hits = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
            for path in sources
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
            if INTERNAL_NOTES.search(line)]
    assert not hits, "code cites notes readers do not have; cite GE's file and function:\n" + "\n".join(hits)


class GeIndex:
    """tests/data/ge_functions.json as look-ups: files by base name or path suffix, names per file."""

    def __init__(self, data: dict):
        self.commit = data["commit"]
        self.top_folders = set(data["top_folders"]) | {"910", "ge"}   # 910/ge/...: r1.11's tree
        self.files: dict[str, set[str]] = {}
        self.types: dict[str, set[str]] = {}
        for block in (data["files"], data.get("legacy", {}).get("files", {})):
            for path, entry in block.items():
                names = set(entry.get("constants", ())) | set(entry.get("types", ()))
                names |= {t.rsplit("::", 1)[-1] for t in entry.get("types", ())}
                names |= {case.split(".", 1)[1] for case in entry.get("cases", ())}
                # a class whose methods the file defines: `zero_copy_offset.cc` `ZeroCopyOffset`
                names |= {cls.rsplit("::", 1)[-1] for cls in entry.get("functions", {}) if cls}
                for cls, functions in entry.get("functions", {}).items():
                    for f in functions:
                        names |= {f, f"{cls}::{f}" if cls else f}
                self.files[path] = names
        self.everywhere = set().union(*self.files.values())
        self.cases = {path: set(entry.get("cases", ()))
                      for block in (data["files"], data.get("legacy", {}).get("files", {}))
                      for path, entry in block.items()}

    def paths(self, cited: str) -> list[str]:
        """The files a cited name means: the same path, or any path ending in /<cited>."""
        cited = cited.lstrip("./")
        return [p for p in self.files if p == cited or p.endswith("/" + cited)]

    def foreign(self, cited: str) -> bool:
        """A path of another project (``tensorflow/lite/util.h``, ``xla/...``): its first folder is
        none of GE's; a bare file name is GE's unless OTHER_PROJECTS names it."""
        cited = cited.lstrip("./")
        if "/" in cited:
            return cited.split("/", 1)[0] not in self.top_folders
        return Path(cited).name in OTHER_PROJECTS

    def defines(self, paths: list[str], name: str) -> bool:
        return any(name in self.files[p] for p in paths)


@pytest.fixture(scope="module")
def ge() -> GeIndex:
    return GeIndex(json.loads(DATA.read_text(encoding="utf-8")))


def _expand(cited: str) -> list[str]:
    """`user_out_and_unrefresh_{in,out}_checker.cc` -> both files; a `*` pattern names no one file;
    `runtime/v1/.../davinci_model.cc` names the file by its base name."""
    if "..." in cited:
        return [Path(cited).name]
    m = re.search(r"\{([^{}]*)\}", cited)
    if m:
        return [f for part in m.group(1).split(",") for f in _expand(cited[:m.start()] + part + cited[m.end():])]
    return [] if "*" in cited else [cited]


def citations(text: str) -> list[tuple[int, str, list[str]]]:
    """(line, file, names) for every `file` `name`... in a markdown text; a file alone has no names."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        for m in CITATION.finditer(line):
            found.append((number, m.group("file"), CITED_NAME.findall(m.group("names"))))
        for m in re.finditer(rf"`({FILE})`", line):
            if not any(c.start() == m.start() for c in CITATION.finditer(line)):
                found.append((number, m.group(1), []))
    return found


def _unborne(where, cited: str, names, ge: GeIndex) -> list[str]:
    """Why the citation of ``cited`` (a GE file, or several) with ``names`` at ``where`` fails: an unknown
    file, or a name its file does not define; another project's path is not checked."""
    out = []
    for one in _expand(cited):
        if ge.foreign(one):
            continue
        paths = ge.paths(one)
        if not paths:
            out.append(f"{where}: `{one}` is no file of GE {ge.commit[:9]}'s list")
        out += [f"{where}: `{one}` does not define `{n}`" for n in names if paths and not ge.defines(paths, n)]
    return out


def problems(text: str, ge: GeIndex) -> list[str]:
    """Why each GE citation in ``text`` fails: an unknown file, or a name its file does not define."""
    out = []
    for number, cited, names in citations(text):
        out += _unborne(number, cited, names, ge)
    for number, line in enumerate(text.splitlines(), start=1):
        for name in QUALIFIED_ALONE.findall(line):
            if name not in ge.everywhere:
                out.append(f"{number}: GE defines no `{name}`")
    return out


# In a claim's GE source: `path.cc (Name, Name: why, prose)` or `path.cc Class::Method`.
SOURCE_SEGMENT = re.compile(rf"(?P<file>{FILE})(?:\s*\((?P<items>[^()]*(?:\([^()]*\)[^()]*)*)\)|\s+(?P<method>(?:\w+::)+~?\w+))?")


def source_citations(source: str) -> list[tuple[str, list[str]]]:
    """(file, names) in a claim's GE source: the items of the parenthesis after a file that are one
    name (``ReuseBlock``, ``InsertSyncEvents: an event on...``), not prose or a member (``ref_count_``)."""
    found = []
    for m in SOURCE_SEGMENT.finditer(source):
        names = []
        if m.group("method"):
            names.append(m.group("method"))
        for item in re.split(r"[,;]", m.group("items") or ""):
            item = item.split(":", 1)[0] if not re.match(r"\s*\w+::", item) else re.sub(r":\s.*", "", item)
            item = item.strip()
            if re.fullmatch(NAME, item) and not item.endswith("_") and re.search(r"[A-Z]", item.split("::")[-1]):
                names.append(item)
        found.append((m.group("file"), names))
    return found


def _string(node, names: dict) -> str | None:
    """A string expression built from literals and module-level string names with ``+``, else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return names.get(node.id)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _string(node.left, names), _string(node.right, names)
        return None if left is None or right is None else left + right
    return None


def claim_sources() -> list[tuple[str, str]]:
    """(where, text) of every ``ge_source=`` string in spec/, evaluated from its literals and the
    module's string constants (read as text: the spec is not imported)."""
    trees = {path: ast.parse(path.read_text(encoding="utf-8"), str(path))
             for path in sorted((ROOT / "spec").rglob("*.py"))}
    names: dict[str, str] = {}   # module-level string constants of every spec module (GE_MEM, imported)
    for tree in trees.values():
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                value = _string(node.value, names)
                if value is not None:
                    names[node.targets[0].id] = value
    found = []
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.keyword) and node.arg == "ge_source":
                text = _string(node.value, names)
                assert text is not None, f"{path.relative_to(ROOT)}:{node.value.lineno}: ge_source is not a string"
                found.append((f"{path.relative_to(ROOT)}:{node.value.lineno}", text))
    return found


def test_claims_ge_sources_name_what_ge_defines(ge):
    sources = claim_sources()
    assert len(sources) > 40, len(sources)
    out = []
    for where, text in sources:
        for cited, names in source_citations(text):
            out += _unborne(where, cited, names, ge)
    assert not out, "claims' GE sources that GE's source does not bear out:\n" + "\n".join(out)


# In a comment, docstring or message: `file.cc Name`, `file.cc ``Name``, ``Other``` (names that look like
# GE's: CamelCase, kConstant, ALL_CAPS, Class::Method), and `file.cc TEST_F(Suite, case)`.
_CODE_NAME = r"(?:``?)?((?:\w+::)*(?:[A-Z][a-z]\w*|k[A-Z]\w*|[A-Z][A-Z0-9]*_[A-Z0-9_]+))(?:``?)?"
CODE_CITATION = re.compile(rf"(?<![\w/.])([\w/.]*\w\.(?:cc|cpp|h))(?:``?)?\s+{_CODE_NAME}"
                           rf"((?:\s*(?:,|/|\band\b)\s*{_CODE_NAME})*)")
CODE_CASE = re.compile(r"(?<![\w/.])([\w/.]*\w\.(?:cc|cpp|h))(?:``?)?\s+(?:``?)?TEST(?:_F)?\((\w+),\s*(\w+)\)")


def code_problems(text: str, ge: GeIndex) -> list[str]:
    """Why each GE citation in one comment or string of code fails."""
    text = " ".join(text.split())
    out = []
    for m in CODE_CASE.finditer(text):
        paths = ge.paths(m.group(1))
        if not any(f"{m.group(2)}.{m.group(3)}" in ge.cases[p] for p in paths):
            out.append(f"`{m.group(1)}` has no case {m.group(2)}.{m.group(3)}")
    for m in CODE_CITATION.finditer(text):
        cited = m.group(1)
        if ge.foreign(cited):
            continue
        paths = ge.paths(Path(cited).name if "..." in cited else cited)
        names = [m.group(2), *re.findall(_CODE_NAME, m.group(3) or "")]
        if not paths:
            out.append(f"`{cited}` is no file of GE {ge.commit[:9]}'s list")
        out += [f"`{cited}` does not define `{n}`" for n in names
                if paths and n not in ("TEST", "TEST_F") and not ge.defines(paths, n)]
    return out


def test_code_cites_functions_ge_defines(ge):
    """Comments, docstrings and messages that name a GE file and a function (or a ported case) name
    ones the file has."""
    out = []
    for path in _sources():
        source = path.read_text(encoding="utf-8")
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type in (tokenize.COMMENT, tokenize.STRING):
                out += [f"{path.relative_to(ROOT)}:{tok.start[0]}: {p}" for p in code_problems(tok.string, ge)]
    assert not out, "code citations that GE's source does not bear out:\n" + "\n".join(out)


@pytest.mark.parametrize("text, bad", [
    ("# GE: davinci_model.cc `ConstructZeroCopyIoActiveBaseAddrs`", False),
    ("(GE: block_mem_assigner.cc ``ReuseBlock``, ``AddZeroCopyLifeReuseBlock``)", False),
    ("GE: davinci_model.cc GenInputMemAllocations / GenOutputMemAllocations", False),
    ("block_mem_assigner_unittest.cc TEST_F(UtestBlockMemAssigner, AssignMemoryWithReuse)", False),
    ("block_mem_assigner_unittest.cc TEST_F(UtestBlockMemAssigner, AssignMemoryWithReusez)", True),
    ("(GE: mem_inplace.cc `GetSupportInplaceOutput`)", True),      # GraphUtils' (graph_utils.cc)
    ("(GE: davinci_model.cc InitWeightMemz)", True),
    ("as GE's block_mem_assigner.cc does", False),                 # a file alone
    ("XLA's xla/backends/cpu/alignment.h Align", False),           # another project's path
    ("compiler/graph/build/memory/no_such_assigner.cc Assign", True),
])
def test_code_citation_parsing(text, bad, ge):
    assert bool(code_problems(text, ge)) == bad, code_problems(text, ge)


def _docs() -> list[Path]:
    return sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]


@pytest.mark.parametrize("doc", _docs(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_docs_cite_functions_ge_defines(doc, ge):
    found = problems(doc.read_text(encoding="utf-8"), ge)
    assert not found, f"{doc.relative_to(ROOT)}: GE citations that GE's source does not bear out:\n" + "\n".join(found)


def test_the_two_ge_docs_cite_ge(ge):
    """memory-planning.md and runtime-v1.md cite GE by file and function throughout."""
    for name in ("memory-planning.md", "runtime-v1.md"):
        cited = [c for c in citations((ROOT / "docs" / name).read_text(encoding="utf-8")) if c[2]]
        assert len(cited) >= 10, (name, len(cited))


def test_the_list_is_a_real_snapshot(ge):
    """The list names its commit and holds the planner's and runtime v1's files with their functions."""
    assert re.fullmatch(r"[0-9a-f]{40}", ge.commit)
    assert ge.defines(ge.paths("block_mem_assigner.cc"), "BlockMemAssigner::ReuseBlocksByLifeTime")
    assert ge.defines(ge.paths("davinci_model.cc"), "DavinciModel::GenOutputMemAllocations")
    assert ge.defines(ge.paths("mem_assigner.h"), "MEM_ALIGN_SIZE")


@pytest.mark.parametrize("text", [
    "`block_mem_assigner.cc` `ReuseBlockz`",                      # a misspelt function
    "`block_mem_assigner.cc` `ReuseBlock`, `GenMemAllocations`",  # a function of another file
    "`block_mem_assigner.cpp` `ReuseBlock`",                      # no such file
    "`graph_mem_assigner.cc` `AssignZeroCopyMemory`/`Nope`",
    "GE's `DavinciModel::NoSuchMethod`",
    "GE's `EnsureOutputError`",                                   # zcspec's error, not GE's
    "`user_out_and_unrefresh_{in,outt}_checker.cc`",
])
def test_a_wrong_citation_is_caught(text, ge):
    assert problems(text, ge), text


@pytest.mark.parametrize("text", [
    "`block_mem_assigner.cc` `ReuseBlock`, `AddLifeReuseBlock` and `MemoryBlock::Resize`",
    "(`davinci_model.cc` `GenInputMemAllocations`/`GenOutputMemAllocations`)",
    "`mem_assigner.h` `MEM_ALIGN_SIZE`",
    "`user_out_and_unrefresh_{in,out}_checker.cc`",
    "GE's `GraphMemoryAssigner::ReAssignAtomicMemory`",
    "GE's `OptimizeStage2`, GE's `Identity` nodes",
    "TFLite's `arena_planner.cc` `IdentifyInPlaceTensors`",
])
def test_a_right_citation_passes(text, ge):
    assert not problems(text, ge), problems(text, ge)



def _source_problems(text: str, ge: GeIndex) -> list[str]:
    return [f"{one}: {n}" for cited, names in source_citations(text) for one in _expand(cited)
            for n in (names if ge.paths(one) else ["(no such file)"]) if not ge.defines(ge.paths(one), n)]


@pytest.mark.parametrize("text, bad", [
    ("runtime/v1/graph/load/model_manager/davinci_model.cc (CheckUserAndModelSize, CheckInputAndModelSize)",
     True),                                                                   # a function GE does not have
    ("compiler/graph/build/memory/block_mem_assigner.cc (ReleaseMemory, ref_count_, kMaxLifeTime for graph "
     "outputs)", False),                                                      # a member and prose are skipped
    ("compiler/graph/build/stream/stream_allocator.cc (InsertSyncEvents: an event on every edge)", False),
    ("runtime/v1/graph/load/model_manager/model_utils.cc ModelUtils::ValidateMemRange (offset + size)", False),
    ("runtime/v1/graph/load/model_manager/model_utils.cc ModelUtils::ValidateMemRangez", True),
    ("graph_mem_assigner.h (CleanMemInfo::size)", False),                     # a field, not a function
    ("runtime/v1/.../davinci_model.cc (NnExecutez)", True),
])
def test_claim_source_parsing(text, bad, ge):
    assert bool(_source_problems(text, ge)) == bad, _source_problems(text, ge)
