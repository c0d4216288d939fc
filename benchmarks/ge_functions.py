"""List GE's source files and the functions defined in them, for tests/data/ge_functions.json.

zcspec's docs and code cite GE by file and function (`block_mem_assigner.cc` `ReuseBlocksByLifeTime`).
tests/test_code_cites_ge.py checks those citations against this list, so a citation of a function
that GE's file does not define (a typo, a function renamed or moved) fails without a GE checkout.

    python benchmarks/ge_functions.py GE_GIT_DIR [--legacy GRAPHENGINE_GIT_DIR] [--cited-from CHECKOUT ...]

(the committed list: ``GE_GIT_DIR`` a mirror of mirror-cann/ge at f513b8f2a, ``--legacy`` one of
mindspore-ai/graphengine, ``--cited-from`` a second checkout whose citations were not merged yet).

GE_GIT_DIR is a git directory (bare or not) of GE's repository (github mirror-cann/ge);
``--commit`` picks the snapshot (default HEAD). The list holds the files under the folders in
FOLDERS plus every GE file the project cites by name (a file name ending in .cc, .cpp or .h in
docs/, README.md, tests/ or a .py file of api/ impl/ spec/ checks/ tests/ benchmarks/ that names a
file of the snapshot, by base name or by path suffix; a base name more than AMBIGUOUS files share,
such as main.cc, is no citation). ``top_folders`` are GE's top folders: a cited path starting
elsewhere is another project's. ``--legacy`` adds the files of the older
repository (github mindspore-ai/graphengine, branch r1.11 by default, tree ``910/ge``) that the
project cites and that the new snapshot no longer has.

Per file: ``functions``, the names it declares or defines with a parameter list at namespace or
class scope, grouped by class (``{"": [free functions], "Class": [methods]}``; a method defined
out of its class in a .cc is listed under its class), ``types`` (classes, structs, enums),
``constants`` (``kName`` and ``ALL_CAPS`` names it defines, its macros and enumerators) and, for a
unit-test file, ``cases`` (``Suite.case`` of each ``TEST``/``TEST_F``). Kernels and passes
registered by name (``REGISTER_KERNEL(AllocMemory)``) count as functions of their file.

The reader is a scanner, not a C++ parser: it strips comments, strings and preprocessor lines,
tracks braces (namespace, class, enum, other) and takes, in each statement at namespace or class
scope, the name before the first parenthesis. It lists a few names that are not functions
(function-like macros invoked at file scope) and skips operator overloads and lambdas; against
Universal Ctags 5.9 on block_mem_assigner.{h,cc}, graph_mem_assigner.cc and davinci_model.{h,cc}
it missed no other function.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "tests" / "data" / "ge_functions.json"

# The folders listed whole (mirror-cann/ge's layout): the static planner, the graph passes, the
# memory-layout conflict optimizer, runtime v1's model manager and hybrid executor, runtime v2's
# lowering passes and memory kernels. Other files are listed when the project cites them.
FOLDERS = (
    "compiler/graph/build/memory/",
    "compiler/graph/passes/",
    "compiler/graph/optimize/mem_layout_conflict_optimize/",
    "runtime/v1/graph/load/model_manager/",
    "runtime/v1/hybrid/",
    "runtime/v2/lowering/pass/",
    "runtime/v2/kernel/memory/",
)
# Files the project names by their functions only (``GraphManager::OptimizeStage2``).
EXTRA_FILES = ("compiler/graph/manager/graph_manager.cc",)
# A cited base name that names more files than this is no citation of one file (main.cc).
AMBIGUOUS = 3
SOURCE = re.compile(r"\.(?:cc|cpp|h|hpp)$")
CITED = re.compile(r"(?<![\w./-])([\w./-]*\w\.(?:cc|cpp|h))(?![\w])")
KEYWORDS = {
    "if", "for", "while", "switch", "return", "sizeof", "decltype", "alignas", "alignof", "static_assert",
    "__attribute__", "catch", "throw", "noexcept", "new", "delete", "typeid", "defined", "template",
    "operator", "requires", "explicit",
}
TEST_MACROS = {"TEST", "TEST_F", "TEST_P", "TYPED_TEST"}


def strip_source(text: str) -> tuple[str, list[str]]:
    """``text`` without comments, string/char literals and preprocessor lines; and its #define names."""
    macros = []
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#" or (line_start and c in " \t" and text[i:].lstrip(" \t").startswith("#")):
            j = i
            while True:   # a preprocessor line, with its continuations
                k = text.find("\n", j)
                k = n if k < 0 else k
                if text[j:k].rstrip().endswith("\\") and k < n:
                    j = k + 1
                    continue
                break
            m = re.match(r"\s*#\s*define\s+(\w+)", text[i:k])
            if m and not re.search(r"_H_?$", m.group(1)):   # not an include guard
                macros.append(m.group(1))
            out.append("\n")
            i = k + 1
            line_start = True
            continue
        if c in " \t":
            out.append(c)
            i += 1
            continue
        line_start = c == "\n"
        if text.startswith("//", i):
            k = text.find("\n", i)
            i = n if k < 0 else k
            continue
        if text.startswith("/*", i):
            k = text.find("*/", i + 2)
            i = n if k < 0 else k + 2
            out.append(" ")
            continue
        if c == "R" and text.startswith('R"', i):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if m:
                end = text.find(")" + m.group(1) + '"', i)
                i = n if end < 0 else end + len(m.group(1)) + 2
                out.append('""')
                continue
        if c in "\"'" and not (c == "'" and i > 0 and text[i - 1].isalnum()):   # 1'000 digit separators
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
            continue
        out.append(c)
        i += 1
    return "".join(out), macros


