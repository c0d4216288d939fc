"""Task generation: Graph + MemoryPlan -> TaskList."""
