"""Fault detection: deliberately wrong variants of impl, each hunted by the checker (issue 9).

``registry.variants()`` is the catalogue, ``registry.active(name)`` installs one,
``hunt.hunt(variant, seed)`` hunts it. See docs/fault-detection.md.
"""
