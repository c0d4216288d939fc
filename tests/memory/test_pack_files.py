"""The MiniMalloc CSV reader, the ``plan --buffers`` command, and the packer on real instances."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from zcspec.checks.cli import plan_buffers
from zcspec.checks.packing_check import validate
from zcspec.impl.compiler.memory.packing import (
    Buffer, BufferFileError, InvalidBufferError, lower_bound, pack, read_minimalloc_csv,
)

DATA = Path(__file__).parent / "data"
# Feature maps of ONNX's light_densenet121 (input 1x3x224x224)
# conventions: file order, inputs from step 0, outputs to the end, Unsqueeze a
# view, sizes rounded up to 512 B.
DENSENET = DATA / "light_densenet121_fmaps.csv"


def write(tmp_path, text, name="inst.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_reads_rows_in_order_with_optional_alignment(tmp_path):
    path = write(tmp_path, "id,lower,upper,size,alignment\na,0,3,10,4\nb,3,5,7,1\n\n")
    assert read_minimalloc_csv(path) == [Buffer("a", 0, 3, 10, 4), Buffer("b", 3, 5, 7)]


@pytest.mark.parametrize("text, cls, words", [
    ("id,lower,size\na,0,1\n", BufferFileError, ["line 1", "upper"]),
    ("id,lower,upper,size\na,0,3,ten\n", BufferFileError, ["line 2", "'a'", "size='ten'"]),
    ("id,lower,upper,size\na,0,3,4\nb,0,3,-4\n", InvalidBufferError, ["line 3", "'b'", "size=-4"]),
    ("id,lower,upper,size\na,3,3,4\n", InvalidBufferError, ["line 2", "lower=3 >= upper=3"]),
    ("id,lower,upper,size\na,0,3\n", BufferFileError, ["line 2", "fields"]),
    ("id,lower,upper,size\na,0,3,4\na,1,2,4\n", InvalidBufferError, ["line 3", "duplicate", "'a'", "first on line 2"]),
    ("", BufferFileError, ["empty"]),
])
def test_malformed_files_name_file_line_and_rule(tmp_path, text, cls, words):
    path = write(tmp_path, text)
    with pytest.raises(cls) as info:
        read_minimalloc_csv(path)
    message = str(info.value)
    assert message.startswith(str(path))
    for word in words:
        assert word in message


def test_missing_file_is_a_file_error(tmp_path):
    with pytest.raises(BufferFileError, match="cannot read"):
        read_minimalloc_csv(tmp_path / "nope.csv")


def test_buffer_rules():
    with pytest.raises(InvalidBufferError, match="size=0"):
        Buffer("x", 0, 1, 0)
    with pytest.raises(InvalidBufferError, match="align=0"):
        Buffer("x", 0, 1, 4, align=0)
    with pytest.raises(InvalidBufferError, match="lower=-1"):
        Buffer("x", -1, 1, 4)
    with pytest.raises(InvalidBufferError, match="size=True"):
        Buffer("x", 0, 1, True)
    with pytest.raises(InvalidBufferError, match="upper=2.5"):
        Buffer("x", 0, 2.5, 4)
    import numpy as np
    assert Buffer("x", np.int64(0), np.int32(3), np.int64(8)) == Buffer("x", 0, 3, 8)
    assert type(Buffer("x", np.int64(0), 3, 8).lower) is int
    with pytest.raises(InvalidBufferError, match="duplicate"):
        pack([Buffer("x", 0, 1, 4), Buffer("x", 1, 2, 4)])


def cli(*argv):
    parser = argparse.ArgumentParser()
    plan_buffers.configure(parser)
    return plan_buffers.run(parser.parse_args(list(argv)))


def test_cli_json_contract(tmp_path, capsys):
    path = write(tmp_path, "id,lower,upper,size\na,0,2,8\nb,1,3,8\nc,2,4,8\n")
    for strategy in ("ge", "compact"):
        assert cli("--buffers", str(path), "--strategy", strategy, "--json") == 0
        out = json.loads(capsys.readouterr().out)
        assert set(out) == {"arena", "offsets"}
        assert out["arena"] == 16 and set(out["offsets"]) == {"a", "b", "c"}


def test_cli_table_and_capacity_exit_codes(tmp_path, capsys):
    path = write(tmp_path, "id,lower,upper,size\na,0,2,8\nb,1,3,8\n")
    assert cli("--buffers", str(path), "--strategy", "compact", "--capacity", "16") == 0
    out = capsys.readouterr().out
    for word in ("arena", "lower bound", "ratio", "method", "time", "fits"):
        assert word in out
    assert cli("--buffers", str(path), "--strategy", "compact", "--capacity", "15", "--time-limit", "1") == 1
    assert "DOES NOT FIT" in capsys.readouterr().out


def test_cli_bad_file_exits_2_through_main(tmp_path, capsys):
    from zcspec.impl.compiler.errors import GraphError

    path = write(tmp_path, "id,lower,upper,size\na,0,2,-8\n")
    with pytest.raises(GraphError):
        cli("--buffers", str(path))


def test_compact_reaches_the_lower_bound_on_densenet121():
    buffers = read_minimalloc_csv(DENSENET)
    assert len(buffers) == 911
    lb = lower_bound(buffers)
    assert lb == 8_430_592  # 8.431 MB
    result = pack(buffers)
    assert (result.arena, result.optimal) == (lb, True)
    assert validate(buffers, result) == ()
    assert plan_buffers.plan_ge(buffers).arena > lb  # greedy alone does not get there


def test_docs_example_runs():
    text = (Path(__file__).parents[2] / "docs" / "packing.md").read_text()
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(code, "docs/packing.md", "exec"), {})


def test_packing_fields_are_plain_python_types():
    result = pack([Buffer("a", 0, 2, 8), Buffer("b", 1, 3, 8)])
    assert type(result.optimal) is bool and type(result.arena) is int
    assert all(type(o) is int for o in result.offsets.values())


def test_ge_strategy_reproduces_the_minimalloc_readme_first_fit_figures():
    data = Path(__file__).parents[2].parent / "shared" / "data" / "minimalloc-challenging"
    if not data.is_dir():
        pytest.skip(f"{data} not present")
    figures = {"A": 1352704, "B": 1412096, "C": 1417216, "D": 1291264, "E": 1435648, "F": 1441792,
               "G": 1396736, "H": 1421312, "I": 1478656, "J": 1303552, "K": 1352704}
    for name, arena in figures.items():
        buffers = read_minimalloc_csv(data / f"{name}.1048576.csv")
        result = plan_buffers.plan_ge(buffers)
        assert result.arena == arena, name
        assert validate(buffers, result) == ()
