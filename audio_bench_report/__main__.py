"""``python -m audio_bench_report`` = ``audio-bench-report``."""

import sys

from audio_bench_report.cli import main

sys.exit(main())
