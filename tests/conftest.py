"""Shared fixtures. The CLI tests run the real ``lmms-eval`` console script of the active environment."""

import os
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture
def log_lines():
    """Messages loguru logs at WARNING and above while the test runs (the judge tests' warnings)."""
    from loguru import logger

    lines: list[str] = []
    sink = logger.add(lambda message: lines.append(message.record["message"]), level="WARNING")
    yield lines
    logger.remove(sink)


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


# ---------------------------------------------------------------- tiny random-weight checkpoints (tests/tiny_checkpoints.py)


@pytest.fixture(scope="session")
def checkpoints(tmp_path_factory):
    from tests.tiny_checkpoints import build_tiny_qwen2_5_omni, build_tiny_qwen2_audio

    root = tmp_path_factory.mktemp("checkpoints")
    return {"omni": build_tiny_qwen2_5_omni(root / "tiny-qwen2_5-omni"), "qwen2_audio": build_tiny_qwen2_audio(root / "tiny-qwen2-audio")}


@pytest.fixture(scope="session")
def tiny_qwen3_omni(tmp_path_factory):
    from tests.tiny_checkpoints import build_tiny_qwen3_omni_thinker

    return build_tiny_qwen3_omni_thinker(tmp_path_factory.mktemp("checkpoints") / "tiny-qwen3-omni-thinker")


@pytest.fixture(scope="session")
def broken_omni(checkpoints, tmp_path_factory):
    """The tiny Omni checkpoint with an 80-bin feature extractor for its 128-bin audio encoder: every audio doc raises."""
    import json

    path = Path(shutil.copytree(checkpoints["omni"], tmp_path_factory.mktemp("broken") / "omni"))
    config = json.loads((path / "preprocessor_config.json").read_text(encoding="utf-8"))
    (path / "preprocessor_config.json").write_text(json.dumps({**config, "feature_size": 80}), encoding="utf-8")
    return path
