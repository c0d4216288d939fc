"""Catalogues of reference cases: other projects' own test cases, rebuilt on zcspec and run by ``zcspec verify``.

Each catalogue (``checks/cases/ge``: GE's memory-assignment and runtime unit tests) holds the cases as plain
functions with their provenance and status, so that both pytest (tests/ge) and verify's phase run the same
code and a case that matched the reference cannot silently stop matching in an installed zcspec.
"""
