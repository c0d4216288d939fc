"""What a runtime v1 run of a scenario may ask for (checks/execution/v1.py runs it): the keys of its
``runtime`` part, and the combinations that make no sense, refused as a ScenarioError naming the key.
``options_of(runtime)`` checks them and returns the load options the run asks for (a fresh session with its
static memory policy included); the module doc of checks/execution/v1.py says what each key does.
"""
from __future__ import annotations

from zcspec.checks.errors import ScenarioError
from zcspec.checks.execution.entries import APIS
from zcspec.impl.runtime.v1.config import LoadOptions
from zcspec.impl.runtime.v1.session import Session

_LOAD_KEYS = ("zero_copy", "reuse_zero_copy_memory", "feature_base_refreshable", "legacy_copy_only_addrs")
CALLER_MEMORY = ("work_memory", "weight_memory")
_KEYS = set(_LOAD_KEYS) | set(CALLER_MEMORY) | {
    "runtime", "calls", "rebind", "threads", "input_sizes", "output_sizes", "placement", "misalign", "overhang",
    "dangling", "share", "retry", "seed", "batch", "inputs", "onnx", "api", "move_work", "static_memory_policy",
    "session_peer", "after_unload", "missing", "buffer_in_work_memory"}
_POLICIES = ("0", "1", "2", "3")


def options_of(runtime: dict) -> LoadOptions:
    unknown = sorted(set(runtime) - _KEYS)
    if unknown:
        raise ScenarioError(f"runtime v1 scenario: unknown keys {unknown}; known: {sorted(_KEYS)}", key=", ".join(unknown))
    for pair in runtime.get("share", ()):
        if not (isinstance(pair, (list, tuple)) and len(pair) == 2 and all(isinstance(n, str) for n in pair)):
            raise ScenarioError(f"runtime v1 scenario: share entries are [name, name] pairs, got {pair!r}", key="share")
    if runtime.get("api", "direct") not in APIS:
        raise ScenarioError(f"runtime v1 scenario: api is one of {list(APIS)}, got {runtime['api']!r}", key="api")
    if runtime.get("inputs", "normal") not in ("normal", "ones"):
        raise ScenarioError(f"runtime v1 scenario: inputs is 'normal' or 'ones', got {runtime['inputs']!r}", key="inputs")
    if runtime.get("move_work") and not (runtime.get("work_memory") and runtime.get("feature_base_refreshable")):
        raise ScenarioError("runtime v1 scenario: move_work needs work_memory and feature_base_refreshable "
                            "(only a refreshable feature map in the caller's memory can move)", key="move_work")
    if runtime.get("retry") and int(runtime.get("calls", 1)) < 2:
        raise ScenarioError("runtime v1 scenario: retry needs calls >= 2 (a refused call, then the retry)", key="retry")
    if runtime.get("move_work") and runtime.get("api", "direct") != "direct":
        raise ScenarioError("runtime v1 scenario: move_work goes through the direct entry only: the ACL facade "
                            "has no call that moves the work memory", key="move_work")
    if "session_peer" in runtime:
        _check_peer(runtime)
    for key in ("after_unload", "missing"):
        if runtime.get(key) and runtime.get("api", "direct") != "direct":
            raise ScenarioError(f"runtime v1 scenario: {key} goes through the direct entry only", key=key)
    if not all(isinstance(n, str) for n in runtime.get("missing", ())):
        raise ScenarioError(f"runtime v1 scenario: missing lists I/O names, got {runtime['missing']!r}", key="missing")
    _check_in_work(runtime)
    rebind = runtime.get("rebind", True)
    if not isinstance(rebind, (bool, list)):
        raise ScenarioError(f"runtime v1 scenario: rebind is a boolean or a list of them, got {rebind!r}", key="rebind")
    return LoadOptions(**{k: runtime[k] for k in _LOAD_KEYS if k in runtime}, session=_session(runtime))


IN_WORK_ROLES = ("input", "output")


def _check_in_work(runtime: dict) -> None:
    if "buffer_in_work_memory" not in runtime:
        return
    if runtime["buffer_in_work_memory"] not in IN_WORK_ROLES:
        raise ScenarioError(f"runtime v1 scenario: buffer_in_work_memory is 'input' or 'output' (the role of the "
                            f"I/O whose buffer lies in the work memory), got {runtime['buffer_in_work_memory']!r}",
                            key="buffer_in_work_memory")
    if not runtime.get("work_memory"):
        raise ScenarioError("runtime v1 scenario: buffer_in_work_memory needs work_memory (the caller's work memory "
                            "the buffer lies in)", key="buffer_in_work_memory")


def _check_peer(runtime: dict) -> None:
    peer, calls = runtime["session_peer"], max(1, int(runtime.get("calls", 1)))
    if "static_memory_policy" not in runtime:
        raise ScenarioError("runtime v1 scenario: session_peer needs static_memory_policy (the session the peer "
                            "shares with the run)", key="session_peer")
    if isinstance(peer, bool) or not isinstance(peer, int) or not 0 <= peer <= calls:
        raise ScenarioError(f"runtime v1 scenario: session_peer is the call before which the peer is unloaded, an "
                            f"integer from 0 to calls ({calls}: after the run's unload), got {peer!r}",
                            key="session_peer")


def _session(runtime: dict) -> Session | None:
    """A fresh session with the run's static memory policy, or None when the run names none."""
    if "static_memory_policy" not in runtime:
        return None
    policy = runtime["static_memory_policy"]
    if policy not in _POLICIES:
        raise ScenarioError(f"runtime v1 scenario: static_memory_policy is one of {list(_POLICIES)} (a string), got "
                            f"{policy!r}", key="static_memory_policy")
    if runtime.get("api", "direct") != "direct":
        raise ScenarioError("runtime v1 scenario: static_memory_policy goes through the direct entry only: the ACL "
                            "facade loads into no session", key="static_memory_policy")
    if runtime.get("feature_base_refreshable"):
        raise ScenarioError("runtime v1 scenario: static_memory_policy with feature_base_refreshable: a feature map "
                            "taken from a session cannot move", key="static_memory_policy")
    return Session(policy)
