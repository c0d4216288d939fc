"""The roots of zcspec's error taxonomy, and the errors of the platform itself (docs/errors.md).

- :class:`ZcspecError`: the root. Every error impl/ and checks/ raise on purpose is
  one; each layer has one root under it (``CompilerError``, ``DeviceError``,
  ``RuntimeLayerError``, ``CheckerError``), defined in that layer's errors module.
- :class:`BadInput`: the caller's fault (a bad graph, file, option, buffer or
  command line), whichever layer noticed it. Layers mix it into the classes that
  mean it; the command line maps every ``BadInput`` to exit code 2, by class, in
  one place (``checks/cli/main.py``). Anything else is an internal failure.

The spec (``zcspec.spec``) stands alone and imports nothing of impl/: its root
``SpecError`` is bad input by definition, and the command line maps it with these.
"""
from __future__ import annotations

from typing import TypeVar

E = TypeVar("E", bound="BadInput")


class ZcspecError(Exception):
    """Root of every error zcspec's implementation and checker raise on purpose."""


class BadInput(ZcspecError):
    """The caller's fault: the input (graph, file, option, buffer, argument) breaks a rule.

    ``file`` names the file the input came from, "" when unknown or not from a file.
    """

    file: str = ""

    def in_file(self: E, file: str) -> E:
        """The same error naming ``file`` first (unchanged if it already names one). Fields are kept."""
        if self.file:
            return self
        err = self.__class__.__new__(self.__class__)
        err.__dict__.update(self.__dict__)
        err.file = file
        err.args = (f"{file}: {self.args[0]}", *self.args[1:]) if self.args else (file,)
        return err


class UnknownDTypeError(BadInput, ValueError):
    """A dtype name (or ONNX type id) that is not in :data:`zcspec.impl.platform.dtypes.DTYPES`, or is unsized."""

    def __init__(self, dtype: object, *, tensor: str = ""):
        self.dtype, self.tensor = dtype, tensor
        where = f"tensor {tensor!r} has " if tensor else ""
        super().__init__(f"{where}unknown or unsized dtype {dtype!r}")


class SizeOverflowError(BadInput, ValueError):
    """A tensor whose byte size does not fit GE's int64 sizes (``MAX_TENSOR_BYTES``)."""

    def __init__(self, *, tensor: str = "", shape: tuple = (), nbytes: int | None = None):
        self.tensor, self.shape, self.nbytes = tensor, shape, nbytes
        size = f" ({nbytes} bytes)" if nbytes is not None else ""
        super().__init__(f"tensor {tensor!r} of shape {shape!r} is too large{size}: sizes must fit in int64 - 64")


class UnknownSocError(BadInput, ValueError):
    """A SoC profile name that is not in :data:`zcspec.impl.platform.soc.PROFILES`; ``known`` lists them."""

    def __init__(self, name: str, known: tuple[str, ...]):
        self.name, self.known = name, tuple(known)
        super().__init__(f"unknown SoC profile {name!r}; known: {', '.join(known)}")
