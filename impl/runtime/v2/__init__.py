"""Runtime v2: a compiled model lowered to an execution graph of kernel nodes (GE's gert executor).

Pipeline: ``lowering.lower(model, options) -> ExeGraph`` -> ``passes.run_passes`` (ModelOutTensorZeroCopy,
TrustOutTensor) -> ``executor.StreamExecutor`` runs the graph's kernels on an emulated device.
Entry points: ``executor.load_stream_executor``, ``single_op.SingleOpExecutor``, ``runner.run``.
"""
