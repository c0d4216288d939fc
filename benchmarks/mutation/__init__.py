"""The mutation-score benchmark's parts: mutator and tables (sites and splices), sandbox (isolated copies), runs (one
judge, time-limited), attribution (how verify failed), score (outcomes, scores, intervals), campaign (baseline,
then verify with its artefacts compared, then the suite where it decides)."""
