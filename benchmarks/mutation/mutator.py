"""Small mutations of impl/'s logic, found by walking each module's AST.

``sites(root)`` lists every mutation the operators below can make in impl/, in a fixed order
(files sorted, nodes in ``ast.walk`` order); ``sample(sites, n, seed)`` picks ``n`` of them with
``random.Random(seed)``, so a seed names one sample. A ``Mutation`` is a splice of the module's
source: the bytes of one node replaced by new text, leaving every other line, comment and line
number as it was, so a traceback from a mutant points at the mutated line.

Operators: ``compare`` (``<``/``<=``, ``>``/``>=``, ``==``/``!=``, ``is``/``is not``,
``in``/``not in``), ``boolop`` (``and``/``or``), ``arith`` (``+``/``-``), ``call`` (``any``/``all``,
``min``/``max``), ``off-by-one`` (an int constant k to k+1 and k-1), ``constant`` (True/False, a
float c to 2c), ``negate`` (the test of an if, while, conditional expression or comprehension
filter), ``drop`` (an expression statement, an augmented or attribute/item assignment, an assert,
a raise, a break or continue becomes ``pass``), ``return`` (``return x`` becomes ``return None``;
an early return, one not last in its function, becomes ``pass``). Module-level tables (the op
facts, the SoC profiles, the dtype sizes: a module-level assignment of more than a scalar constant)
get ``table-drop`` (an entry left out) and ``table-value`` (a number or flag in it changed), see
tables.py.

Left alone: modules named errors.py; docstrings and every string; whatever is inside f-strings,
annotations, decorators, ``raise`` statements, calls that build an exception (``...Error(...)``),
logging, printing and warnings; ``__all__``; ``__repr__``/``__str__``; ``if TYPE_CHECKING`` blocks.
"""
from __future__ import annotations

import ast
import fnmatch
import random
from collections import deque
from pathlib import Path

import attrs

from .tables import table_sites, table_value

SKIPPED_FILES = ("errors.py",)
_COMPARE_SWAP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
                 ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In}
_CALL_SWAP = {"any": "all", "all": "any", "min": "max", "max": "min"}
_QUIET_CALLS = {"print", "warn"}  # print(...), warnings.warn(...)
_QUIET_OWNERS = {"log", "logger", "logging", "LOG", "_log", "_logger", "warnings"}
_SKIPPED_FUNCTIONS = {"__repr__", "__str__"}


@attrs.frozen(order=True)
class Mutation:
    """One mutant: in ``path`` (relative to the repository root), the source bytes
    [``start``, ``end``) become ``after``. ``line`` is the 1-based line of ``start``."""

    path: str
    line: int
    start: int
    end: int
    operator: str
    before: str
    after: str
    detail: str = ""   # what a table-drop leaves out (its before and after are the whole container)

    @property
    def label(self) -> str:
        return f"{self.path}:{self.line}"

    def describe(self) -> str:
        if self.detail:
            return f"{self.operator}: {self.detail}"
        before, after = (" ".join(s.split()) for s in (self.before, self.after))
        return f"{self.operator}: {_clip(before)} -> {_clip(after)}"

    def apply(self, source: str) -> str:
        """The mutated module text; raises ValueError if ``source`` is not the text this
        mutation was found in (the bytes at [start, end) differ)."""
        data = source.encode("utf-8")
        if data[self.start:self.end].decode("utf-8") != self.before:
            raise ValueError(f"{self.label}: source changed since the mutation was sampled "
                             f"(expected {self.before!r} at bytes {self.start}-{self.end})")
        return (data[:self.start] + self.after.encode("utf-8") + data[self.end:]).decode("utf-8")

    def to_json(self) -> dict:
        return attrs.asdict(self)


