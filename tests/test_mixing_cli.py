"""One lmms-eval run mixing a built-in audio benchmark with ours (issue 18), through the real CLI, offline.

The built-in task is ``librispeech_test_clean`` with its YAML unchanged, reading a local copy of its hub dataset in
the hub's parquet layout (:mod:`tests.builtin_task_copies`: a folder ``lmms-lab-audio/librispeech`` in the working
directory), decoded by the installed ``datasets`` (``Audio`` column). Ours: ``mcga_asr`` and ``parsa_vazn`` on
2-document copies of the shipped samples. ``audio_forms`` (``tests/fixtures/audio_forms_task``, given with
``--include_path``) hands one clip in every form lmms-eval tasks use. Each model of ours runs once over all of them.

What each Qwen model received is recorded by ``tests/model_trace`` (prompt, audio lengths and sha1 of the float32
samples, image sizes) and compared with the clip each form carries.
"""

from __future__ import annotations

import csv
import hashlib
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile

from audio_bench_core.responses import GENERATION_FAILED_PREFIX
from mcga import data as mcga_data
from tests.builtin_task_copies import (
    GSM8K_TEST,
    LIBRISPEECH_ROWS,
    MMAC_AUDIO,
    write_gsm8k,
    write_librispeech_test_clean,
    write_mme,
)

ROOT = Path(__file__).resolve().parents[1]
FORMS_TASK = Path(__file__).resolve().parent / "fixtures" / "audio_forms_task"
TRACE_DIR = Path(__file__).resolve().parent / "model_trace"
MIXED = "librispeech_test_clean,audio_forms,mcga_asr,parsa_vazn"
FORM_CLIP = MMAC_AUDIO / "content_en_01.wav"
#: lmms-eval's CLI with this plugin's entry point hidden: lmms-eval then runs exactly as without the plugin installed
#: (it finds our tasks and models only through that entry point).
WITHOUT_PLUGIN = (
    "import importlib.metadata as md, sys\n"
    "_entry_points = md.entry_points\n"
    "def entry_points(**kwargs):\n"
    "    found = _entry_points(**kwargs)\n"
    "    return md.EntryPoints([ep for ep in found if not ep.value.startswith('lmms_eval_tasks')]) if isinstance(found, md.EntryPoints) else found\n"
    "md.entry_points = entry_points\n"
    "from lmms_eval.cli.dispatch import main\n"
    "sys.argv = ['lmms-eval', *sys.argv[1:]]\n"
    "sys.exit(main())\n"
)
pytestmark = pytest.mark.cli


def missing_task_includes() -> list[str]:
    """``include:`` targets of lmms-eval's own task YAML that are not installed. lmms-eval builds its index from every
    task file on each CLI run and stops at the first one missing: lmms-eval 0.7.2 on PyPI (wheel and sdist) ships
    no ``_default_template_yaml`` file at all, so no CLI run of that release works, with or without this plugin."""
    import re

    import lmms_eval

    tasks = Path(lmms_eval.__file__).parent / "tasks"
    missing = []
    for path in tasks.rglob("*.yaml"):
        for target in re.findall(r"^include:\s*(\S+)\s*$", path.read_text(encoding="utf-8", errors="replace"), flags=re.M):
            if not (path.parent / target.strip("'\"")).exists():
                missing.append(f"{path.relative_to(tasks)} -> {target}")
    return sorted(missing)


@pytest.fixture(autouse=True)
def _lmms_eval_cli_can_run():
    missing = missing_task_includes()
    if missing:
        pytest.skip(f"the installed lmms-eval {importlib.metadata.version('lmms-eval')} cannot run any CLI task: {len(missing)} of its task files include files "
                    f"it does not ship (first: {missing[0]}); a packaging fault of that release, not of this plugin")


