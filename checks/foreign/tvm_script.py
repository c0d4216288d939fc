"""TVMScript as TVM prints it: its Relax functions as statements (no TVM needed).

TVM prints a module or a function as Python-shaped text (``mod.script()``). This module reads only
what a memory plan needs of it: each ``@R.function``'s body as a list of :class:`Stmt` (a binding
``x: T = expr``, a bare declaration ``x: T``, an expression statement, a ``return``, an ``if`` with
its two blocks), and the expression forms a plan needs (a call's parts, the variables an
expression names, ``R.shape``, ``R.dtype`` and integer constants). A statement continues over lines while a
bracket is open; comments and blank lines are dropped; ``with R.dataflow():`` is transparent and
``R.func_attr``, ``R.output`` and ``cls = Module`` (the printer's name for the module) say nothing
about memory. Anything else that is not straight-line Relax (``for``, ``while``, ``elif``, a
nested ``def``) is refused naming its line, as are unbalanced brackets, unterminated strings, tabs,
unexpected indentation and statements longer than the bounds below: a crafted file is bad input,
never a crash or a hang. TIR functions (``@T.prim_func``) are skipped.
"""
from __future__ import annotations

import re

import attrs

from zcspec.checks.errors import UsageError

MAX_STATEMENT_LINES = 256
MAX_STATEMENT_CHARS = 1 << 20
MAX_BYTES = 2**63 - 1
MAX_DEPTH = 64
_NAME = re.compile(r"[A-Za-z_][\w.]*")
_KEYWORDS = {"True", "False", "None", "and", "or", "not", "if", "else", "in", "is", "lambda"}
_DTYPE = re.compile(r"^(bool|int|uint|float|bfloat)(\d*)(?:_[a-z0-9]+)*(?:x(\d+))?$")
_INT = re.compile(r"^(?:R\.prim_value\(\s*)?(?:T\.u?int(?:32|64)\(\s*)?(\d+)(?:\s*\))*$")
_COMPOUND = re.compile(r"^(elif|else|for|while|def|class|try|except|finally|with|async|match)\b")


class TvmRelaxError(UsageError):
    """A printed Relax module this reader cannot take; the message names the file and the line."""


@attrs.frozen
class Stmt:
    line: int
    kind: str              # "bind", "decl", "expr", "if", "return"
    target: str = ""       # the bound variable
    expr: str = ""         # the value, the condition, the returned expression or the statement
    then: tuple["Stmt", ...] = ()
    orelse: tuple["Stmt", ...] = ()


@attrs.frozen
class _Line:
    number: int
    indent: int
    text: str


def _scan(text: str, depth: int, number: int) -> tuple[str, int]:
    """``text`` without its comment, and the bracket depth after it (starting from ``depth``)."""
    quote, i = "", 0
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif c == "#":
            return text[:i], depth
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth < 0:
                raise TvmRelaxError(f"line {number}: {c!r} closes a bracket that is not open")
        i += 1
    if quote:
        raise TvmRelaxError(f"line {number}: a string runs past the end of the line")
    return text, depth


def _logical_lines(lines: list[str]) -> list[_Line]:
    out: list[_Line] = []
    i = 0
    while i < len(lines):
        first, raw = i, lines[i]
        head = raw[: len(raw) - len(raw.lstrip())]
        if "\t" in head:
            raise TvmRelaxError(f"line {i + 1}: indented with a tab; TVM indents with spaces")
        text, depth = _scan(raw, 0, i + 1)
        while depth > 0 and i + 1 < len(lines) and i - first < MAX_STATEMENT_LINES and len(text) <= MAX_STATEMENT_CHARS:
            i += 1
            more, depth = _scan(lines[i], depth, i + 1)
            text = f"{text} {more.strip()}"
        if depth > 0 and i + 1 >= len(lines):
            raise TvmRelaxError(f"line {first + 1}: a bracket opened here is not closed within the file")
        if depth > 0 or len(text) > MAX_STATEMENT_CHARS:
            raise TvmRelaxError(f"line {first + 1}: a statement longer than {MAX_STATEMENT_LINES} lines or "
                                f"{MAX_STATEMENT_CHARS} characters")
        i += 1
        if text.strip():
            out.append(_Line(first + 1, len(head), text.strip()))
    return out


@attrs.frozen
class Function:
    name: str
    line: int                   # of its ``def``
    params: tuple[str, ...]
    body: tuple[Stmt, ...]


