"""The platform: what the compiler and the device both need, importing nothing else of zcspec.

- ``dtypes``: element types and byte sizes;
- ``soc``: the SoC profiles (what the hardware supports);
- ``kernel_ops``: the op types the device's kernel library runs;
- ``errors``: the roots of the error taxonomy (``ZcspecError``, ``BadInput``) and the
  platform's own errors.

Layering (docs/errors.md): platform <- compiler, device <- runtime <- checks; the
spec stands alone. tests/test_imports.py enforces it.
"""
