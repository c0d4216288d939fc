"""Reading another compiler's artefact from disk, bounded: the one home of the readers' file rules.

A file larger than the reader's limit is refused before it is read, so a crafted or mistaken
argument (a disk image, a device) cannot exhaust the host; an unreadable one is refused naming it.
Both raise the reader's own error class (a ``UsageError``: exit code 2).
"""
from __future__ import annotations

import os


def read_bytes(path, limit: int, error) -> bytes:
    """The bytes of ``path``, at most ``limit`` of them; ``error(message, file=path)`` otherwise."""
    path = str(path)
    try:
        size = os.path.getsize(path)
        if size > limit:
            raise error(f"is {size} bytes, more than the {limit} this reader accepts", file=path)
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise error(f"cannot be read: {e.strerror or e}", file=path) from e


def read_text(path, limit: int, error) -> str:
    """The text of ``path`` (UTF-8, undecodable bytes replaced), bounded as :func:`read_bytes`."""
    return read_bytes(path, limit, error).decode("utf-8", errors="replace")
