"""Small TVM Relax programs drawn by Hypothesis, as data rendered to TVMScript and NumPy: what the TVM campaign runs.

A program is a shape (rows, cols) and a list of steps over one running float32 tensor ``h``,
starting at the input ``x``. Forms:

- ``unary`` (op): ``h = op(h)``, an element-wise kernel;
- ``affine`` (k, b): ``h = h * k + b``, two kernels (the product is an intermediate);
- ``matmul`` (k): ``h = h @ W``, W a constant (cols, cols) matrix ``eye * k + 0.01`` (``R.const``);
- ``flatten`` (op): ``h`` reshaped to one dimension, ``op`` on that, reshaped back: views of their
  operand's storage inside a dataflow block;
- ``cast``: ``h = R.match_cast(h, R.Tensor((rows, cols), "float32"))``, an alias to a static shape;
- ``mix`` (op): ``h = h + op(x)``: a second tensor made while ``h`` lives;
- ``keep``: ``h`` is an extra output (it lives to the end);
- ``if`` (then, else): ``if c_i:`` on a scalar bool input of its own, each branch a chain of one to
  three ops on ``h`` (op names, or ``reshape``: flatten and back, two copies outside a dataflow
  block) and the branches' results joined in one variable.

Straight runs of steps are one ``with R.dataflow():`` block each; an ``if`` stands between blocks
(Relax has no control flow in a dataflow block). Each ``if`` has its own condition, so every
execution path through the ifs is one the program can take and one set of inputs runs it
(:meth:`RelaxProgram.inputs`). :meth:`RelaxProgram.source` is a Python file that defines
``Module`` (an ``IRModule`` with a Relax ``main(x, c0, c1, ...)``); :meth:`RelaxProgram.reference`
computes the same outputs in NumPy, from the steps and not from the source, so a rendering slip
shows as a difference rather than hiding in both. :func:`relax_programs` draws them by
composition, so Hypothesis shrinks a program step by step and a branch op by op.
"""
from __future__ import annotations

import itertools

import attrs
import numpy as np
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from zcspec.checks.foreign.step_programs import Step, StepProgram

UNARY = {"sin": np.sin, "cos": np.cos, "tanh": np.tanh, "negative": np.negative, "abs": np.abs,
         "sigmoid": lambda v: np.float32(1) / (np.float32(1) + np.exp(-v))}
BRANCH_OPS = (*UNARY, "reshape")
FORMS = ("unary", "affine", "matmul", "flatten", "cast", "mix", "keep", "if")


@attrs.frozen
class RelaxProgram(StepProgram):

    @property
    def conditions(self) -> int:
        return sum(s.form == "if" for s in self.steps)

    @classmethod
    def from_data(cls, d: dict) -> "RelaxProgram":
        def step(form, args):
            return Step(str(form), tuple(tuple(a) if isinstance(a, list) else a for a in args))
        return cls(int(d["rows"]), int(d["cols"]), tuple(step(f, a) for f, a in d["steps"]))

    def inputs(self) -> list[tuple[str, np.ndarray, tuple[bool, ...]]]:
        """(label, x, conditions) for every choice at the ifs: each execution path once."""
        n = self.rows * self.cols
        x = np.linspace(-0.9, 1.1, n, dtype="float32").reshape(self.rows, self.cols)
        out = []
        for conds in itertools.product((True, False), repeat=self.conditions):
            label = " ".join(f"c{i}={c}" for i, c in enumerate(conds)) or "x"
            out.append((label, x, conds))
        return out

    def matrix(self, k: float) -> np.ndarray:
        return (np.eye(self.cols, dtype="float32") * np.float32(k) + np.float32(0.01)).astype("float32")

    def reference(self, x: np.ndarray, conds: tuple[bool, ...]) -> list[np.ndarray]:
        """The outputs (``h``, then each kept tensor) in NumPy float32."""
        h, kept, ifs = x, [], iter(conds)
        for s in self.steps:
            a = s.args
            if s.form in ("unary", "flatten"):
                h = UNARY[a[0]](h)
            elif s.form == "affine":
                h = h * np.float32(a[0]) + np.float32(a[1])
            elif s.form == "matmul":
                h = h @ self.matrix(a[0])
            elif s.form == "mix":
                h = h + UNARY[a[0]](x)
            elif s.form == "keep":
                kept.append(h)
            elif s.form == "if":
                for op in a[0] if next(ifs) else a[1]:
                    h = h if op == "reshape" else UNARY[op](h)
            elif s.form != "cast":
                raise ValueError(f"unknown step form {s.form!r}")
        return [h, *kept]

    def source(self) -> str:
        return _Renderer(self).source()


