"""Readers of other compilers' memory plans: each turns a saved artefact into the spec's plan observation."""
