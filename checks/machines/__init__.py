"""Hypothesis state machines over the runtimes' lifecycles; the spec is checked after every step."""
