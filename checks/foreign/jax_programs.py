"""Small jax programs drawn by Hypothesis, as data that renders to source: what the XLA campaign runs.

A program is a start shape and a list of steps over one running array ``h`` (float32, 2-D), each
step one of the forms below, and the arrays it returns (``h`` and the extra outputs some steps
keep). It renders to the source of a function ``f(x)`` and its argument, the form
checks/foreign/xla_programs.py keeps, so a finding is a program anyone can read and rerun.

Forms: an element-wise op; an affine map; a concatenation with a transformed copy (along either
axis) followed by a slice back to the shape; a reduction kept as an extra output; a copy of some of
the array's own rows over others, reshaped, as an extra output (``h.at[a:a+k].set(h[b:b+k])``
then ``reshape``: the pattern of in-place dynamic-update-slice fusions); a dynamic update of rows from a computed
block; a ``lax.cond`` on the array's sign with two element-wise branches; a ``lax.scan`` over the
rows with a carry; a ``fori_loop`` of a few element-wise steps.
"""
from __future__ import annotations

import attrs
from hypothesis import strategies as st

from zcspec.checks.foreign.step_programs import Step, StepProgram

UNARY = ("jnp.sin", "jnp.tanh", "jnp.exp", "jax.nn.relu", "jnp.cos")


@attrs.frozen
class JaxProgram(StepProgram):

    def source(self) -> str:
        lines = ["import numpy as np, jax, jax.numpy as jnp", "from jax import lax", "", "def f(x):", "    h = x",
                 "    extra = []"]
        for s in self.steps:
            lines += ["    " + line for line in _render(s, self.rows, self.cols)]
        lines += ["    return (h, *extra)", "",
                  f"args = (jnp.asarray((np.arange({self.rows * self.cols}, dtype=np.float32).reshape({self.rows}, "
                  f"{self.cols}) - {self.rows * self.cols / 2}) / {self.rows * self.cols}),)"]
        return "\n".join(lines) + "\n"


def _render(s: Step, rows: int, cols: int) -> list[str]:
    a = s.args
    if s.form == "unary":
        return [f"h = {a[0]}(h)"]
    if s.form == "affine":
        return [f"h = h * {a[0]} + {a[1]}"]
    if s.form == "concat":
        axis, op = a
        size = rows if axis == 0 else cols
        first, second = (f"h[:{size}]", f"h[{size}:]") if axis == 0 else (f"h[:, :{size}]", f"h[:, {size}:]")
        return [f"h = jnp.concatenate([h, {op}(h)], axis={axis})", f"h = {first} * 0.5 + {second} * 0.5"]
    if s.form == "reduce":
        return [f"extra.append(h.sum(axis={a[0]}))"]
    if s.form == "copy_rows":
        dst, src, k = a
        return [f"extra.append(h.at[{dst}:{dst + k}].set(h[{src}:{src + k}]).reshape((1, {rows}, {cols})))"]
    if s.form == "update_rows":
        dst, k, op = a
        return [f"h = lax.dynamic_update_slice(h, {op}(h[:{k}]) * 2.0, ({dst}, 0))"]
    if s.form == "cond":
        return [f"h = lax.cond(h.sum() > 0, lambda v: {a[0]}(v) * 2.0, lambda v: {a[1]}(v) + 1.0, h)"]
    if s.form == "scan":
        return ["h = lax.scan(lambda c, r: (jnp.tanh(c * r + 0.5), c * 2.0 + r), h[0], h)[1]"]
    if s.form == "loop":
        return [f"h = lax.fori_loop(0, {a[0]}, lambda i, v: {a[1]}(v) * 0.9 + 0.1, h)"]
    raise ValueError(f"unknown step form {s.form!r}")


@st.composite
def _step(draw, rows: int, cols: int) -> Step:
    form = draw(st.sampled_from(("unary", "affine", "concat", "reduce", "copy_rows", "update_rows", "cond", "scan",
                                 "loop")))
    unary = st.sampled_from(UNARY)
    if form == "unary":
        return Step(form, (draw(unary),))
    if form == "affine":
        return Step(form, (draw(st.sampled_from((0.5, 2.0, -1.0))), draw(st.sampled_from((0.0, 1.0, -0.25)))))
    if form == "concat":
        return Step(form, (draw(st.integers(0, 1)), draw(unary)))
    if form == "reduce":
        return Step(form, (draw(st.integers(0, 1)),))
    if form in ("copy_rows", "update_rows"):
        k = draw(st.integers(1, max(1, rows - 1)))
        dst = draw(st.integers(0, rows - k))
        if form == "update_rows":
            return Step(form, (dst, k, draw(unary)))
        return Step(form, (dst, draw(st.integers(0, rows - k)), k))
    if form == "cond":
        return Step(form, (draw(unary), draw(unary)))
    if form == "scan":
        return Step(form)
    return Step("loop", (draw(st.integers(1, 3)), draw(unary)))


@st.composite
def jax_programs(draw, max_steps: int = 5) -> JaxProgram:
    rows, cols = draw(st.integers(2, 8)), draw(st.integers(1, 8))
    steps = draw(st.lists(_step(rows, cols), min_size=1, max_size=max_steps))
    return JaxProgram(rows, cols, tuple(steps))