def _balanced_paren_end(text: str, start: int) -> int:
    depth = 0
    for k in range(start, len(text)):
        if text[k] == "(":
            depth += 1
        elif text[k] == ")":
            depth -= 1
            if depth == 0:
                return k
    return len(text)


NAME_BEFORE_PAREN = re.compile(r"((?:~?\w+(?:\s*<[^<>;{}()]*(?:<[^<>;{}()]*>[^<>;{}()]*)*>)?\s*::\s*)*~?\w+)\s*$")


def _declared_name(head: str) -> str | None:
    """The name a statement at namespace/class scope declares with a parameter list, if any."""
    head = re.sub(r"\btemplate\s*<[^;{}]*?>\s*(?=\w)", "", head)
    while True:   # template argument lists, innermost first (they may hold a function type's parentheses)
        shorter = re.sub(r"(\w)\s*<[^<>;{}]*>", r"\1", head)
        if shorter == head:
            break
        head = shorter
    for k, ch in enumerate(head):
        if ch == "(":
            before = head[:k]
            if "=" in re.sub(r"operator\s*\S+|<[^<>]*>", "", before):
                return None   # a variable initialised by a call
            m = NAME_BEFORE_PAREN.search(before)
            if not m:
                return None
            name = re.sub(r"<[^<>]*(?:<[^<>]*>[^<>]*)*>", "", m.group(1))
            name = re.sub(r"\s+", "", name)
            if name.split("::")[-1].lstrip("~") in KEYWORDS or name[0].isdigit():
                return None
            if re.match(r"\(\s*(?:\"\"|\{|[0-9])", head[k:]):
                return "=" + name   # a variable constructed from a literal: std::string kName("...")
            return name
        if ch in "=;":
            return None
    return None


