"""Shared fixtures. The CLI tests run the real ``lmms-eval`` console script of the active environment."""

import os
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture
def offline_env(tmp_path):
    """Environment for subprocess runs: offline hub, private caches, no data override, no judge settings."""
    env = {k: v for k, v in os.environ.items() if k not in ("MCGA_DATA_DIR", "DEEPSEEK_API_KEY") and not k.startswith("AUDIO_JUDGE_")}
    env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", HF_DATASETS_CACHE=str(tmp_path / "hf_datasets"), PYTHONUNBUFFERED="1")
    return env


@pytest.fixture(scope="session")
def lmms_eval_cli() -> str:
    beside = Path(sys.executable).with_name("lmms-eval")  # this interpreter's environment first (make test-lmms-eval-0.7.2)
    path = str(beside) if beside.exists() else shutil.which("lmms-eval") or str(beside)
    if not Path(path).exists():
        pytest.fail("the lmms-eval console script is not installed in this environment")
    return path
