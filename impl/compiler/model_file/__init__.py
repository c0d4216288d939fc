"""The .zcm model file: encode a CompiledModel, load and validate one."""