def scan(text: str) -> dict:
    """The functions, constants and test cases a C++ source defines (see the module doc)."""
    code, macros = strip_source(text)
    functions: set[str] = set()
    constants: set[str] = set(macros)
    cases: set[str] = set()
    types: set[str] = set()
    stack: list[tuple[str, str]] = []   # (kind, class name) per open brace: ns, class, enum, body
    head_start = 0
    i, n = 0, len(code)
    while i < n:
        ch = code[i]
        if ch == "(" and all(kind in ("ns", "class") for kind, _ in stack):
            # a parameter list: skip it whole, so braces and semicolons inside are not statements
            i = _balanced_paren_end(code, i) + 1
            continue
        if ch in "{;}":
            head = code[head_start:i]
            scope_ok = all(kind in ("ns", "class") for kind, _ in stack)
            in_enum = bool(stack) and stack[-1][0] == "enum"
            if in_enum and ch in "};":
                constants.update(re.findall(r"(?:^|,)\s*([A-Za-z_]\w*)\s*(?==|,|$)", head))
            if scope_ok and head.strip():
                _record(head, ch, stack, functions, constants, cases)
            if ch == "{":
                stack.append(_classify(head, scope_ok))
                if stack[-1][0] in ("class", "enum") and stack[-1][1]:
                    types.add("::".join(c for kind, c in stack if kind == "class"))
            elif ch == "}":
                if stack:
                    stack.pop()
            head_start = i + 1
        elif ch == "," and stack and stack[-1][0] == "enum":
            constants.update(re.findall(r"^\s*([A-Za-z_]\w*)\s*(?:=.*)?$", code[head_start:i], re.S))
            head_start = i + 1
        i += 1
    return {"functions": sorted(functions), "types": sorted(types), "constants": sorted(constants),
            "cases": sorted(cases)}


def _classify(head: str, scope_ok: bool) -> tuple[str, str]:
    if not scope_ok:
        return ("body", "")
    h = head.strip()
    if re.search(r"\bnamespace\b[^()=]*$", h) or re.fullmatch(r'extern\s*""', h):
        return ("ns", "")
    if re.search(r"\benum\b", h) and "(" not in h:
        m = re.search(r"\benum\s+(?:class\s+|struct\s+)?(\w+)", h)
        return ("enum", m.group(1) if m else "")
    m = re.search(r"\b(?:class|struct|union)\s+(?:\w+\s+)*?(\w+)\s*(?:final\s*)?(?::[^(){};]*)?$", h)
    if m and "=" not in h:
        return ("class", m.group(1))
    return ("body", "")


def _record(head, terminator, stack, functions, constants, cases) -> None:
    h = " ".join(head.split())
    if h.startswith(("using ", "typedef ", "friend class", "friend struct")):
        return
    m = re.match(r"REGISTER_\w+\s*\(\s*(\w+)\s*\)", h)
    if m:   # a kernel or pass registered under a name (REGISTER_KERNEL(AllocMemory)): GE's docs call it so
        functions.add(m.group(1))
        return
    m = re.match(r"(TEST|TEST_F|TEST_P|TYPED_TEST)\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)", h)
    if m:
        cases.add(f"{m.group(2)}.{m.group(3)}")
        return
    name = _declared_name(h)
    if name and name.startswith("="):
        if re.fullmatch(r"k[A-Z]\w*|[A-Z][A-Z0-9]*_[A-Z0-9_]+", name[1:]):
            constants.add(name[1:])
        return
    if name:
        classes = [c for kind, c in stack if kind == "class"]
        if classes and "::" not in name:
            name = f"{classes[-1]}::{name}"
        functions.add(name)
        return
    for c in re.findall(r"\b(k[A-Z]\w*|[A-Z][A-Z0-9]*_[A-Z0-9_]+)\s*(?:=|\{|\[|$)", h):
        constants.add(c)


def _git(git_dir: str, *args: str) -> str:
    return subprocess.run(["git", f"--git-dir={git_dir}", *args], check=True, capture_output=True,
                          text=True, errors="replace").stdout


def cited_names(roots=(REPO,)) -> set[str]:
    """Every file name ending in .cc/.cpp/.h that the project's docs and Python files mention
    (in each checkout of ``roots``)."""
    texts = []
    for root in roots:
        texts += [p for p in (root / "docs").rglob("*.md")] + [root / "README.md"]
        texts += (root / "tests").rglob("*.md")
        for top in ("api", "impl", "spec", "checks", "tests", "benchmarks"):
            texts += (root / top).rglob("*.py")
    names = set()
    for path in texts:
        names.update(m.group(1).lstrip("./") for m in CITED.finditer(path.read_text(encoding="utf-8")))
    return names


def _matches(path: str, cited: set[str]) -> bool:
    return any(path == c or path.endswith("/" + c) for c in cited)


def _specific(cited: set[str], paths: list[str]) -> set[str]:
    """The cited names that name at most AMBIGUOUS files of the snapshot."""
    return {c for c in cited if sum(p == c or p.endswith("/" + c) for p in paths) <= AMBIGUOUS}


