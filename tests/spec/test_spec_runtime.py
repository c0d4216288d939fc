"""Runtime v1 and v2 invariants: targeted cases beyond the documented examples."""
from __future__ import annotations

import attrs

from zcspec.spec.examples import all_examples
from zcspec.spec.examples.build import (
    FM, PADDED, RAW, X_BUF, X_MODEL, Y_BUF, Y_FM_OFFSET, Y_MODEL, buffers, events, execution, launch, load,
)
from zcspec.spec.invariants._copy_only import HCCL
from zcspec.spec.observables import IoTensor, ZeroCopyEntry
from zcspec.spec.registry import get


def test_v1_slot_refresh_relative_offset_is_added():
    ld = attrs.evolve(load(), zero_copy_table=(ZeroCopyEntry(0, 0, "x", "input", 64), ZeroCopyEntry(0, 1, "y", "output")))
    assert get("V1-SLOT-REFRESH").violations(execution(ld, slots=((0, 0, X_BUF + 64), (0, 1, Y_BUF)))) == ()
    (v,) = get("V1-SLOT-REFRESH").violations(execution(ld))
    assert v.values["expected"] == X_BUF + 64


def test_v1_slot_refresh_not_exercised_with_zero_copy_off_or_in_v2():
    assert not get("V1-SLOT-REFRESH").exercised(execution(load(zero_copy=False)))
    assert not get("V1-SLOT-REFRESH").exercised(execution(load("v2")))


def test_v1_no_model_io_slot_host_buffers_may_keep_the_model_address():
    obs = execution(bufs=buffers(y_placement="host"), slots=((0, 0, X_BUF), (0, 1, Y_MODEL)))
    assert get("V1-NO-MODEL-IO-SLOT").violations(obs) == ()


_Y_FM = FM + Y_FM_OFFSET


def test_v1_copy_only_once_refreshing_a_copy_only_buffer_is_reported():
    obs = execution(load(y_region="feature_map"), evs=events(launch(), dict(kind="copy", src=_Y_FM, dst=Y_BUF,
                                                                            size=RAW, io="y")))
    assert any("pointed into it" in v.message for v in get("V1-COPY-ONLY-ONCE").violations(obs))


def test_v1_copy_only_once_missing_copy_is_reported():
    obs = execution(load(y_region="feature_map"), slots=((0, 0, X_BUF), (0, 1, _Y_FM)))
    (v,) = get("V1-COPY-ONLY-ONCE").violations(obs)
    assert v.values == {"copies": 0}


def test_v1_copy_only_is_the_specs_not_the_runtimes():
    """The runtime's label changes nothing: y in the feature map must be copied even when the runtime calls
    nothing copy-only, and an eligible y must not be copied even when the runtime calls it copy-only."""
    obs = execution(load(y_region="feature_map", copy_only=()), slots=((0, 0, X_BUF), (0, 1, _Y_FM)))
    assert get("V1-COPY-ONLY-ONCE").violations(obs)
    copied = execution(load(copy_only=("y",)), slots=((0, 0, X_BUF), (0, 1, Y_MODEL)),
                       evs=events(launch(writes=((Y_MODEL, RAW),)), dict(kind="copy", src=Y_MODEL, dst=Y_BUF, size=RAW)))
    assert {v.culprit for v in get("V1-ZERO-COPY-WHEN-ELIGIBLE").violations(copied)} == {"buffer 'y'"}


