"""Recurrent kernels: LSTM and GRU (ONNX semantics, layout 0, the default activations).

Inputs keep ONNX's positions: the front end drops omitted optional inputs and records the
positions of the ones given in the node attribute ``_present_inputs`` (LSTM: X, W, R, B,
sequence_lens, initial_h, initial_c, P; GRU: X, W, R, B, sequence_lens, initial_h).
Supported: ``direction`` forward, reverse, bidirectional; ``layout`` 0 and 1 (batch first);
``clip``; LSTM peepholes (P); GRU ``linear_before_reset``. Refused with a KernelError naming
the attribute: other activations, LSTM ``input_forget``, and ``sequence_lens`` shorter than
the sequence (every batch entry must run the whole sequence).
Outputs: Y [seq, dirs, batch, hidden], Y_h [dirs, batch, hidden] (and LSTM's Y_c), as many
as the node has.
"""
from __future__ import annotations

import numpy as np

from zcspec.impl.device.kernels.common import fail, kernel, need_float
from zcspec.impl.platform.kernel_ops import RECURRENT_ACTIVATIONS


def _sigmoid(x):
    return 0.5 * (1.0 + np.tanh(0.5 * x))   # = 1 / (1 + exp(-x)), without overflowing for large -x


def _operands(task, ins, names: tuple[str, ...]) -> dict:
    present = tuple(int(i) for i in task.attr("_present_inputs", tuple(range(len(ins)))))
    if len(present) != len(ins):
        raise fail(task, f"_present_inputs {present!r} lists {len(present)} inputs, the task has {len(ins)}")
    return {names[i]: np.asarray(a) for i, a in zip(present, ins)}


def _time_major(task, ops: dict) -> dict:
    """Layout 1 (batch first) as layout 0: X [batch, seq, in] -> [seq, batch, in], states [batch, dirs,
    hidden] -> [dirs, batch, hidden]."""
    if int(task.attr("layout", 0)) == 0:
        return ops
    out = dict(ops, X=ops["X"].transpose(1, 0, 2))
    for k in ("initial_h", "initial_c"):
        if k in ops:
            out[k] = ops[k].transpose(1, 0, 2)
    return out


def _as_layout(task, y, *states) -> tuple:
    """Results in the node's layout: Y [seq, dirs, batch, hidden] and states [dirs, batch, hidden] for
    layout 0, [batch, seq, dirs, hidden] and [batch, dirs, hidden] for layout 1."""
    if int(task.attr("layout", 0)) == 0:
        return (y, *states)
    return (y.transpose(2, 0, 1, 3), *(s.transpose(1, 0, 2) for s in states))


def _check(task, x, seq_lens, dirs: int) -> None:
    need_float(task, x)
    acts = task.attr("activations", None)
    default = RECURRENT_ACTIVATIONS[task.op_type] * dirs
    if acts is not None and tuple(acts) != default:
        raise fail(task, f"activations {tuple(acts)!r} are not supported (only the default {default!r})")
    if seq_lens is not None and np.any(np.asarray(seq_lens) != x.shape[0]):
        raise fail(task, f"sequence_lens {np.asarray(seq_lens).tolist()} shorter than the sequence ({x.shape[0]})")


def _directions(task) -> tuple[str, ...]:
    d = task.attr("direction", "forward")
    if d not in ("forward", "reverse", "bidirectional"):
        raise fail(task, f"direction {d!r} is not forward, reverse or bidirectional")
    return ("forward", "reverse") if d == "bidirectional" else (d,)


def _clip(task, v):
    c = task.attr("clip", None)
    return v if c is None else np.clip(v, -float(c), float(c))