def _clip(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[:width - 3] + "..."


def mutable_files(root: Path) -> list[Path]:
    """impl/'s modules, sorted, but errors.py (a module with no logic and no table has no site)."""
    return [p for p in sorted((Path(root) / "impl").rglob("*.py")) if p.name not in SKIPPED_FILES]


def sites(root: Path) -> list[Mutation]:
    """Every mutation of every mutable file under ``root``/impl, in a fixed order."""
    root = Path(root)
    found: list[Mutation] = []
    for path in mutable_files(root):
        found += file_sites(path.read_text(encoding="utf-8"), path.relative_to(root).as_posix())
    return found


def in_modules(all_sites: list[Mutation], patterns: list[str]) -> list[Mutation]:
    """The sites whose path matches one of the shell ``patterns`` (``impl/runtime/v1/acl.py``,
    ``impl/compiler/memory/packing/*``); all of them when there is none. Raises ValueError naming a
    pattern that matches no mutable module."""
    if not patterns:
        return list(all_sites)
    paths = sorted({m.path for m in all_sites})
    for pattern in patterns:
        if not any(fnmatch.fnmatchcase(p, pattern) for p in paths):
            raise ValueError(f"--module {pattern!r} matches none of the {len(paths)} mutable modules of impl/ "
                             "(a path from the repository root, shell wildcards allowed: impl/device/*.py)")
    return [m for m in all_sites if any(fnmatch.fnmatchcase(m.path, p) for p in patterns)]


def sample(all_sites: list[Mutation], n: int, seed: int, root: Path) -> list[Mutation]:
    """``n`` distinct mutations chosen by ``random.Random(seed)``, in file and line order: the
    first ``n`` of the seeded shuffle whose mutated module (read from ``root``) compiles."""
    if n < 1 or n > len(all_sites):
        raise ValueError(f"sample size n={n!r} must be between 1 and the {len(all_sites)} sites found")
    order = list(all_sites)
    random.Random(seed).shuffle(order)
    chosen: list[Mutation] = []
    for mutation in order:
        if len(chosen) == n:
            break
        if _compiles(mutation.apply((Path(root) / mutation.path).read_text(encoding="utf-8")), mutation.path):
            chosen.append(mutation)
    if len(chosen) < n:
        raise ValueError(f"only {len(chosen)} of the {len(all_sites)} sites give a module that compiles; "
                         f"sample size n={n!r} is too large")
    return sorted(chosen)


def file_sites(source: str, relpath: str) -> list[Mutation]:
    """The mutations of one module's ``source``; each one yields a module that differs from
    ``source`` (whether it compiles is checked when sampled: compiling every site is slow)."""
    tree = ast.parse(source, relpath)
    lines = source.encode("utf-8").splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    data = source.encode("utf-8")

    def span(node: ast.AST) -> tuple[int, int]:
        return offsets[node.lineno - 1] + node.col_offset, offsets[node.end_lineno - 1] + node.end_col_offset

    def segment(node: ast.AST) -> str:
        start, end = span(node)
        return data[start:end].decode("utf-8")

    out = []
    found = [(*c, "") for c in _candidates(tree)] + list(table_sites(tree, segment, _constant_mutations))
    for node, operator, replacement, detail in found:
        start, end = span(node)
        before = segment(node)
        after = replacement if isinstance(node, ast.stmt) else f"({replacement})"
        mutation = Mutation(relpath, node.lineno, start, end, operator, before, after, detail)
        if before != after:
            out.append(mutation)
    return out


def _compiles(source: str, relpath: str) -> bool:
    try:
        compile(source, relpath, "exec", dont_inherit=True)
    except SyntaxError:
        return False
    return True


def _candidates(tree: ast.Module):
    """(node, operator, replacement source) for every node worth mutating."""
    for node, parent in _visible_nodes(tree):
        yield from _expression_mutations(node)
        if isinstance(node, ast.stmt):
            yield from _statement_mutations(node, parent)


def _visible_nodes(tree: ast.Module):
    """(node, parent) for the nodes outside the regions the module docstring lists as left
    alone, breadth first. A raise statement is visible (it can be dropped), its contents not."""
    queue = deque((n, tree) for n in tree.body if not _module_data(n) and not _skipped(n))
    while queue:
        node, parent = queue.popleft()
        yield node, parent
        if not isinstance(node, ast.Raise):
            queue.extend((child, node) for child in _children(node))


def _children(node: ast.AST):
    for field, value in ast.iter_fields(node):
        if field in ("decorator_list", "annotation", "returns", "type_comment"):
            continue
        for child in value if isinstance(value, list) else [value]:
            if isinstance(child, ast.AST) and not _skipped(child):
                yield child


def _skipped(node: ast.AST) -> bool:
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in _SKIPPED_FUNCTIONS:
        return True
    if isinstance(node, ast.If) and _names(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
        return True
    if isinstance(node, ast.Expr) and (isinstance(node.value, ast.Constant) or _skipped(node.value)):
        return True  # a docstring or ``...``; a logging or printing statement
    return isinstance(node, ast.Call) and (_quiet_call(node) or _builds_exception(node))


def _module_data(node: ast.stmt) -> bool:
    """A module-level assignment of anything but a scalar constant (a table, a registry, a logger):
    not walked as logic; tables.py makes its sites."""
    return table_value(node) is not None or (isinstance(node, (ast.Assign, ast.AnnAssign)) and _is_all(node))


def _is_all(node: ast.stmt) -> bool:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets)


def _names(expr: ast.AST) -> str:
    """The dotted name of a Name/Attribute chain ('' for anything else)."""
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        owner = _names(expr.value)
        return f"{owner}.{expr.attr}" if owner else ""
    return ""


def _quiet_call(call: ast.Call) -> bool:
    name = _names(call.func)
    head, _, last = name.rpartition(".")
    return last in _QUIET_CALLS or head.split(".")[-1] in _QUIET_OWNERS


def _builds_exception(call: ast.Call) -> bool:
    last = _names(call.func).rpartition(".")[2]
    return last.endswith(("Error", "Exception", "Warning", "Refused", "Fault"))


def _expression_mutations(node: ast.AST):
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            swapped = _COMPARE_SWAP.get(type(op))
            if swapped:
                ops = [*node.ops[:i], swapped(), *node.ops[i + 1:]]
                yield node, "compare", ast.unparse(ast.Compare(node.left, ops, node.comparators))
    elif isinstance(node, ast.BoolOp):
        other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        yield node, "boolop", ast.unparse(ast.BoolOp(other, node.values))
    elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)) and not _stringy(node):
        other = ast.Sub() if isinstance(node.op, ast.Add) else ast.Add()
        yield node, "arith", ast.unparse(ast.BinOp(node.left, other, node.right))
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _CALL_SWAP:
        yield node, "call", ast.unparse(ast.Call(ast.Name(_CALL_SWAP[node.func.id]), node.args, node.keywords))
    elif isinstance(node, ast.Constant):
        yield from _constant_mutations(node)
    yield from _negations(node)