def functions(lines: list[str]) -> list[Function]:
    """Every ``@R.function`` in ``lines``, in order."""
    logical = _logical_lines(lines)
    out = []
    k = 0
    while k < len(logical):
        ln, k = logical[k], k + 1
        if not re.match(r"@R\.function\b", ln.text):
            continue
        while k < len(logical) and logical[k].text.startswith("@"):
            k += 1
        m = re.match(r"def ([A-Za-z_]\w*)\s*\(", logical[k].text) if k < len(logical) else None
        if m is None or not logical[k].text.endswith(":") or logical[k].indent != ln.indent:
            raise TvmRelaxError(f"line {ln.number}: @R.function is not followed by a 'def NAME(...):'")
        if k + 1 >= len(logical) or logical[k + 1].indent <= ln.indent:
            raise TvmRelaxError(f"line {logical[k].number}: function {m.group(1)!r} has no body")
        body, end = _block(logical, k + 1, logical[k + 1].indent, 0)
        out.append(Function(m.group(1), logical[k].number, _params(logical[k].text[m.end() - 1:]), tuple(body)))
        k = end
    return out


def _params(header: str) -> tuple[str, ...]:
    """The parameter names of ``(x: T, y: U) -> R:``."""
    cuts, close = [], None
    for i, c, depth in _outside_strings(header):
        if depth == 1 and c == ",":
            cuts.append(i)
        elif depth == 1 and c == ")":
            close = i
            break
    if close is None:
        return ()
    parts = [header[a + 1: b] for a, b in zip([0] + cuts, cuts + [close])]
    return tuple(m.group(1) for part in parts if (m := re.match(r"\s*\*{0,2}([A-Za-z_]\w*)", part)))


def _block(lines: list[_Line], i: int, indent: int, depth: int) -> tuple[list[Stmt], int]:
    """The statements of the block at ``indent`` starting at ``lines[i]``, and the index after it."""
    if depth > MAX_DEPTH:
        raise TvmRelaxError(f"line {lines[i].number}: blocks nest more than {MAX_DEPTH} deep")
    out: list[Stmt] = []
    while i < len(lines) and lines[i].indent >= indent:
        ln = lines[i]
        if ln.indent > indent:
            raise TvmRelaxError(f"line {ln.number}: unexpected indentation")
        if ln.text.startswith("if ") and ln.text.endswith(":"):
            then, i = _inner(lines, i, depth)
            orelse: list[Stmt] = []
            if i < len(lines) and lines[i].indent == indent and lines[i].text == "else:":
                orelse, i = _inner(lines, i, depth)
            out.append(Stmt(ln.number, "if", expr=ln.text[3:-1].strip(), then=tuple(then), orelse=tuple(orelse)))
            continue
        if re.fullmatch(r"with R\.dataflow\(\s*\):", ln.text):
            inner, i = _inner(lines, i, depth)
            out += inner
            continue
        if _COMPOUND.match(ln.text) or ln.text.endswith(":"):
            raise TvmRelaxError(f"line {ln.number}: {ln.text.split()[0]!r} is not straight-line Relax this reader "
                                "reads (only if/else and with R.dataflow())")
        i += 1
        stmt = _simple(ln)
        if stmt is not None:
            out.append(stmt)
    return out, i


def _inner(lines: list[_Line], i: int, depth: int) -> tuple[list[Stmt], int]:
    """The block under the compound statement ``lines[i]``."""
    if i + 1 >= len(lines) or lines[i + 1].indent <= lines[i].indent:
        raise TvmRelaxError(f"line {lines[i].number}: {lines[i].text!r} has no indented block")
    return _block(lines, i + 1, lines[i + 1].indent, depth + 1)


def _simple(ln: _Line) -> Stmt | None:
    text = ln.text
    if text == "pass" or re.match(r"R\.(func_attr|output)\s*\(", text) or re.fullmatch(r"cls = \w+", text):
        return None
    if text == "return" or text.startswith("return "):
        return Stmt(ln.number, "return", expr=text[6:].strip())
    eq = _assignment(text)
    if eq is None:
        m = re.fullmatch(r"([A-Za-z_]\w*)\s*:\s*\S.*", text)
        return Stmt(ln.number, "decl", target=m.group(1)) if m else Stmt(ln.number, "expr", expr=text)
    m = re.fullmatch(r"([A-Za-z_]\w*)(\s*:.*)?", text[:eq].strip())
    if m is None:
        raise TvmRelaxError(f"line {ln.number}: binds {text[:eq].strip()!r}; this reader reads one variable per binding")
    value = text[eq + 1:].strip()
    if not value:
        raise TvmRelaxError(f"line {ln.number}: binds {m.group(1)!r} to nothing")
    return Stmt(ln.number, "bind", target=m.group(1), expr=value)