def _lstm_dir(task, x, w, r, b, h, c, p, reverse: bool):
    hidden = r.shape[-1]
    pi, po, pf = (p[:hidden], p[hidden:2 * hidden], p[2 * hidden:]) if p is not None else (0.0, 0.0, 0.0)
    steps = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
    ys = [None] * x.shape[0]
    for t in steps:
        g = x[t] @ w.T + h @ r.T + b[:4 * hidden] + b[4 * hidden:]
        i, o, f, cc = (g[:, k * hidden:(k + 1) * hidden] for k in range(4))
        i = _sigmoid(_clip(task, i + pi * c))
        f = _sigmoid(_clip(task, f + pf * c))
        c = f * c + i * np.tanh(_clip(task, cc))
        o = _sigmoid(_clip(task, o + po * c))
        h = o * np.tanh(c)
        ys[t] = h
    return np.stack(ys), h, c


@kernel("LSTM")
def lstm(task, ins, outs):
    ops = _time_major(task, _operands(task, ins, ("X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P")))
    x, w, r = ops["X"].astype(np.float64), ops["W"], ops["R"]
    dirs, hidden, batch = w.shape[0], r.shape[-1], x.shape[1]
    _check(task, ops["X"], ops.get("sequence_lens"), dirs)
    if int(task.attr("input_forget", 0)):
        raise fail(task, "input_forget=1 is not supported")
    ys, hs, cs = [], [], []
    for d, direction in enumerate(_directions(task)):
        b = ops["B"][d] if "B" in ops else np.zeros(8 * hidden)
        h = ops["initial_h"][d] if "initial_h" in ops else np.zeros((batch, hidden))
        c = ops["initial_c"][d] if "initial_c" in ops else np.zeros((batch, hidden))
        p = ops["P"][d] if "P" in ops else None
        y, h, c = _lstm_dir(task, x, w[d], r[d], b, h.astype(np.float64), c.astype(np.float64), p, direction == "reverse")
        ys.append(y), hs.append(h), cs.append(c)
    dtype = ops["X"].dtype
    results = _as_layout(task, np.stack(ys, axis=1), np.stack(hs), np.stack(cs))
    return tuple(a.astype(dtype) for a in results[:len(outs)])


def _gru_dir(task, x, w, r, b, h, reverse: bool):
    hidden = r.shape[-1]
    wb, rb = b[:3 * hidden], b[3 * hidden:]
    before_reset = bool(int(task.attr("linear_before_reset", 0)))
    steps = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
    ys = [None] * x.shape[0]
    for t in steps:
        gx = x[t] @ w.T + wb
        z = _sigmoid(_clip(task, gx[:, :hidden] + h @ r[:hidden].T + rb[:hidden]))
        rr = _sigmoid(_clip(task, gx[:, hidden:2 * hidden] + h @ r[hidden:2 * hidden].T + rb[hidden:2 * hidden]))
        if before_reset:
            n = np.tanh(_clip(task, gx[:, 2 * hidden:] + rr * (h @ r[2 * hidden:].T + rb[2 * hidden:])))
        else:
            n = np.tanh(_clip(task, gx[:, 2 * hidden:] + (rr * h) @ r[2 * hidden:].T + rb[2 * hidden:]))
        h = (1 - z) * n + z * h
        ys[t] = h
    return np.stack(ys), h


@kernel("GRU")
def gru(task, ins, outs):
    ops = _time_major(task, _operands(task, ins, ("X", "W", "R", "B", "sequence_lens", "initial_h")))
    x, w, r = ops["X"].astype(np.float64), ops["W"], ops["R"]
    dirs, hidden, batch = w.shape[0], r.shape[-1], x.shape[1]
    _check(task, ops["X"], ops.get("sequence_lens"), dirs)
    ys, hs = [], []
    for d, direction in enumerate(_directions(task)):
        b = ops["B"][d] if "B" in ops else np.zeros(6 * hidden)
        h = ops["initial_h"][d] if "initial_h" in ops else np.zeros((batch, hidden))
        y, h = _gru_dir(task, x, w[d], r[d], b, h.astype(np.float64), direction == "reverse")
        ys.append(y), hs.append(h)
    dtype = ops["X"].dtype
    return tuple(a.astype(dtype) for a in _as_layout(task, np.stack(ys, axis=1), np.stack(hs))[:len(outs)])