def _stringy(node: ast.BinOp) -> bool:
    """A + or - of a string or a container literal: the swap is a TypeError, not a logic change."""
    literal = (ast.JoinedStr, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp, ast.SetComp)
    return any(isinstance(side, literal) or (isinstance(side, ast.Constant) and isinstance(side.value, (str, bytes)))
               for side in (node.left, node.right))


def _constant_mutations(node: ast.Constant):
    value = node.value
    if isinstance(value, bool):
        yield node, "constant", repr(not value)
    elif isinstance(value, int):
        yield node, "off-by-one", repr(value + 1)
        yield node, "off-by-one", repr(value - 1)
    elif isinstance(value, float):
        yield node, "constant", repr(value * 2 if value else 1.0)


def _negations(node: ast.AST):
    tests = []
    if isinstance(node, (ast.If, ast.While, ast.IfExp)):
        tests = [node.test]
    elif isinstance(node, ast.comprehension):
        tests = list(node.ifs)
    for test in tests:
        yield test, "negate", f"not ({ast.unparse(test)})"


def _statement_mutations(node: ast.stmt, parent: ast.AST):
    droppable = (ast.Expr, ast.AugAssign, ast.Assert, ast.Raise, ast.Break, ast.Continue)
    if isinstance(node, droppable) or (isinstance(node, ast.Assign) and _stores_into_object(node)):
        yield node, "drop", "pass"
    if not isinstance(node, ast.Return):
        return
    if node.value is not None and not _is_none(node.value):
        yield node, "return", "return None"
    if not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
        yield node, "return", "pass"  # an early return: the code after it runs too


def _stores_into_object(node: ast.Assign) -> bool:
    return all(isinstance(t, (ast.Attribute, ast.Subscript)) for t in node.targets)


def _is_none(expr: ast.AST) -> bool:
    return isinstance(expr, ast.Constant) and expr.value is None
