"""A stateful model of device memory: random mallocs, frees, copies and memsets, legal or not.

The model keeps every live allocation's bytes. After each step the device must
agree with it; an illegal step must fault and leave allocations, counters (but
``faults``) and every live byte unchanged.
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, consumes, invariant, precondition, rule

from zcspec.impl.device import Device, DeviceFault

sizes = st.integers(1, 300)


class DeviceMemory(RuleBasedStateMachine):
    dev_bufs = Bundle("dev_bufs")
    host_bufs = Bundle("host_bufs")

    def __init__(self):
        super().__init__()
        self.dev = Device("ascend310p", capacity=1 << 16)
        self.bytes: dict[int, bytearray] = {}     # live allocation -> expected content (device and host)
        self.read_only: set[int] = set()
        self.freed: list[int] = []

    def _expect_fault(self, call, kind=None):
        before = (self.dev.allocations(), {k: v for k, v in self.dev.counters.as_dict().items() if k != "faults"})
        faults = self.dev.counters.faults
        try:
            call()
        except DeviceFault as f:
            assert kind is None or f.kind == kind, (f.kind, kind)
        else:
            raise AssertionError(f"expected a {kind} fault")
        after = (self.dev.allocations(), {k: v for k, v in self.dev.counters.as_dict().items() if k != "faults"})
        assert after == before and self.dev.counters.faults == faults + 1

    @rule(target=dev_bufs, size=sizes, read_only=st.booleans())
    def malloc(self, size, read_only):
        try:
            addr = self.dev.malloc(size, read_only=read_only)
        except DeviceFault:
            return None
        self.bytes[addr] = bytearray(b"\xff" * size)   # poison
        if read_only:
            self.read_only.add(addr)
        return addr

    @rule(target=host_bufs, size=sizes, fill=st.integers(0, 255))
    def host_malloc(self, size, fill):
        addr = self.dev.host_malloc(size)
        self.dev.host_write(addr, np.full(size, fill, np.uint8))
        self.bytes[addr] = bytearray([fill] * size)
        return addr

    @rule(addr=consumes(dev_bufs))
    def free(self, addr):
        if addr is None:
            return
        self.dev.free(addr)
        del self.bytes[addr]
        self.read_only.discard(addr)
        self.freed.append(addr)

    @precondition(lambda self: self.freed)
    @rule(data=st.data())
    def double_free_faults(self, data):
        addr = data.draw(st.sampled_from(self.freed))
        if addr in self.bytes:   # reused by a later malloc: not a double free any more
            return
        self._expect_fault(lambda: self.dev.free(addr), "double_free")

    def _owner(self, addr: int, n: int):
        """The live buffer holding [addr, addr + n) in the model (an offset past one buffer
        may land inside its neighbour, which is legal), or None."""
        return next((b for b, v in self.bytes.items() if b <= addr and addr + n <= b + len(v)), None)

    def _copy(self, dst, src, data):
        if dst is None or src is None:
            return
        dsize, ssize = len(self.bytes[dst]), len(self.bytes[src])
        n = data.draw(st.integers(1, max(dsize, ssize) + 8))
        d, s = dst + data.draw(st.integers(0, dsize)), src + data.draw(st.integers(0, ssize))
        downer, sowner = self._owner(d, n), self._owner(s, n)
        h2d = self.dev.mem.contains(d) and not self.dev.mem.contains(s)
        if downer is None or sowner is None:
            return self._expect_fault(lambda: self.dev.memcpy(d, s, n))
        if downer in self.read_only and not h2d:
            return self._expect_fault(lambda: self.dev.memcpy(d, s, n), "read_only")
        self.dev.memcpy(d, s, n)
        chunk = self.bytes[sowner][s - sowner:s - sowner + n]
        self.bytes[downer][d - downer:d - downer + n] = chunk

    @rule(dst=dev_bufs, src=host_bufs, data=st.data())
    def h2d(self, dst, src, data):
        self._copy(dst, src, data)

    @rule(dst=host_bufs, src=dev_bufs, data=st.data())
    def d2h(self, dst, src, data):
        self._copy(dst, src, data)

    @rule(dst=dev_bufs, src=dev_bufs, data=st.data())
    def d2d(self, dst, src, data):
        self._copy(dst, src, data)

    @rule(addr=dev_bufs, data=st.data())
    def memset(self, addr, data):
        if addr is None:
            return
        size = len(self.bytes[addr])
        a, n = addr + data.draw(st.integers(0, size)), data.draw(st.integers(1, size + 4))
        value = data.draw(st.integers(0, 255))
        owner = self._owner(a, n)
        if owner is None or owner in self.read_only:
            return self._expect_fault(lambda: self.dev.memset(a, n, value),
                                      "read_only" if owner is not None else None)
        self.dev.memset(a, n, value)
        self.bytes[owner][a - owner:a - owner + n] = bytes([value]) * n

    @invariant()
    def contents_agree(self):
        for addr, expected in self.bytes.items():
            space = self.dev.mem if self.dev.mem.contains(addr) else self.dev.host
            off = addr - space.base
            assert space.u8[off:off + len(expected)].tobytes() == bytes(expected), hex(addr)

    @invariant()
    def table_agrees(self):
        live = {a.addr for a in self.dev.allocations()}
        assert live == {a for a in self.bytes if self.dev.mem.contains(a)}
        assert self.dev.counters.allocated_bytes == sum(len(self.bytes[a]) for a in live)


TestDeviceMemory = DeviceMemory.TestCase