def test_v1_copy_rules_each_decide_alone():
    """Each of GE's reasons to copy, as the spec computes it from the load's raw facts: GE's execute path
    (GenMemAllocations) by default, the legacy copy_only_addrs_ rules with legacy_copy_only_addrs."""
    from zcspec.spec.invariants._copy_only import reasons
    assert reasons(load()) == {"x": (), "y": ()}
    assert "zero copy is off" in reasons(load(zero_copy=False))["y"][0]
    assert "feature_map" in reasons(load(y_region="feature_map"))["y"][0]
    assert "cannot have its arguments refreshed on nozc" in reasons(load(soc="nozc"))["x"][0]
    # The HCCL flag decides only on the legacy path; NnExecute refreshes the HCCL task's slot.
    assert reasons(load(hccl_flags=(True, False)))["y"] == ()
    assert reasons(load(hccl_flags=(True, False), legacy_copy_only_addrs=True))["y"] == (HCCL,)
    shared = load(io=(IoTensor("x", "input", X_MODEL, PADDED, RAW, offset=0x200),
                      IoTensor("y", "output", X_MODEL, PADDED, RAW, offset=0x200)))
    # GenOutputMemAllocations: the output held in the input's allocation is copied out of it; the input stays.
    assert reasons(shared)["x"] == () and "copied once out of it" in reasons(shared)["y"][0]
    partial = (IoTensor("x", "input", X_MODEL, PADDED, RAW, offset=0x200),
               IoTensor("y", "output", X_MODEL, PADDED, RAW, offset=0x220))
    # GetMemAllocationByLogicAddr tests the first byte: y starts inside x's allocation, so it is held in it.
    assert reasons(load(io=partial))["x"] == () and "at byte 32" in reasons(load(io=partial))["y"][0]
    legacy = reasons(load(io=partial, legacy_copy_only_addrs=True))
    assert all(any("shared with" in r for r in why) for why in legacy.values())
    not_block = dict(reuse_zero_copy_memory=True, io=(IoTensor("x", "input", X_MODEL, PADDED, RAW, offset=0x200),
                     IoTensor("y", "output", Y_MODEL, PADDED, RAW, zero_copy_block=False)))
    assert reasons(load(**not_block)) == {"x": (), "y": ()}
    legacy = reasons(load(**not_block, legacy_copy_only_addrs=True))
    assert "reuseZeroCopyMemory" in legacy["y"][0] and legacy["x"] == ()


def test_v1_unread_input_is_eligible_on_ges_path_and_copied_on_the_legacy_one():
    """An input no task points into is a refreshable allocation with no slot (GenInputMemAllocations):
    nothing copies it; SetCopyOnlyOutput's rule copies it only on the legacy path."""
    from zcspec.spec.invariants._copy_only import reasons
    unread = (IoTensor("x", "input", X_MODEL, PADDED, RAW, offset=0x300),
              IoTensor("y", "output", Y_MODEL, PADDED, RAW))
    assert reasons(load(io=unread))["x"] == ()
    assert "no task argument" in reasons(load(io=unread, legacy_copy_only_addrs=True))["x"][0]


def test_v1_reuse_zc_memory_backed_region_is_reported():
    (v,) = get("V1-REUSE-ZC-MEMORY").violations(load(reuse_zero_copy_memory=True, zc_backed=True))
    assert v.culprit == "region 'zero_copy'"


def test_v1_hccl_copy_only_applies_to_v1_and_only_where_hccl_is_the_one_reason():
    bad = all_examples()["V1-HCCL-COPY"].violates
    assert get("V1-HCCL-COPY").violations(bad)
    v2 = attrs.evolve(bad, load=attrs.evolve(bad.load, options=load("v2").options))
    assert get("V1-HCCL-COPY").violations(v2) == ()
    ges_path = attrs.evolve(bad, load=attrs.evolve(bad.load, options=load(hccl_flags=(True, False)).options))
    assert not get("V1-HCCL-COPY").exercised(ges_path)   # NnExecute refreshes the HCCL slot: nothing to copy
    also_fm = execution(load(hccl_flags=(True, False), y_region="feature_map", legacy_copy_only_addrs=True),
                        slots=((0, 0, X_BUF), (0, 1, _Y_FM)))
    assert not get("V1-HCCL-COPY").exercised(also_fm)


def test_v2_azc_no_alloc_inputs_may_be_staged():
    obs = execution(load("v2", always_zero_copy=True),
                    evs=events(dict(kind="alloc", address=0xC0000, size=512, owner="runtime", io="x"), launch()))
    assert get("V2-AZC-NO-ALLOC").violations(obs) == ()


def test_v2_azc_reject_null_buffer_must_fail_naming_it():
    obs = execution(load("v2", always_zero_copy=True), bufs=buffers(y_address=0, y_size=0), evs=(), ok=False,
                    culprit="x")
    (v,) = get("V2-AZC-REJECT").violations(obs)
    assert "null" in v.message