class _Renderer:
    """The program as TVMScript: fresh variable names, dataflow blocks between the ifs."""

    def __init__(self, program: RelaxProgram):
        self.p, self.names = program, itertools.count()
        self.h, self.kept, self.body = "x", [], []
        self.ifs = itertools.count()
        self.block: list[str] = []          # bindings of the open dataflow block
        self.bound: list[str] = []          # the variables it binds
        self.constants: list[str] = []

    def fresh(self, prefix: str = "v") -> str:
        return f"{prefix}{next(self.names)}"

    def bind(self, lines: list[str], value: str, prefix: str = "v") -> str:
        name = self.fresh(prefix)
        lines.append(f"{name} = {value}")
        if lines is self.block:
            self.bound.append(name)
        return name

    def source(self) -> str:
        for i, s in enumerate(self.p.steps):
            self.step(s, i)
        self.close_block()
        r, c = self.p.rows, self.p.cols
        params = [f'x: R.Tensor(({r}, {c}), "float32")'] + [f'c{i}: R.Tensor((), "bool")'
                                                            for i in range(self.p.conditions)]
        result = f"({', '.join([self.h, *self.kept])})" if self.kept else self.h
        runs = "; ".join(label for label, _, _ in self.p.inputs())
        constants = [*self.constants, ""] if self.constants else []
        return "\n".join(["import numpy as np", "from tvm.script import ir as I, relax as R", "", *constants,
                          "", "@I.ir_module", "class Module:", "    @R.function",
                          f"    def main({', '.join(params)}):",
                          *("        " + line for line in self.body), f"        return {result}", "", "",
                          f"# inputs: x = np.linspace(-0.9, 1.1, {r * c}, dtype='float32').reshape({r}, {c}); "
                          f"runs: {runs}"]) + "\n"

    def close_block(self) -> None:
        if not self.block:
            return
        outputs = [v for v in dict.fromkeys([self.h, *self.kept]) if v in self.bound]
        self.body += ["with R.dataflow():", *("    " + line for line in self.block),
                      f"    R.output({', '.join(outputs)})"]
        self.block, self.bound = [], []

    def step(self, s: Step, index: int) -> None:
        a, b, r, c = s.args, self.block, self.p.rows, self.p.cols
        if s.form == "unary":
            self.h = self.bind(b, f"R.{a[0]}({self.h})")
        elif s.form == "affine":
            scaled = self.bind(b, f'R.multiply({self.h}, R.const({a[0]!r}, "float32"))')
            self.h = self.bind(b, f'R.add({scaled}, R.const({a[1]!r}, "float32"))')
        elif s.form == "matmul":
            self.constants.append(f"W{index} = (np.eye({c}, dtype='float32') * np.float32({a[0]!r}) "
                                  f"+ np.float32(0.01)).astype('float32')")
            self.h = self.bind(b, f"R.matmul({self.h}, R.const(W{index}))")
        elif s.form == "flatten":
            flat = self.bind(b, f"R.reshape({self.h}, R.shape([{r * c}]))", "f")
            done = self.bind(b, f"R.{a[0]}({flat})")
            self.h = self.bind(b, f"R.reshape({done}, R.shape([{r}, {c}]))")
        elif s.form == "cast":
            self.h = self.bind(b, f'R.match_cast({self.h}, R.Tensor(({r}, {c}), "float32"))', "m")
        elif s.form == "mix":
            other = self.bind(b, f"R.{a[0]}(x)", "t")
            self.h = self.bind(b, f"R.add({self.h}, {other})")
        elif s.form == "keep":
            self.kept.append(self.h)
        elif s.form == "if":
            self.branch(a)
        else:
            raise ValueError(f"unknown step form {s.form!r}")

    def branch(self, args) -> None:
        self.close_block()
        join = self.fresh("j")
        self.body.append(f"if c{next(self.ifs)}:")
        for side, ops in ((None, args[0]), ("else:", args[1])):
            if side:
                self.body.append(side)
            lines, h = [], self.h
            for op in ops:
                if op == "reshape":
                    flat = self.bind(lines, f"R.reshape({h}, R.shape([{self.p.rows * self.p.cols}]))", "f")
                    h = self.bind(lines, f"R.reshape({flat}, R.shape([{self.p.rows}, {self.p.cols}]))")
                else:
                    h = self.bind(lines, f"R.{op}({h})")
            self.body += ["    " + line for line in lines + [f"{join} = {h}"]]
        self.h = join


@st.composite
def _steps(draw) -> Step:
    form = draw(st.sampled_from(FORMS))
    unary = st.sampled_from(tuple(UNARY))
    if form in ("unary", "flatten", "mix"):
        return Step(form, (draw(unary),))
    if form == "affine":
        return Step(form, (draw(st.sampled_from((0.5, 2.0, -1.0))), draw(st.sampled_from((0.0, 0.25, -1.0)))))
    if form == "matmul":
        return Step(form, (draw(st.sampled_from((0.5, 1.0, 2.0))),))
    if form == "if":
        ops = st.lists(st.sampled_from(BRANCH_OPS), min_size=1, max_size=3).map(tuple)
        return Step(form, (draw(ops), draw(ops)))
    return Step(form)


@st.composite
def _programs(draw, max_steps: int, max_ifs: int) -> RelaxProgram:
    rows, cols = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    steps = draw(st.lists(_steps(), min_size=1, max_size=max_steps)
                 .filter(lambda ss: sum(s.form == "if" for s in ss) <= max_ifs))
    return RelaxProgram(rows, cols, tuple(steps))


def relax_programs(*, max_steps: int = 6, max_ifs: int = 3) -> st.SearchStrategy[RelaxProgram]:
    """Programs of one to ``max_steps`` steps, at most ``max_ifs`` of them ifs (each if doubles the
    runs: 2**max_ifs inputs at most)."""
    if not isinstance(max_steps, int) or max_steps < 1:
        raise InvalidArgument(f"relax_programs(max_steps={max_steps!r}): must be an int of at least 1")
    if not isinstance(max_ifs, int) or not 0 <= max_ifs <= 5:
        raise InvalidArgument(f"relax_programs(max_ifs={max_ifs!r}): must be an int from 0 to 5 "
                              "(each if doubles the runs of a program)")
    return _programs(max_steps, max_ifs)
