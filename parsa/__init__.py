"""PARSA-Bench (Persian speech, paralinguistics and culture): prompts, parsers and metrics.

Not implemented yet (tracked in its own issue); the package exists so the layout matches the design:
one folder per benchmark here and one under ``lmms_eval_tasks/``.
"""
