"""The invariant catalogue, one module per concern; each module's ``INVARIANTS`` lists its claims in
document order (``zcspec.spec.registry.CONCERNS`` lists the modules)."""