def _by_class(names: list[str]) -> dict[str, list[str]]:
    """``["A::f", "A::g", "h"]`` -> ``{"": ["h"], "A": ["f", "g"]}``: the class prefix written once."""
    grouped: dict[str, list[str]] = {}
    for name in names:
        cls, _, short = name.rpartition("::")
        grouped.setdefault(cls, []).append(short)
    return {cls: sorted(grouped[cls]) for cls in sorted(grouped)}


def collect(git_dir: str, commit: str, folders, cited: set[str], prefix: str = "") -> dict:
    paths = [p for p in _git(git_dir, "ls-tree", "-r", "--name-only", commit).splitlines()
             if SOURCE.search(p) and (not prefix or p.startswith(prefix))]
    cited = _specific(cited, paths)
    keep = [p for p in paths if any(p.startswith(prefix + f) for f in folders) or _matches(p, cited)]
    files = {}
    for path in sorted(keep):
        scanned = scan(_git(git_dir, "show", f"{commit}:{path}"))
        scanned["functions"] = _by_class(scanned["functions"])
        files[path] = {key: value for key, value in scanned.items() if value}
    return files


def _dump(data: dict) -> str:
    """JSON with one line per file, so a regeneration's diff shows which files changed."""
    def files(block: dict, indent: str) -> str:
        rows = [f"{indent}  {json.dumps(path)}: {json.dumps(entry, separators=(',', ':'))}"
                for path, entry in block.items()]
        return "{\n" + ",\n".join(rows) + "\n" + indent + "}"
    head = {k: v for k, v in data.items() if k not in ("files", "legacy")}
    lines = [f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in head.items()]
    lines.append(f'  "files": {files(data["files"], "  ")}')
    if "legacy" in data:
        legacy = data["legacy"]
        inner = [f"    {json.dumps(k)}: {json.dumps(v)}" for k, v in legacy.items() if k != "files"]
        inner.append(f'    "files": {files(legacy["files"], "    ")}')
        lines.append('  "legacy": {\n' + ",\n".join(inner) + "\n  }")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ge", help="git directory of github mirror-cann/ge")
    parser.add_argument("--commit", default="HEAD")
    parser.add_argument("--legacy", help="git directory of github mindspore-ai/graphengine")
    parser.add_argument("--legacy-ref", default="r1.11")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--cited-from", type=Path, nargs="*", default=[],
                        help="other checkouts of the project whose citations the list must cover too")
    args = parser.parse_args(argv)
    commit = _git(args.ge, "rev-parse", args.commit).strip()
    cited = cited_names((REPO, *args.cited_from))
    files = collect(args.ge, commit, FOLDERS, cited | set(EXTRA_FILES))
    tops = sorted({p.split("/", 1)[0] for p in _git(args.ge, "ls-tree", "-d", "--name-only", commit).splitlines()})
    data = {
        "about": "GE's files and the functions, constants and unit-test cases each defines; "
                 "written by benchmarks/ge_functions.py, read by tests/test_code_cites_ge.py",
        "repository": "github.com/mirror-cann/ge",
        "commit": commit,
        "folders": list(FOLDERS),
        "top_folders": tops,
        "files": files,
    }
    if args.legacy:
        legacy_commit = _git(args.legacy, "rev-parse", args.legacy_ref).strip()
        have = {Path(p).name for p in _git(args.ge, "ls-tree", "-r", "--name-only", commit).splitlines()}
        wanted = {c for c in cited if Path(c).name not in have}   # files the new snapshot no longer has
        data["legacy"] = {
            "repository": "github.com/mindspore-ai/graphengine",
            "ref": args.legacy_ref,
            "commit": legacy_commit,
            "files": collect(args.legacy, legacy_commit, (), wanted, prefix="910/ge/"),
        }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(_dump(data), encoding="utf-8")
    count = len(files) + len(data.get("legacy", {}).get("files", {}))
    print(f"{args.out.relative_to(REPO) if args.out.is_relative_to(REPO) else args.out}: {count} files "
          f"from {commit[:12]}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
