"""Progress of a long run: done, rate, time left and findings so far, on one line.

On a terminal the line is rewritten in place (carriage return) at most every
``min_interval`` seconds; when the stream is not a terminal, or ``CI`` is set in
the environment, plain lines are printed every ``plain_interval`` seconds and at
the end, so logs stay readable. ``total`` may be unknown (None) at first and set
later (``set_total``): the time left shows once it is known. A time-boxed run
gives ``budget`` (seconds) instead: the time left is what remains of it.
"""
from __future__ import annotations

import os
import sys
import time


class Progress:
    def __init__(self, what: str, *, stream=None, total: int | None = None, budget: float | None = None,
                 min_interval: float = 0.2, plain_interval: float = 10.0, clock=time.monotonic):
        self.what = what
        self.stream = stream if stream is not None else sys.stderr
        self.total = total
        self.budget = budget
        self.clock = clock
        self.start = clock()
        self.done = 0
        self.findings = 0
        self._last = float("-inf")
        isatty = getattr(self.stream, "isatty", lambda: False)()
        self.live = bool(isatty) and not os.environ.get("CI")
        self.interval = min_interval if self.live else plain_interval

    def set_total(self, total: int) -> None:
        self.total = total

    def line(self) -> str:
        elapsed = self.clock() - self.start
        rate = self.done / elapsed if elapsed > 0 else 0.0
        parts = [f"{elapsed:7.1f} s", f"{self.done:,}" + (f"/{self.total:,}" if self.total else "") + f" {self.what}",
                 f"{rate:,.1f}/s"]
        if self.budget is not None:
            parts.append(f"{max(self.budget - elapsed, 0):,.0f} s left")
        elif self.total and rate > 0:
            parts.append(f"{max(self.total - self.done, 0) / rate:,.0f} s left")
        parts.append(f"{self.findings} findings")
        return ", ".join(parts)

    def update(self, done: int, findings: int, *, force: bool = False) -> None:
        self.done, self.findings = done, findings
        now = self.clock()
        if not force and now - self._last < self.interval:
            return
        self._last = now
        if self.live:
            self.stream.write("\r" + self.line() + "\x1b[K")
        else:
            self.stream.write(self.line() + "\n")
        self.stream.flush()

    def finish(self) -> None:
        self.update(self.done, self.findings, force=True)
        if self.live:
            self.stream.write("\n")
            self.stream.flush()
