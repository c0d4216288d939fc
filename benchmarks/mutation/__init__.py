"""The mutation-score benchmark's parts: mutator (sites and splices), sandbox (isolated copies), runs (one judge, time-limited), campaign (baseline, then verify, then the suite)."""
