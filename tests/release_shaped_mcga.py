"""A synthetic MCGA test set in the real release's shape, with official-runner output rows.

Why: the real release (``yxdu/MCGA``, CC BY-NC-SA 4.0) cannot be downloaded here, and the shipped sample is
tiny. This module writes, deterministically (``random.Random(SEED)``), 1,000 rows per task for ASR, SQA, SU
and SR, shaped like the release as issue 8 describes it:

- ASR: 1,000 clips, about 200 per genre, **915 distinct ids** (53 ids on 138 rows: one text, several speakers);
  SQA: 999 distinct ids (one id asks two different questions); SU, SR: 999 distinct ids (one id read twice).
  ``audio`` is unique per row (``upload/<speaker>/<n>-<timestamp>.wav``); the extra release fields
  ``source`` (speaker code), ``time``, ``prompt``, ``check_score``, ``sex`` are present.
- The model outputs (``asr_r``, ``sqa_a_r``, ``su_r``, ``sr_r``) are noisy the way real audio LLMs are: exact
  answers, traditional script (OpenCC ``s2t``), preambles (``"转写如下：\\n"``, ``"答:'...'"``), dropped and
  substituted characters, repetition loops past 100 characters, refusals, empty answers, ``"ABCD"``,
  answer-then-distractor, the option's text instead of its letter, lower-case letters.

The texts are made by joining clauses of public-domain classical works (the sample's own texts); they are
not MCGA's. Labels (genre, dynasty, answers) are drawn at random: this set checks that scores are computed
the official way, not what any model knows.

Two uses:

- ``write_release(folder, audio=True)``: ``folder/data/MCGA_{task}_test.jsonl`` plus a tiny wav per clip
  (0.2 s, 16 kHz; the loader needs each row's audio to decode) and the official runner's output files
  ``folder/runner/{task}/synthetic_audio.jsonl`` (the dataset row plus the output field).
- ``python tests/release_shaped_mcga.py OUT`` writes the runner rows only (no audio), for the official scorer
  (see ``tests/fixtures/README_mcga_release_shaped.md``).
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from functools import lru_cache
from pathlib import Path

SEED = 20251209
ROWS_PER_TASK = 1000
GENRES = ("诗", "词", "曲", "赋", "文")
DYNASTIES = ("先秦", "汉", "魏晋", "南北朝", "隋", "唐", "五代", "宋", "元", "明", "清")
OUTPUT_FIELD = {"asr": "asr_r", "sqa": "sqa_a_r", "su": "su_r", "sr": "sr_r"}
RUNNER_FILE = "synthetic_audio.jsonl"

# Clauses of public-domain works (the shipped sample's texts, and a few lines with 乾/后/发/里 whose
# traditional forms are ambiguous); texts are 2-6 clauses joined with Chinese punctuation.
CLAUSES = (
    "床前明月光", "疑是地上霜", "举头望明月", "低头思故乡", "关关雎鸠", "在河之洲", "窈窕淑女", "君子好逑",
    "明月几时有", "把酒问青天", "不知天上宫阙", "今夕是何年", "我欲乘风归去", "又恐琼楼玉宇", "高处不胜寒",
    "昨夜雨疏风骤", "浓睡不消残酒", "试问卷帘人", "却道海棠依旧", "应是绿肥红瘦", "枯藤老树昏鸦", "小桥流水人家",
    "古道西风瘦马", "夕阳西下", "断肠人在天涯", "峰峦如聚", "波涛如怒", "山河表里潼关路", "伤心秦汉经行处",
    "宫阙万间都做了土", "六王毕", "四海一", "蜀山兀", "阿房出", "覆压三百余里", "隔离天日", "壬戌之秋", "七月既望",
    "苏子与客泛舟游于赤壁之下", "清风徐来", "水波不兴", "山不在高", "有仙则名", "水不在深", "有龙则灵", "斯是陋室",
    "惟吾德馨", "晋陶渊明独爱菊", "自李唐来", "世人甚爱牡丹", "予独爱莲之出淤泥而不染", "濯清涟而不妖",
    "夜深乾清宫里静", "白发三千丈", "后会有期", "天地玄黄", "宇宙洪荒", "日月盈昃", "辰宿列张", "寒来暑往", "秋收冬藏",
)
PUNCTUATION = ("，", "。", "；", "！", "？", "、")
AUTHORS = ("李白", "杜甫", "苏轼", "李清照", "马致远", "张养浩", "杜牧", "刘禹锡", "周敦颐", "王维", "白居易", "辛弃疾")
TITLES = ("《静夜思》", "《关雎》", "《水调歌头》", "《如梦令》", "《天净沙·秋思》", "《阿房宫赋》", "《赤壁赋》", "《陋室铭》", "《爱莲说》", "《千字文》")
SQA_TEMPLATES = (
    ("这个作品的体裁是什么？", GENRES),
    ("这个作品所属的朝代是什么？", DYNASTIES),
    ("这个诗的题目是什么？", TITLES),
    ("这个词的作者是谁？", AUTHORS),
)
OPTION_POOL = (
    "思乡之情", "边塞豪情", "闲适自得", "离别之苦", "怀古伤今", "壮志难酬", "爱国情怀", "隐逸之趣", "春日欢愉", "秋日悲凉",
    "对友人的思念", "对仕途的失望", "对自然的赞美", "对百姓的同情", "玉", "剑", "金", "珠", "月", "柳",
)
SPEAKERS = tuple(f"spk{n:02d}" for n in range(28))  # the paper: 28 readers


def _text(rng: random.Random) -> str:
    clauses = rng.sample(CLAUSES, rng.randint(2, 6))
    return "".join(c + rng.choice(PUNCTUATION) for c in clauses[:-1]) + clauses[-1] + "。"


def _ids(rng: random.Random, rows: int, groups: list[int]) -> list[str]:
    """Text ids for ``rows`` rows: one id per entry of ``groups`` repeated that many times, the rest single."""
    sizes = groups + [1] * (rows - sum(groups))
    rng.shuffle(sizes)
    ids = []
    for text_number, size in enumerate(sizes, start=1):
        ids += [f"{text_number}-{rng.randint(1, 3)}"] * size
    return ids


def _clip(rng: random.Random, row_number: int) -> dict:
    speaker = rng.choice(SPEAKERS)
    stamp = 20251014000000 + row_number * 7919
    return {
        "audio": f"upload/{speaker}/{row_number}-{stamp}.wav",
        "source": speaker,
        "time": round(rng.uniform(3.5, 30.0), 2),
        "prompt": "<|cmn|><|cmn|>",
        "check_score": rng.choice((4, 5)),
    }


@lru_cache(maxsize=1)
def _s2t_converter():
    import opencc

    return opencc.OpenCC("s2t")


def _s2t(text: str) -> str:
    return _s2t_converter().convert(text)


def _asr_output(rng: random.Random, ref: str) -> str:
    kind = rng.random()
    chars = list(ref)
    if kind < 0.35:
        return ref
    if kind < 0.50:
        return _s2t(ref)
    if kind < 0.58:
        return rng.choice(("转写如下:\n", "Here is the transcription:\n", "识别结果：\n")) + ref
    if kind < 0.62:
        return f"答:'{ref}'"
    if kind < 0.80:
        for _ in range(rng.randint(1, 4)):
            position = rng.randrange(len(chars))
            operation = rng.random()
            if operation < 0.4:
                chars[position] = rng.choice("之乎者也天地人山水风月云")
            elif operation < 0.7:
                chars.pop(position)
            else:
                chars.insert(position, rng.choice("啊的了"))
            if not chars:
                chars = ["啊"]
        return "".join(chars)
    if kind < 0.86:
        return ref * rng.randint(3, 8)
    if kind < 0.90:
        return ""
    if kind < 0.93:
        return "I'm sorry, but I can't transcribe this audio."
    if kind < 0.97:
        return "".join(chars[: max(1, len(chars) // 2)])
    return "夜深干清宫里静。" + ref.replace("里", "裏")


def _sqa_output(rng: random.Random, gold: str, choices: tuple) -> str:
    kind = rng.random()
    if kind < 0.35:
        return gold
    if kind < 0.50:
        return f"这是{gold}。"
    if kind < 0.58:
        return _s2t(gold)
    if kind < 0.65:
        return gold.strip("《》")
    if kind < 0.90:
        return rng.choice([c for c in choices if c != gold])
    if kind < 0.95:
        return ""
    return "I am not sure."


def _mcq_output(rng: random.Random, gold: str, options: list[str]) -> str:
    other = rng.choice([x for x in "ABCD" if x != gold])
    letter = gold if rng.random() < 0.7 else other
    text = options["ABCD".index(letter)]
    return rng.choice((
        letter, letter, letter.lower(), f"答案：{letter}", f"答案是{letter}。选项{other if letter != other else gold}的说法与原文不符。",
        f"{letter}. {text}", text, f"我選擇 {letter}", f"The answer is {letter}. Option {'ABCD'[('ABCD'.index(letter) + 1) % 4]} is a common distractor.",
        "ABCD", "", f"我觉得是{letter}", f"{letter}选项", "无法判断",
    ))  # fmt: skip


def _mcq_question(rng: random.Random) -> tuple[str, list[str], str]:
    options = rng.sample(OPTION_POOL, 4)
    gold = rng.choice("ABCD")
    layout = rng.random()
    lines = "\n".join(f"{letter}. {option}" for letter, option in zip("ABCD", options))
    if layout < 0.3:
        lines = " ".join(f"{letter}. {option}" for letter, option in zip("ABCD", options))
    return f"问题：根据原文，下列哪一项最恰当？\n{lines}\n答案：", options, gold


def release_rows() -> dict[str, list[dict]]:
    """``{task: [row with its official-runner output field, ...]}`` for asr, sqa, su, sr (1,000 rows each)."""
    rng = random.Random(SEED)
    clips = [_clip(rng, n) for n in range(1, ROWS_PER_TASK + 1)]
    tasks: dict[str, list[dict]] = {}
    # ASR: 915 distinct ids (31 ids x2, 12 x3, 10 x4 = 138 rows on 53 ids); a text keeps its first row's genre.
    ids = _ids(rng, ROWS_PER_TASK, [2] * 31 + [3] * 12 + [4] * 10)
    texts: dict[str, tuple[str, str, str]] = {}
    genres = [g for g in GENRES for _ in range(ROWS_PER_TASK // len(GENRES))]
    rows = []
    for index, (row_id, clip) in enumerate(zip(ids, clips)):
        if row_id not in texts:
            texts[row_id] = (_text(rng), genres[index], rng.choice(DYNASTIES))
        ref, genre, dynasty = texts[row_id]
        row = {"id": row_id, "asr": ref, **clip, "split": "test", "dynasty": dynasty, "genre": genre, "sex": rng.choice("男女")}
        rows.append({**row, "asr_r": _asr_output(rng, ref)})
    tasks["asr"] = rows
    # SQA: 999 distinct ids; the repeated id asks two different questions (about two recordings).
    ids = _ids(rng, ROWS_PER_TASK, [2])
    rows, first_template = [], {}
    for row_id, clip in zip(ids, clips):
        if row_id in first_template:  # the second question about this text: another template
            template = (first_template[row_id] + 1) % len(SQA_TEMPLATES)
        else:
            template = first_template[row_id] = rng.randrange(len(SQA_TEMPLATES))
        question, choices = SQA_TEMPLATES[template]
        gold = rng.choice(choices)
        row = {"id": row_id, "asr": _text(rng), **clip, "sqa": question, "sqa_a": gold, "split": "test"}
        rows.append({**row, "sqa_a_r": _sqa_output(rng, gold, choices)})
    tasks["sqa"] = rows
    for task in ("su", "sr"):
        ids = _ids(rng, ROWS_PER_TASK, [2])
        rows = []
        for row_id, clip in zip(ids, clips):
            question, options, gold = _mcq_question(rng)
            row = {"id": row_id, "asr": _text(rng), **clip, task: question, f"{task}_a": gold, "split": "test"}
            rows.append({**row, f"{task}_r": _mcq_output(rng, gold, options)})
        tasks[task] = rows
    return tasks


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")


def write_runner_rows(folder: str | Path, tasks: dict[str, list[dict]] | None = None) -> dict[str, str]:
    """Write ``folder/{task}/synthetic_audio.jsonl`` (official runner layout); return ``{task: sha256 of the file}``."""
    digests = {}
    for task, rows in (tasks or release_rows()).items():
        path = Path(folder) / task / RUNNER_FILE
        _write_jsonl(path, rows)
        digests[task] = hashlib.sha256(path.read_bytes()).hexdigest()
    return digests


def write_release(folder: str | Path, audio: bool = True) -> tuple[Path, Path, dict[str, str]]:
    """Write the data folder, tiny wavs and the runner rows under ``folder``.

    Returns:
        ``(data folder, runner folder, {task: sha256 of its runner file})``.
    """
    folder = Path(folder)
    data_dir, runner = folder / "data", folder / "runner"
    tasks = release_rows()
    digests = write_runner_rows(runner, tasks)
    for task, rows in tasks.items():
        _write_jsonl(data_dir / f"MCGA_{task}_test.jsonl", [{k: v for k, v in row.items() if k != OUTPUT_FIELD[task]} for row in rows])
    if audio:
        import numpy as np
        import soundfile

        samples = (np.sin(np.arange(3200) * 0.05) * 0.1).astype(np.float32)  # 0.2 s at 16 kHz
        for row in tasks["asr"]:  # every task's rows point at these 1,000 clips
            path = data_dir / row["audio"]
            path.parent.mkdir(parents=True, exist_ok=True)
            soundfile.write(path, samples, 16000, subtype="PCM_16")
    return data_dir, runner, digests


if __name__ == "__main__":
    print(json.dumps(write_runner_rows(sys.argv[1]), indent=1))
