import io

from zcspec.checks.progress import Progress


class _Tty(io.StringIO):
    def isatty(self):
        return True


class _Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_plain_lines_off_a_terminal_with_rate_time_left_and_findings(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    out, clock = io.StringIO(), _Clock()
    p = Progress("graphs", stream=out, total=100, plain_interval=10, clock=clock)
    clock.t = 5
    p.update(10, 0)            # the first update prints
    clock.t = 6
    p.update(20, 1)            # within the interval: nothing
    clock.t = 20
    p.update(50, 2)
    lines = out.getvalue().splitlines()
    assert lines == ["    5.0 s, 10/100 graphs, 2.0/s, 45 s left, 0 findings",
                     "   20.0 s, 50/100 graphs, 2.5/s, 20 s left, 2 findings"]


def test_a_terminal_gets_one_line_rewritten_but_not_under_ci(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    out, clock = _Tty(), _Clock()
    p = Progress("cases", stream=out, budget=60, clock=clock)
    clock.t = 1
    p.update(3, 0)
    clock.t = 2
    p.update(6, 0)
    p.finish()
    assert out.getvalue().count("\r") == 3 and out.getvalue().endswith("\n") and "58 s left" in out.getvalue()
    monkeypatch.setenv("CI", "1")
    assert not Progress("cases", stream=_Tty()).live