# ---------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """Working directory of the runs: the local hub copies, 2-document copies of our samples, the forms task."""
    root = tmp_path_factory.mktemp("mixing")
    write_librispeech_test_clean(root)
    write_mme(root)
    write_gsm8k(root)
    mcga_dir = Path(shutil.copytree(mcga_data.SAMPLE_DATA_DIR, root / "mcga_data"))
    rows = (mcga_dir / "MCGA_asr_test.jsonl").read_text(encoding="utf-8").splitlines()[:2]
    (mcga_dir / "MCGA_asr_test.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    vazn = Path(shutil.copytree(ROOT / "parsa" / "sample_data" / "Poetry-Vazn", root / "parsa_data" / "Poetry-Vazn"))
    with open(vazn / "Poetry-Vazn.csv", encoding="utf-8", newline="") as handle:
        table = list(csv.reader(handle))
    with open(vazn / "Poetry-Vazn.csv", "w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows(table[:3])
    # the first clip as GSM 06.10 (a WAV subtype libsndfile cannot seek in): the data check must accept what the loader decodes
    first_clip = vazn / "Audios" / "vazn_01.wav"
    samples, rate = soundfile.read(first_clip, dtype="float32")
    soundfile.write(first_clip, samples, rate, format="WAV", subtype="GSM610")
    forms = Path(shutil.copytree(FORMS_TASK, root / "forms_task"))
    sys.path.insert(0, str(forms))
    try:
        import forms as forms_module
    finally:
        sys.path.remove(str(forms))
    first_second = soundfile.read(FORM_CLIP, dtype="float32")[0][:16000].tolist()
    documents = [{"id": f"form_{form}", "form": form, "clip": str(FORM_CLIP), "gt": "", "audio": None} for form in forms_module.FORMS]
    documents[-1]["audio"] = {"path": "doc_only_0.wav", "array": first_second, "sampling_rate": 16000}  # in_document
    (forms / "audio_forms.jsonl").write_text("".join(json.dumps(d) + "\n" for d in documents), encoding="utf-8")
    unreadable = [{"id": "readable", "form": "path", "clip": str(FORM_CLIP), "gt": ""}, {"id": "unreadable", "form": "unreadable_bytes", "clip": str(FORM_CLIP), "gt": ""}]
    (forms / "audio_forms_unreadable.jsonl").write_text("".join(json.dumps(d) + "\n" for d in unreadable), encoding="utf-8")
    return {"root": root, "MCGA_DATA_DIR": str(mcga_dir), "PARSA_DATA_DIR": str(root / "parsa_data"), "forms": forms, "FORMS": forms_module.FORMS}


@pytest.fixture(scope="module")
def tiny(checkpoints, tiny_qwen3_omni):
    return {"qwen2_5_omni": checkpoints["omni"], "qwen3_omni": tiny_qwen3_omni}


def run(command, workdir, tmp_path, env, name):
    """Run ``command`` (CLI arguments after the program) in the work folder; (returncode, log, results or None, {task: samples}, trace)."""
    out, trace = tmp_path / f"out_{name}", tmp_path / f"trace_{name}.jsonl"
    env = {**env, "PYTHONPATH": os.pathsep.join([str(ROOT), str(TRACE_DIR), env.get("PYTHONPATH", "")]), "MODEL_TRACE": str(trace),
           "MCGA_DATA_DIR": workdir["MCGA_DATA_DIR"], "PARSA_DATA_DIR": workdir["PARSA_DATA_DIR"]}  # fmt: skip
    command = [*command, "--output_path", str(out), "--log_samples"]
    result = subprocess.run(command, env=env, cwd=workdir["root"], capture_output=True, text=True, timeout=900)
    results_files = sorted(out.rglob("*_results.json"))
    results = json.loads(results_files[-1].read_text(encoding="utf-8")) if results_files else None
    samples = {}
    for file in sorted(out.rglob("*_samples_*.jsonl")):
        samples[file.name.split("_samples_", 1)[1][: -len(".jsonl")]] = [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines()]
    records = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()] if trace.exists() else []
    return result.returncode, result.stdout + result.stderr, results, samples, records


def answer(sample) -> str:
    response = sample["filtered_resps"]
    return response[0] if isinstance(response, list) else response


def sha1(samples) -> str:
    return hashlib.sha1(np.ascontiguousarray(samples, dtype=np.float32).tobytes()).hexdigest()


# ---------------------------------------------------------------- item 1: mixing in the documented install


@pytest.mark.lmms_eval_versions
def test_builtin_audio_task_mixed_with_ours_scores_every_task_and_the_plugin_changes_none_of_its_output(lmms_eval_cli, offline_env, workdir, tmp_path):
    response = "THE LIBRARY OPENS AT NINE"
    args = ["--model", "dummy", "--model_args", f"response={response}", "--verbosity", "DEBUG"]
    code, log, without, without_samples, _ = run([sys.executable, "-c", WITHOUT_PLUGIN, "--tasks", "librispeech_test_clean", *args], workdir, tmp_path, offline_env, "without")
    assert code == 0 and without is not None, log[-4000:]
    code, log, mixed, mixed_samples, _ = run([lmms_eval_cli, "--tasks", "librispeech_test_clean,mcga_asr,parsa_vazn", *args], workdir, tmp_path, offline_env, "mixed")
    assert code == 0, log[-4000:]
    assert set(mixed["results"]) == {"librispeech_test_clean", "mcga_asr", "parsa_vazn"}
    # WER of the fixed answer after lmms-eval's Whisper English normaliser ("the library opens at 9"; it reads "nine
    # o'clock" as "90 clock") against the three references (15, 13, 12 words): 4 hits, 1 substitution, 10 deletions;
    # 5 substitutions + 8 deletions; "the" hits, 4 substitutions + 7 deletions: 35 errors in 40 words.
    assert mixed["results"]["librispeech_test_clean"]["wer,none"] == pytest.approx(87.5)
    assert mixed["results"]["librispeech_test_clean"] == without["results"]["librispeech_test_clean"]
    assert mixed_samples["librispeech_test_clean"] == without_samples["librispeech_test_clean"] and len(mixed_samples["librispeech_test_clean"]) == 3
    assert [s["target"] for s in mixed_samples["librispeech_test_clean"]] == [text for _, _, text in LIBRISPEECH_ROWS]
    assert mixed["results"]["mcga_asr"]["failed_generations,none"] == 0 and isinstance(mixed["results"]["mcga_asr"]["cer_official,none"], float)
    assert mixed["results"]["parsa_vazn"]["scored,none"] + mixed["results"]["parsa_vazn"]["excluded,none"] == 2
    # item 5: the lmms-eval that ran, not the commit of the clone holding the venv
    assert mixed["lmms_eval_version"] == importlib.metadata.version("lmms-eval") and mixed["git_hash"] is None


@pytest.mark.lmms_eval_versions
def test_a_failing_run_without_our_tasks_or_models_keeps_lmms_eval_exit_status(lmms_eval_cli, offline_env, workdir, tmp_path):
    """lmms-eval exits 0 on a failed run; the plugin's exit 1 applies only to runs naming our tasks or models."""
    code, log, results, _, _ = run([lmms_eval_cli, "--tasks", "librispeech_test_clean,no_such_task", "--model", "dummy"], workdir, tmp_path, offline_env, "theirs")
    assert code == 0 and results is None and "no_such_task" in log and "lmms-eval run failed" not in log
    code, log, results, _, _ = run([lmms_eval_cli, "--tasks", "mcga_asr,no_such_task", "--model", "dummy"], workdir, tmp_path, offline_env, "ours")
    assert code == 1 and results is None and log.strip().splitlines()[-1].startswith("lmms-eval run failed: ") and "no_such_task" in log.strip().splitlines()[-1]


# ---------------------------------------------------------------- item 2: every audio form, every model of ours


@pytest.fixture(scope="module")
def faster_whisper_run(lmms_eval_cli, workdir, tmp_path_factory):
    env = {k: v for k, v in os.environ.items() if k != "MCGA_DATA_DIR"}
    env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", HF_DATASETS_CACHE=str(tmp_path_factory.mktemp("hf")), PYTHONUNBUFFERED="1")
    command = [lmms_eval_cli, "--tasks", MIXED, "--include_path", str(workdir["forms"]), "--model", "faster_whisper", "--model_args", "beam_size=1", "--verbosity", "DEBUG"]  # greedy: faster, and enough here
    folder = tmp_path_factory.mktemp("fw")
    return {"run": run(command, workdir, folder, env, "faster_whisper"), "env": env, "out": folder / "out_faster_whisper"}


def test_faster_whisper_serves_a_builtin_audio_task_and_every_audio_form(faster_whisper_run, workdir):
    code, log, results, samples, _ = faster_whisper_run["run"]
    assert code == 0, log[-4000:]
    assert set(results["results"]) == set(MIXED.split(","))
    librispeech = [answer(s) for s in samples["librispeech_test_clean"]]
    assert len(librispeech) == 3 and all(a.strip() for a in librispeech)  # decoded from the parquet's Audio column
    assert results["results"]["librispeech_test_clean"]["wer,none"] < 30  # Whisper-base on clear espeak English
    by_form = {s["answered"]["form"]: s["answered"]["answer"] for s in samples["audio_forms"]}
    assert set(by_form) == set(workdir["FORMS"]) and all(a.strip() for a in by_form.values()), by_form
    same_clip = [f for f in workdir["FORMS"] if f not in ("dict_stereo_44k", "in_document")]
    assert {by_form[f] for f in same_clip} == {by_form["path"]}, by_form  # the same 16 kHz samples whatever the form
    assert "library" in by_form["path"].lower()
    assert results["results"]["mcga_asr"]["empty_responses,none"] == 0 and results["results"]["parsa_vazn"]["failed_generations,none"] == 0


def expected_form_audio() -> dict:
    """sha1 of the 16 kHz float32 samples each form must reach the model as (stereo 44.1 kHz: only its length)."""
    clip = soundfile.read(FORM_CLIP, dtype="float32")[0]
    return {"clip": sha1(clip), "first_second": sha1(clip[:16000]), "stereo_length": int(np.ceil(np.ceil(len(clip) * 44100 / 16000) * 16000 / 44100))}


QWEN_RUNS = {
    "qwen2_5_omni": ("qwen2_5_omni", []),
    "qwen2_5_omni_simple": ("qwen2_5_omni", ["--force_simple"]),
    "qwen3_omni": ("qwen3_omni", []),
}


@pytest.mark.parametrize("name", [pytest.param(name, marks=pytest.mark.lmms_eval_versions) if name == "qwen2_5_omni" else name for name in QWEN_RUNS])
def test_qwen_omni_serves_a_builtin_audio_task_and_every_audio_form(name, lmms_eval_cli, offline_env, workdir, tmp_path, tiny):
    model, extra = QWEN_RUNS[name]
    tasks = MIXED + ",audio_forms_unreadable"
    command = [lmms_eval_cli, "--tasks", tasks, "--include_path", str(workdir["forms"]), "--model", model, "--model_args", f"pretrained={tiny[model]}", *extra]
    code, log, results, samples, records = run(command, workdir, tmp_path, offline_env, name)
    assert code == 0, log[-4000:]
    assert set(results["results"]) == set(tasks.split(","))
    for task in ("librispeech_test_clean", "audio_forms", "mcga_asr", "parsa_vazn"):
        answers = [answer(s) for s in samples[task]]
        assert answers and all(a.strip() and not a.startswith(GENERATION_FAILED_PREFIX) for a in answers), (task, answers)
    calls = [r for r in records if r["kind"] == "processor"]
    expected = expected_form_audio()
    # librispeech: chat models get lmms-eval's automatic message naming the Audio "path" ("0.wav"), simple ones the
    # decoded dict; either way the model gets the stored clip, decoded.
    libri = [r for r in calls if "Please recognize the speech" in r["text"][0]]
    assert sorted(r["audio_sha1"][0] for r in libri) == sorted(sha1(soundfile.read(MMAC_AUDIO / f"{clip}.wav", dtype="float32")[0]) for clip, _, _ in LIBRISPEECH_ROWS)
    forms = [r for r in calls if "Transcribe the audio." in r["text"][0]]
    assert len(forms) == len(workdir["FORMS"]) + 1  # + the readable document of audio_forms_unreadable
    received = sorted(r["audio_sha1"][0] for r in forms if r["audio"][0][0] != expected["stereo_length"])
    # in_document: the chat class reads the document's clip by the path its message names; the simple one gets that dict
    assert received == sorted([expected["clip"]] * (len(workdir["FORMS"]) - 2) + [expected["first_second"]] + [expected["clip"]])
    assert sum(r["audio"][0][0] == expected["stereo_length"] for r in forms) == 1
    # the unreadable bytes: counted as a failed generation, handed to the (not ours) task as "", never as text
    failed = results["lmms_eval_audio_plugin"]["failed_generations"]
    assert set(failed) == {"audio_forms_unreadable"} and failed["audio_forms_unreadable"]["failed"] == 1 and failed["audio_forms_unreadable"]["requests"] == 2
    assert failed["audio_forms_unreadable"]["first_error"].startswith("generation raised: OSError: cannot decode audio bytes")
    assert sorted(answer(s) == "" for s in samples["audio_forms_unreadable"]) == [False, True]
    assert "generation failed for 1 of 2 documents of audio_forms_unreadable" in log


# ---------------------------------------------------------------- item 3: failed generations on a built-in task


def test_failed_generations_are_never_a_builtin_tasks_transcript_and_fail_the_run(lmms_eval_cli, offline_env, workdir, tmp_path, broken_omni):
    command = [lmms_eval_cli, "--tasks", "librispeech_test_clean", "--model", "qwen2_5_omni", "--model_args", f"pretrained={broken_omni}"]
    code, log, results, samples, _ = run(command, workdir, tmp_path, offline_env, "broken")
    # issue 27: the task is marked failed, its figures withheld with the reason; results and samples written; exit 1
    assert code == 1 and results is not None, log[-4000:]
    [reason] = results["lmms_eval_audio_plugin"]["task_status"]["librispeech_test_clean"]["reasons"]
    figures = {k: v for k, v in results["results"]["librispeech_test_clean"].items() if k != "alias" and "_stderr" not in k}
    assert figures and set(figures.values()) == {f"not computed: {reason}"}, figures
    assert len(samples["librispeech_test_clean"]) == 3
    last = log.strip().splitlines()[-1]
    assert last.startswith("lmms-eval run failed: FailedRunError: librispeech_test_clean: failed run: generation failed for 3 of 3 documents"), last
    assert "generation failed for 3 of 3 documents of librispeech_test_clean; they were handed to librispeech_test_clean as empty answers" in log


# ---------------------------------------------------------------- item 6: several processes


def test_two_processes_give_the_same_numbers_as_one_in_a_mixed_run(faster_whisper_run, workdir, tmp_path):
    """The one-process faster_whisper run's answers replayed in two processes (torch.distributed.run on CPU)."""
    code, log, single, _, _ = faster_whisper_run["run"]
    assert code == 0, log[-4000:]
    out, env = faster_whisper_run["out"], faster_whisper_run["env"]
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "-m", "lmms_eval", "--tasks", MIXED, "--include_path", str(workdir["forms"]),
               "--model", "replay", "--model_args", f"predictions={out}", "--verbosity", "DEBUG"]  # fmt: skip
    code, log, sharded, _, _ = run(command, workdir, tmp_path, env, "two")
    assert code == 0, log[-4000:]
    assert "world_size2" in log
    for task in MIXED.split(","):
        assert sharded["results"][task] == single["results"][task], task
    assert sharded["n-samples"] == single["n-samples"]


