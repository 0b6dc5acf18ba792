"""MCGA: Multi-task Classical Chinese Literary Genre Audio Corpus (arXiv 2601.09270).

Plain-Python pieces of the benchmark, importable without lmms-eval:

- :mod:`mcga.prompts`   the official system and task prompts (``official_prompts.jsonl``, verbatim);
- :mod:`mcga.data`      reading the release layout ``data/MCGA_{task}_{split}.jsonl`` with row checks,
                        and fetching the official test archive from the Hugging Face hub;
- :mod:`mcga.normalize` the official Chinese CER text normaliser;
- :mod:`mcga.metrics`   the official scores (CER, SQA F1, SU/SR accuracy), their strict variants and CMC;
- :mod:`mcga.report`    CMC and per-task summary from lmms-eval results files.

Where the paper and the official script (``eval/eval_model.py`` in github.com/yxduir/MCGA) differ,
the script is followed, because it produced the published numbers.
"""
