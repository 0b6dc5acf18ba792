"""MMAC (free-form audio captioning judged per dimension; arXiv 2607.27109): schema, rubric, judge reply
contract, metrics, data loading and the judge-agreement command. Importing it does not import lmms-eval.

- :mod:`mmac.schema`: the 6 categories, the 15 dimensions, the one caption prompt;
- :mod:`mmac.judging`: the rubric (``rubric.json``), judge messages, the JSON reply contract, the signature;
- :mod:`mmac.metrics`: Coverage / Precision / Accuracy, category-macro, caption lengths, Kendall's W;
- :mod:`mmac.data`: the canonical schema, the column map (``column_map.json``), ``mmac-data check``;
- :mod:`mmac.agreement`: ``mmac-agreement``, several judges (and humans) on the same captions.

The lmms-eval tasks are in ``lmms_eval_tasks/mmac/``.
"""