# ---------------------------------------------------------------- item 4: the names keep serving images and text


def test_qwen2_5_omni_serves_an_image_task_and_a_text_task_as_lmms_eval_does(lmms_eval_cli, offline_env, workdir, tmp_path, tiny):
    # gsm8k_cot_zeroshot, not the 5-shot gsm8k: lmms-eval 0.7.3 cannot build few-shot contexts for chat models at all
    # ("'ConfigurableMessagesTask' object has no attribute 'sampler'", whatever the model).
    command = [lmms_eval_cli, "--tasks", "mme,gsm8k_cot_zeroshot", "--model", "qwen2_5_omni", "--model_args", f"pretrained={tiny['qwen2_5_omni']}", "--verbosity", "DEBUG"]
    code, log, results, samples, records = run(command, workdir, tmp_path, offline_env, "image_text")
    assert code == 0, log[-4000:]
    assert isinstance(results["results"]["mme"]["mme_perception_score,none"], float) and isinstance(results["results"]["mme"]["mme_cognition_score,none"], float)
    assert "exact_match,strict-match" in results["results"]["gsm8k_cot_zeroshot"]
    for task in ("mme", "gsm8k_cot_zeroshot"):
        assert all(answer(s).strip() and not answer(s).startswith(GENERATION_FAILED_PREFIX) for s in samples[task]), task
    calls = [r for r in records if r["kind"] == "processor"]
    images = [r for r in calls if r["images"]]
    # lmms-eval's chat class resizes to at most 512 x 512 pixels in multiples of 28 (qwen_vl_utils.fetch_image):
    # 800 x 600 -> 588 x 420 (shrunk by sqrt(800*600/512^2), floored to 28s); 320 x 240 -> 308 x 252 (rounded to 28s).
    assert sorted(tuple(r["images"][0]) for r in images) == [(308, 252), (308, 252), (588, 420), (588, 420)]
    text_only = [r for r in calls if not r["images"] and not r["audio"]]
    questions = sorted(f"Q: {question}\nA: Let's think step by step." for question, _ in GSM8K_TEST)
    assert len(text_only) == 2 and sorted(r["text"][0].split("<|im_start|>user\n")[1].split("<|im_end|>")[0] for r in text_only) == questions

