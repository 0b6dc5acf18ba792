"""``audio-bench-report``: paper-style tables, figures and one HTML page from lmms-eval output folders.

Benchmark-neutral machinery lives here (reading runs, marks, published rows, writers, figures); each benchmark
contributes a ``<package>/report_layout.py`` (its tables and figures, built with :mod:`audio_bench_report.tables`)
and a ``<package>/published.json`` (the paper's numbers with their sources and full test-set sizes). A task
``<package>_<name>`` in a results file selects ``<package>.report_layout``; nothing else needs registering.
Importing this package does not import lmms-eval; figures need matplotlib.
"""