def _outside_strings(text: str):
    """(index, character, bracket depth before it) of each character of ``text`` outside strings."""
    depth, quote, i = 0, "", 0
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        else:
            yield i, c, depth
            depth += (c in "([{") - (c in ")]}")
        i += 1


def _assignment(text: str) -> int | None:
    """The index of the binding's ``=``: outside brackets and strings, not part of ``==``, ``<=``, ..."""
    for i, c, depth in _outside_strings(text):
        if depth == 0 and c == "=" and text[i - 1: i] not in ("=", "!", "<", ">") and text[i + 1: i + 2] != "=":
            return i
    return None


def call_parts(expr: str) -> tuple[str, list[str]] | None:
    """(callee, [argument text]) when ``expr`` is exactly one call ``callee(args)``, else None."""
    expr = expr.strip()
    m = re.match(r"([A-Za-z_][\w.]*)\s*\(", expr)
    if m is None or not expr.endswith(")"):
        return None
    inner = expr[m.end() - 1:]            # "(args)"
    cuts = []
    for i, c, depth in _outside_strings(inner):
        if depth == 0 and i > 0:
            return None                    # the call's bracket closed before the end: not one call
        if depth == 1 and c == ",":
            cuts.append(i)
    parts = [inner[a + 1: b].strip() for a, b in zip([0] + cuts, cuts + [len(inner) - 1])]
    return m.group(1), [p for p in parts if p]


def names_in(expr: str) -> list[str]:
    """The variables ``expr`` names, in order: identifiers outside strings that are not attributes
    (``R.shape``), callees (``add(``) or keywords of a call (``dtype=``)."""
    text = re.sub(r"\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'", '""', expr)
    out = []
    for m in _NAME.finditer(text):
        name, rest = m.group(0), text[m.end():].lstrip()
        if "." in name or name in _KEYWORDS or text[m.start() - 1: m.start()] == ".":
            continue
        if rest.startswith("(") or (rest.startswith("=") and not rest.startswith("==")):
            continue
        out.append(name)
    return out


def shape(expr: str, line: int, what: str) -> list[int]:
    """The constant dims of ``R.shape([d0, d1, ...])``."""
    call = call_parts(expr)
    if call is None or call[0] != "R.shape" or len(call[1]) != 1 or not call[1][0].startswith("["):
        raise TvmRelaxError(f"line {line}: {what} is {expr!r}, not R.shape([...])")
    inner = call[1][0][1:-1].strip()
    dims = [d.strip() for d in inner.split(",") if d.strip()] if inner else []
    out = []
    for d in dims:
        m = _INT.match(d)
        if m is None:
            raise TvmRelaxError(f"line {line}: {what} has dimension {d!r}, not a constant: symbolic shapes are "
                                "not read")
        out.append(int(m.group(1)))
    return out


def nbytes(shape_expr: str, dtype_expr: str, line: int) -> int:
    dims = shape(shape_expr, line, "the shape")
    call = call_parts(dtype_expr)
    name = call[1][0].strip("\"'") if call and call[0] == "R.dtype" and len(call[1]) == 1 else dtype_expr
    m = _DTYPE.match(name)
    if m is None or (m.group(1) != "bool" and not m.group(2)):
        raise TvmRelaxError(f"line {line}: dtype {dtype_expr!r} is not one this reader knows")
    bits = 8 if m.group(1) == "bool" else int(m.group(2))
    total = (bits + 7) // 8 * int(m.group(3) or 1)   # TVM's DataType::bytes() times lanes
    for d in dims:
        total *= d
        if total > MAX_BYTES:
            raise TvmRelaxError(f"line {line}: {shape_expr} of {name} is more than {MAX_BYTES} bytes")
    return total


def constant(expr: str, line: int, what: str) -> int:
    m = _INT.match(expr.strip())
    if m is None:
        raise TvmRelaxError(f"line {line}: {what} is {expr!r}, not a constant")
    return int(m.group(1))


def tuple_items(expr: str) -> list[str] | None:
    """The items of ``(a, b)`` or ``R.tuple(a, b)``, else None."""
    call = call_parts(expr)
    if call and call[0] == "R.tuple":
        return call[1]
    call = call_parts("f" + expr) if expr.startswith("(") else None
    return call[1] if call else None