def test_v2_default_fallback_host_buffer_allocates_and_succeeds():
    obs = execution(load("v2"), bufs=buffers(y_placement="host"),
                    evs=events(dict(kind="alloc", address=0xA0000, size=512, owner="runtime"),
                               launch(writes=((0xA0000, RAW, "y"),)),
                               dict(kind="copy", direction="d2h", src=0xA0000, dst=Y_BUF, size=RAW, io="y")))
    assert get("V2-DEFAULT-FALLBACK").violations(obs) == ()
    assert get("V2-DEFAULT-FALLBACK").exercised(obs)


def test_v2_out_is_user_not_claimed_for_undersized_buffers():
    obs = execution(load("v2"), bufs=buffers(y_size=RAW - 1), io_addresses={"x": X_BUF, "y": 0xA0000})
    assert not get("V2-OUT-IS-USER").exercised(obs)


def test_v2_no_overrun_copy_past_the_end_is_reported_and_ge_compat_is_named():
    obs = execution(load("v2"), bufs=buffers(y_size=300),
                    evs=events(dict(kind="copy", src=0xA0000, dst=Y_BUF, size=RAW, io="y")))
    (v,) = get("V2-NO-OVERRUN").violations(obs)
    assert "ge_compat" not in v.message and v.values["written"] == [Y_BUF, Y_BUF + RAW]
    obs = execution(load("v2", ge_compat=True), bufs=buffers(y_size=300))
    (v,) = get("V2-NO-OVERRUN").violations(obs)
    assert "ge_compat" in v.message  # the overrun is GE's documented hazard, and the message says so


def test_v1_claims_about_refresh_and_copies_wait_for_a_successful_call():
    refused = execution(slots=(), evs=(), ok=False, error="wrong number of buffers")
    for invariant_id in ("V1-SLOT-REFRESH", "V1-NO-MODEL-IO-SLOT", "V1-COPY-ONLY-ONCE"):
        assert not get(invariant_id).exercised(refused) and get(invariant_id).violations(refused) == ()


def test_v1_no_model_io_slot_raw_slots_of_copy_only_io_may_keep_the_model_address():
    # An HCCL task without zero-copy support holds x's model address in an unregistered slot.
    obs = execution(load(hccl_flags=(False, True), legacy_copy_only_addrs=True),
                    slots=((0, 0, X_MODEL), (0, 1, Y_BUF), (2, 0, X_MODEL + 8)))
    assert get("V1-NO-MODEL-IO-SLOT").violations(obs) == ()
    obs = execution(load(), slots=((0, 0, X_BUF), (0, 1, Y_BUF), (2, 0, X_MODEL + 8)))
    assert get("V1-NO-MODEL-IO-SLOT").violations(obs)


def test_v1_buffer_size_raw_sized_buffers_pass_and_refusing_them_is_reported():
    # The model's y is 512 bytes padded, 400 raw: 400 + 64 >= 512, so GE accepts a raw-sized buffer.
    assert get("V1-BUFFER-SIZE").violations(execution()) == ()
    refused = execution(evs=events(dict(kind="error", io="y")), ok=False, culprit="y", slots=(),
                        error=f"buffer 'y': The user provided {RAW} bytes of buffer size plus the aligned 64 bytes, "
                              f"which is less than the tensor size 512 bytes required by the model [E13025 code 145000]")
    (v,) = get("V1-BUFFER-SIZE").violations(refused)
    assert v.values == {"size": RAW, "raw_size": RAW}
    # A refusal for another rule (say alignment), as its message reads, is not a size refusal.
    other = "buffer 'y': address 0x1004 is not aligned to 8 bytes (the float64 element size) [E13025 code 145000]"
    assert get("V1-BUFFER-SIZE").violations(attrs.evolve(refused, result=attrs.evolve(refused.result, error=other))) == ()
    assert get("V1-BUFFER-SIZE").violations(execution(load("v2"), bufs=buffers(y_size=100))) == ()
