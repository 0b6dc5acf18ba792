"""The data a task loaded is part of lmms-eval's response-cache key (audio_bench_core/data_identity.py).

The key's task part is lmms-eval's own fingerprint of the task config (``ResponseCache.create`` in
``lmms_eval/caching/response_cache.py``); these tests compute it the way lmms-eval does, through its
``TaskConfig.to_dict``. The CLI test with ``--use_cache`` and two data folders is in test_answers_cli.py.
"""

import json
import os
import re
import shutil

import pytest

from audio_bench_core.data_identity import DocsLoader, data_digest
from lmms_eval_tasks.mcga import hooks as mcga_hooks
from lmms_eval_tasks.mmac import hooks as mmac_hooks
from lmms_eval_tasks.parsa import hooks as parsa_hooks
from mcga import data as mcga_data


def lmms_eval_task_fingerprint(process_docs) -> str:
    """The config part of lmms-eval 0.7's cache key for a task whose only varying field is ``process_docs``."""
    from lmms_eval.api.task import TaskConfig

    config = TaskConfig(task="t", process_docs=process_docs)
    text = json.dumps(config.to_dict(), sort_keys=True, default=str)
    return re.sub(r" at 0x[0-9a-fA-F]+>", ">", text)


def test_every_mcga_parsa_and_mmac_task_loads_through_a_docs_loader():
    from lmms_eval_tasks import TASKS_DIR

    names = set()
    for path in TASKS_DIR.rglob("*"):
        if path.is_file() and (path.suffix == ".yaml" or path.name.startswith("_")):
            names |= set(re.findall(r"process_docs: !function lmms_eval_tasks\.\w+\.hooks\.(\w+)", path.read_text(encoding="utf-8")))
    modules = {"mcga": mcga_hooks, "parsa": parsa_hooks, "mmac": mmac_hooks}
    assert len(names) == 9 + 71 + 6
    for name in names:
        assert isinstance(getattr(modules[name.split("_")[0]], name), DocsLoader), name


def test_the_task_fingerprint_changes_with_the_rows_and_the_clips_not_with_the_process(tmp_path, monkeypatch):
    first = tmp_path / "first"
    shutil.copytree(mcga_data.SAMPLE_DATA_DIR, first)
    second = tmp_path / "second"
    shutil.copytree(first, second)
    rows = [json.loads(line) for line in (second / "MCGA_asr_test.jsonl").read_text(encoding="utf-8").splitlines()]
    rows[0]["asr"] = rows[1]["asr"]  # another release: one transcript differs, same count, same prompt
    (second / "MCGA_asr_test.jsonl").write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")

    def fingerprint(folder):
        monkeypatch.setenv("MCGA_DATA_DIR", str(folder))
        mcga_hooks.mcga_asr_docs(None)
        return lmms_eval_task_fingerprint(mcga_hooks.mcga_asr_docs)

    a, b = fingerprint(first), fingerprint(second)
    assert a != b and "mcga_asr_docs(data=sha256:" in a
    assert fingerprint(first) == a  # the same data: the same key, so the cache still serves it
    clip = first / rows[0]["audio"]
    os.utime(clip, ns=(clip.stat().st_atime_ns, clip.stat().st_mtime_ns + 10**9))  # a clip rewritten in place
    assert fingerprint(first) != a


def test_data_digest_reads_rows_and_clip_stats_only():
    rows = [{"id": "1", "audio_path": "/nonexistent/a.wav", "asr": "床前明月光"}]
    assert data_digest(rows) == data_digest([dict(rows[0])]) and re.fullmatch(r"sha256:[0-9a-f]{16}", data_digest(rows))
    assert data_digest(rows) != data_digest([{**rows[0], "asr": "疑是地上霜"}])
    assert data_digest(rows) != data_digest(rows + rows)


@pytest.mark.parametrize("loader", [parsa_hooks.parsa_gender_docs, mmac_hooks.mmac_content_docs])
def test_parsa_and_mmac_loaders_name_their_data(loader):
    docs = loader(None)
    assert str(loader) == f"{loader.name}(data={data_digest(docs)})"
