"""The invariant catalogue, one module per concern; each module's ``INVARIANTS`` lists its claims in
document order (``spec.registry.CONCERNS`` lists the modules)."""
