"""Small torch programs drawn by Hypothesis, as data that renders to source: what the ExecuTorch campaign runs.

A program is a start shape and a list of steps over one running tensor ``h`` (float32, 2-D); the
module returns ``h`` and the tensors some steps keep. Forms: an element-wise op; an affine map; an
element-wise binary op (maximum, minimum, add, mul) of a scaled copy and ``h``; a concatenation with
a transformed copy, folded back to the shape; a ``torch.cond`` on the tensor's sign with two
element-wise branches; keeping the current tensor itself as an extra output (it stays alive to the
end: a ``cond``'s result kept so lives through what follows); a ``map`` over the rows (a loop in
ExecuTorch's program); a transpose view applied twice; a reduction kept as an extra output.

A program also draws its backend config: ``reinplace_extra_ops``, a set of the element-wise ops its
steps call at the top level that ExecuTorch's reinplace pass may take (``REINPLACEABLE``). It
renders to the source of a module ``M``, its example inputs and, when that set is not empty, a
``config``: the form checks/foreign/executorch_programs.py keeps. The inputs' sums are far from
zero, so that a ``cond`` on the sign does not hang on how a runtime rounds a sum (an input summing
to 0.0 in one reduction order and to -1e-7 in another takes different branches in eager PyTorch and
in ExecuTorch: a difference, but no bug).
"""
from __future__ import annotations

import attrs
from hypothesis import strategies as st

from zcspec.checks.foreign.step_programs import Step, StepProgram

UNARY = ("torch.sin", "torch.cos", "torch.relu", "torch.tanh", "torch.sigmoid")
BINARY = ("torch.maximum", "torch.minimum", "torch.add", "torch.mul")
# The edge ops ExecuTorch's reinplace pass may be asked to take (reinplace_extra_ops). An op with an
# in-place variant (add_, sin_, ...) is rewritten to it, and ExecuTorch's runtime (1.4.1, 1.5.1) then
# refuses to load the program (OperatorMissing); maximum and minimum have none: the pass marks them
# (_share_alloc_with_arg_idx) and the planner puts their result in their first input's bytes.
REINPLACEABLE = {"torch.maximum": "maximum.default", "torch.minimum": "minimum.default"}


@attrs.frozen
class TorchProgram(StepProgram):
    reinplace: tuple[str, ...] = ()      # edge ops for reinplace_extra_ops, e.g. "maximum.default"

    def to_data(self) -> dict:
        return {**super().to_data(), "reinplace": list(self.reinplace)}

    @classmethod
    def from_data(cls, d: dict) -> "TorchProgram":
        plain = StepProgram.from_data(d)
        return cls(plain.rows, plain.cols, plain.steps, tuple(d.get("reinplace", ())))


    def source(self) -> str:
        body = ["        h = x", "        kept = []"]
        for s in self.steps:
            body += ["        " + line for line in _render(s, self.rows, self.cols)]
        body.append("        return (h, *kept)")
        r, c = self.rows, self.cols
        config = []
        if self.reinplace:
            extra = ", ".join(f"ops.edge.aten.{op}" for op in self.reinplace)
            config = ["from executorch.exir import ExecutorchBackendConfig",
                      "from executorch.exir.dialects._ops import ops",
                      f"config = ExecutorchBackendConfig(reinplace_extra_ops=frozenset({{{extra}}}))"]
        return "\n".join(["import torch", "from functorch.experimental import control_flow", "",
                          "class M(torch.nn.Module):", "    def forward(self, x):", *body, "",
                          f"args = [(torch.linspace(-1, 0.7, {r * c}).reshape({r}, {c}),), "
                          f"(torch.linspace(0.3, 2.1, {r * c}).reshape({r}, {c}),), "
                          f"(-torch.linspace(0.2, 1.9, {r * c}).reshape({r}, {c}),)]", *config]) + "\n"


def _render(s: Step, rows: int, cols: int) -> list[str]:
    a = s.args
    if s.form == "unary":
        return [f"h = {a[0]}(h)"]
    if s.form == "affine":
        return [f"h = h * {a[0]} + {a[1]}"]
    if s.form == "binary":
        return [f"h = {a[0]}(h * {a[1]}, h)"]
    if s.form == "concat":
        return [f"h = torch.cat([h, {a[0]}(h)], dim=0)", f"h = h[:{rows}] * 0.5 + h[{rows}:] * 0.5"]
    if s.form == "cond":
        return [f"h = torch.cond(h.sum() > 0, lambda v: {a[0]}(v) * 2.0, lambda v: {a[1]}(v) + 1.0, [h])"]
    if s.form == "keep":
        return ["kept.append(h)"]
    if s.form == "transpose":
        return ["h = (h.t() * 1.5).t()"]
    if s.form == "reduce":
        return [f"kept.append(h.sum(dim={a[0]}))"]
    if s.form == "map":
        return [f"h = control_flow.map(lambda row: {a[0]}(row) * 2.0 + 1.0, h)"]
    raise ValueError(f"unknown step form {s.form!r}")


FORMS = ("unary", "affine", "concat", "cond", "keep", "transpose", "reduce", "map", "binary")
HIGHER_ORDER = ("cond", "map")


@st.composite
def _step(draw, forms: tuple[str, ...] = FORMS) -> Step:
    form = draw(st.sampled_from(forms))
    unary = st.sampled_from(UNARY)
    if form == "unary":
        return Step(form, (draw(unary),))
    if form == "affine":
        return Step(form, (draw(st.sampled_from((0.5, 2.0, -1.0))), draw(st.sampled_from((0.0, 1.0, -0.25)))))
    if form in ("concat", "map"):
        return Step(form, (draw(unary),))
    if form == "cond":
        return Step(form, (draw(unary), draw(unary)))
    if form == "reduce":
        return Step(form, (draw(st.integers(0, 1)),))
    if form == "binary":
        return Step(form, (draw(st.sampled_from(BINARY)), draw(st.sampled_from((2.0, 0.5, -1.0)))))
    return Step(form)


@st.composite
def torch_programs(draw, max_steps: int = 6, higher_order: bool = True) -> TorchProgram:
    """Programs of 1 to ``max_steps`` steps; without ``higher_order``, no ``cond`` or ``map`` (a campaign
    that looks past pytorch/executorch#21490, open in every release so far)."""
    rows, cols = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    forms = FORMS if higher_order else tuple(f for f in FORMS if f not in HIGHER_ORDER)
    steps = tuple(draw(st.lists(_step(forms), min_size=1, max_size=max_steps)))
    # The top-level binary ops (a cond's or a map's body is a submodule the reinplace pass does not visit)
    usable = sorted({REINPLACEABLE[s.args[0]] for s in steps if s.form == "binary" and s.args[0] in REINPLACEABLE})
    reinplace = tuple(sorted(draw(st.sets(st.sampled_from(usable))))) if usable else ()
    return TorchProgram(rows, cols, steps, reinplace)
