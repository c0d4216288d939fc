"""LAYOUT-STREAM-ORDER's sweep against the definition: on random small plans over two or three streams, it
finds an unordered pair of byte-sharing tensors exactly when comparing every such pair does, and a plan whose
pieces of memory are all ordered passes. The brute force reads the same happens-before (``_Uses.before``)."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from zcspec.spec.examples.build import plan
from zcspec.spec.invariants import layout_streams as ls
from zcspec.spec.invariants._util import families

FM = "feature_map"


@st.composite
def _plans(draw):
    steps = draw(st.integers(2, 6))
    nodes = [f"n{i}" for i in range(steps)]
    streams = {n: draw(st.integers(0, 2)) for n in nodes if draw(st.integers(0, 4))}
    if len(set(streams.values())) < 2:
        streams.update({nodes[0]: 0, nodes[-1]: 1})
    rows, producers, consumers, batch = [], {}, {}, {}
    for k in range(draw(st.integers(2, 7))):
        first = draw(st.integers(0, steps - 1))
        last = draw(st.integers(first, steps - 1))
        name = f"t{k}"
        rows.append((name, FM, 512 * draw(st.integers(0, 3)), 512 * draw(st.integers(1, 2)), first, last))
        producers[name] = nodes[first]
        reads = draw(st.lists(st.integers(first + 1, steps - 1), max_size=2, unique=True)) if first < steps - 1 else []
        if reads:
            consumers[name] = tuple(sorted(reads))
            rows[-1] = rows[-1][:5] + (max(last, max(reads)),)
        if draw(st.integers(0, 2)) == 0:
            batch[name] = draw(st.sampled_from(["b0", "b1"]))
    control = {}
    for i, n in enumerate(nodes[1:], 1):
        if draw(st.integers(0, 3)) == 0:
            control[n] = (nodes[draw(st.integers(0, i - 1))],)
    return plan(rows, steps=steps, producers=producers, consumers=consumers, streams=streams, control=control,
                batch_labels=batch)


def _brute(p) -> bool:
    clock, _ = ls._clocks(p)
    tasks = ls._task_steps(p)
    uses = [ls._Uses(p, f, clock, tasks) for f in families(p) if f.end > f.offset]
    for i, a in enumerate(uses):
        for b in uses[i + 1:]:
            fa, fb = a.family, b.family
            if fa.region != fb.region or fa.offset >= fb.end or fb.offset >= fa.end or p.exclusive(fa.root, fb.root):
                continue
            if (a.steps or a.start or a.end) and (b.steps or b.start or b.end) and not (a.before(b) or b.before(a)):
                return True
    return False


@given(_plans())
def test_the_sweep_finds_an_unordered_pair_exactly_when_one_exists(p):
    assert bool(list(ls.STREAM_ORDER.predicate(p))) == _brute(p)


def test_many_tensors_reusing_one_block_on_two_streams_are_checked_without_comparing_every_pair():
    """4000 tensors take one 512 B block in turn, on alternating streams: t_k is written at step 2k and read
    at 2k+1, and a control edge orders that reader before the next writer. Every pair shares bytes, 8 million
    of them; the sweep compares each tensor with the one before."""
    n = 4000
    rows = [(f"t{k}", FM, 0, 512, 2 * k, 2 * k + 1) for k in range(n)]
    nodes = [f"n{i}" for i in range(2 * n)]
    p = plan(rows, steps=2 * n, producers={f"t{k}": nodes[2 * k] for k in range(n)},
             consumers={f"t{k}": (2 * k + 1,) for k in range(n)},
             streams={x: (i // 2) % 2 for i, x in enumerate(nodes)},
             control={nodes[2 * k]: (nodes[2 * k - 1],) for k in range(1, n)})
    calls = []
    before = ls._Uses.before
    ls._Uses.before = lambda self, other: calls.append(1) or before(self, other)
    try:
        assert list(ls.STREAM_ORDER.predicate(p)) == []
    finally:
        ls._Uses.before = before
    assert len(calls) < 2 * n


def test_a_branch_keeps_its_bytes_against_later_tensors_of_every_branch():
    """a (batch b0, stream 1) and b (batch b1, stream 0) never run together and share bytes; c (no batch) follows
    b on stream 0 but nothing orders it after a: the pair (a, c) is unordered. Broken on purpose once: with b
    replacing a as the holder of the bytes (exclusive holders dropped), the sweep compared c with b only and
    passed."""
    p = plan([("a", FM, 0, 512, 0, 0), ("b", FM, 0, 512, 1, 1), ("c", FM, 0, 512, 2, 2)], steps=3,
             producers={"a": "n0", "b": "n1", "c": "n2"}, streams={"n0": 1, "n1": 0, "n2": 0},
             batch_labels={"a": "b0", "b": "b1"})
    found = list(ls.STREAM_ORDER.predicate(p))
    assert [v.culprit for v in found] == ["tensor 'a' and tensor 'c'"]


def test_a_batch_piece_between_two_unordered_pieces_does_not_hide_them():
    """Hypothesis's find: t2 (step 0, stream 0) then t0 (step 1, stream 0, batch b0) then t1 (step 2, stream 1,
    batch b1) in one block. t0 follows t2 on its stream and took over the bytes; t1 skips t0 (another batch
    branch), and the sweep never met t2, which nothing orders against t1."""
    p = plan([("t0", FM, 0, 512, 1, 1), ("t1", FM, 0, 512, 2, 2), ("t2", FM, 0, 512, 0, 0)], steps=4,
             producers={"t0": "n1", "t1": "n2", "t2": "n0"}, streams={"n0": 0, "n1": 0, "n2": 1},
             control={"n1": ("n0",)}, batch_labels={"t0": "b0", "t1": "b1"})
    (v,) = ls.STREAM_ORDER.predicate(p)
    assert v.values["tensors"] == ["t2", "t1"]
