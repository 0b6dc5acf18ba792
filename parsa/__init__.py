"""PARSA-Bench (Persian speech, paralinguistics and culture; arXiv 2603.14456): 16 tasks, plain Python.

Importable without lmms-eval. ``tasks`` (the 16 tasks, settings, decoding), ``prompts`` (``prompts.json``),
``parsing`` (answers out of model output), ``normalize`` (the Persian normaliser), ``metrics``, ``scoring``
(``score_response`` / ``metric_names`` / ``aggregate``, used by the lmms-eval hooks) and ``data``
(the CSV/parquet/hub loader with its one column mapping, ``column_map.json``).
"""
