"""Errors of runtime v2, with GE's status codes and message ids as structured fields.

- :class:`RuntimeV2Error`: the base; ``code`` is GE's status (``PARAM_INVALID``,
  ``GRAPH_FAILED``, ...), ``message_id`` the user-facing message id (``E13031``),
  ``output``/``input``/``node`` name the culprit.
- :class:`OutputBufferError`: a caller's output tensor is null, too small or wrongly
  placed where the mode forbids a fallback (GE: build_tensor.cc SplitTensorForOutputData).
- :class:`InputBufferError`: a caller's input tensor is null or too small.
- :class:`EnsureOutputError`: EnsureTensorAtOutMemory cannot deliver an output.
- :class:`AllocatorError`: an allocator is missing (always_external_allocator) or failed.
- :class:`LoweringError`: a model this runtime cannot lower (names the tensor and why).
- :class:`ExeGraphError`: a malformed execution graph (a dangling edge, an unknown kernel).
- :class:`ApiMisuseError`: the executor's API called wrongly (wrong tensor counts, an
  unloaded model, a model compiled for another SoC, a non-bool option).

The caller's errors (the buffer, allocator and API-misuse errors) are also ``BadInput``,
which the command line maps to exit code 2. ``RuntimeV2Error`` is runtime v2's branch
of the runtime layer's root (``zcspec.impl.runtime.errors.RuntimeLayerError``).
"""
from __future__ import annotations

from zcspec.impl.platform.errors import BadInput
from zcspec.impl.runtime.errors import RuntimeLayerError

PARAM_INVALID = "PARAM_INVALID"
GRAPH_FAILED = "GRAPH_FAILED"
INTERNAL_ERROR = "INTERNAL_ERROR"
E13031 = "E13031"  # GE: build_tensor.cc SplitTensorForOutputData: output tensor / address / size in always_zero_copy mode


class RuntimeV2Error(RuntimeLayerError):
    """Base of runtime v2's errors; see the module docstring for the fields."""

    def __init__(self, message: str, *, code: str = INTERNAL_ERROR, message_id: str = "", output: str = "",
                 input: str = "", node: str = "", index: int | None = None):  # noqa: A002 - the field's name
        self.code, self.message_id = code, message_id
        self.output, self.input, self.node, self.index = output, input, node, index
        tag = f"[{code}{', ' + message_id if message_id else ''}] "
        super().__init__(tag + message)

    @property
    def culprit(self) -> str:
        """The I/O or node the error names (for observations and the command line)."""
        return self.output or self.input or self.node

    @property
    def io_key(self) -> str | None:
        """``"output:<index>"`` / ``"input:<index>"`` of the I/O the error names, when known."""
        role = "output" if self.output else "input" if self.input else None
        return f"{role}:{self.index}" if role and self.index is not None else None


class OutputBufferError(RuntimeV2Error, BadInput):
    def __init__(self, output: str, why: str, *, node: str = "", required: int | None = None,
                 given: int | None = None, index: int | None = None):
        self.required, self.given = required, given
        super().__init__(f"output {output!r}: {why}", code=PARAM_INVALID, message_id=E13031, output=output, node=node,
                         index=index)


class InputBufferError(RuntimeV2Error, BadInput):
    def __init__(self, input_name: str, why: str, *, node: str = "", index: int | None = None):
        super().__init__(f"input {input_name!r}: {why}", code=PARAM_INVALID, input=input_name, node=node, index=index)


class EnsureOutputError(RuntimeV2Error, BadInput):
    def __init__(self, output: str, why: str, *, node: str = "", index: int | None = None):
        super().__init__(f"output {output!r}: {why}", code=GRAPH_FAILED, output=output, node=node, index=index)


class AllocatorError(RuntimeV2Error, BadInput):
    def __init__(self, why: str, *, node: str = ""):
        super().__init__(why, code=PARAM_INVALID, node=node)


class LoweringError(RuntimeV2Error):
    def __init__(self, why: str, *, tensor: str = "", node: str = ""):
        self.tensor = tensor
        where = f"tensor {tensor!r}: " if tensor else ""
        super().__init__(where + why, code=GRAPH_FAILED, node=node)


class ExeGraphError(RuntimeV2Error):
    def __init__(self, why: str, *, node: str = ""):
        where = f"node {node!r}: " if node else ""
        super().__init__(where + why, code=GRAPH_FAILED, node=node)


class ApiMisuseError(RuntimeV2Error, BadInput):
    """The API was called wrongly (wrong number of tensors, a closed executor)."""

    def __init__(self, why: str):
        super().__init__(why, code=PARAM_INVALID)
