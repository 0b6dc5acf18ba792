#!/usr/bin/env python3
"""Make a tiny, synthetic sample of the MCGA benchmark in its release layout.

MCGA is a benchmark of classical Chinese literature read aloud.  This script
writes a small stand-in for its test split, so that the MCGA task code can be
exercised end to end without the real (CC BY-NC-SA 4.0) data:

    mcga/sample_data/data/MCGA_asr_test.jsonl   14 clips of 10 texts (2 per genre); 4 texts read by both voices
    mcga/sample_data/data/MCGA_sqa_test.jsonl    6 short-answer questions (4 ids; one id asks two questions)
    mcga/sample_data/data/MCGA_su_test.jsonl     5 multiple-choice (understanding; 3 ids)
    mcga/sample_data/data/MCGA_sr_test.jsonl     4 multiple-choice (reasoning; 3 ids)
    mcga/sample_data/data/MCGA_s2tt_test.jsonl   3 English verse translations
    mcga/sample_data/data/MCGA_sec_test.jsonl    3 emotion captions (persona, tone, per sentence)
    mcga/sample_data/data/upload/<speaker>/<id>.wav   16 kHz mono 16-bit PCM

The layout follows the release: ``id`` names the *text*, and a text read by
two speakers gives two rows with the same ``id`` and different ``audio``
(``upload/<speaker>/...``) and ``source`` (the speaker); one SQA id asks two
different questions (about two recordings of the text).  The two speakers
are two espeak-ng voices: ``espeak-m`` (``cmn-latn-pinyin``, 140 wpm) and
``espeak-f`` (``cmn-latn-pinyin+f3``, espeak's female variant, 150 wpm).

The texts, sources and labels (author, dynasty, genre, answers) are written by
hand below as data.  All texts are public domain: every work is a classical
Chinese work more than 150 years old (pre-Qin to Yuan).  The audio is
synthetic speech made with espeak-ng (two voices, fixed rates)
and converted with sox to 16 kHz mono 16-bit (``sox -R -G``: repeatable
dither, gain guarded against clipping); it is robotic and exists only to exercise the
pipeline, not to measure models.  The s2tt/sec/sqa/su/sr items reuse the asr clips.

Usage:  python scripts/make_mcga_sample.py [--out-dir DIR]

Output is deterministic: items are written sorted by id, voice and rate are
fixed, and sox runs in repeatable mode (-R), so reruns with the same
espeak-ng and sox versions give byte-identical files.  espeak-ng and sox must be on
PATH; the script refuses to run otherwise.  Only the Python standard library
is used.
"""

import argparse
import array
import json
import os
import shutil
import subprocess
import sys
import tempfile
import wave

VOICE = "cmn-latn-pinyin"  # the plain "cmn" voice reads many characters as English
RATE_WPM = 140  # espeak-ng -s
SAMPLE_RATE = 16000
MIN_SECONDS = 3.0
MAX_SECONDS = 28.0  # hard limit 30 s; anything over 28 s must be shortened in the data
AUDIO_ROOT = "upload"
#: speaker code (the rows' ``source``) -> (espeak-ng voice, rate in wpm, the rows' ``sex``)
SPEAKERS = {
    "espeak-m": (VOICE, RATE_WPM, "男"),
    "espeak-f": (VOICE + "+f3", 150, "女"),
}
#: texts also read by the second voice (release shape: one text id, several speakers)
SECOND_SPEAKER_TEXTS = ("asr_ci_01", "asr_qu_01", "asr_shi_01", "asr_wen_01")
PROMPT_FIELD = "<|cmn|><|cmn|>"  # what the release's ``prompt`` field holds (unused in scoring)

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT_DIR = os.path.join(REPO_ROOT, "mcga", "sample_data", "data")

GENRES = ("诗", "词", "曲", "赋", "文")
DYNASTIES = ("先秦", "汉", "魏晋", "南北朝", "隋", "唐", "五代", "宋", "元", "明", "清")

# ---------------------------------------------------------------------------
# ASR clips: exact text read aloud (original wording, Chinese punctuation).
# ---------------------------------------------------------------------------
ASR_ITEMS = [
    # 诗
    {
        "id": "asr_shi_01",
        "asr": "床前明月光，疑是地上霜。举头望明月，低头思故乡。",
        "source": "李白《静夜思》",
        "dynasty": "唐",
        "genre": "诗",
    },
    {
        "id": "asr_shi_02",
        "asr": "关关雎鸠，在河之洲。窈窕淑女，君子好逑。",
        "source": "《诗经·周南·关雎》",
        "dynasty": "先秦",
        "genre": "诗",
    },
    # 词
    {
        "id": "asr_ci_01",
        "asr": "明月几时有？把酒问青天。不知天上宫阙，今夕是何年。"
        "我欲乘风归去，又恐琼楼玉宇，高处不胜寒。",
        "source": "苏轼《水调歌头·明月几时有》",
        "dynasty": "宋",
        "genre": "词",
    },
    {
        "id": "asr_ci_02",
        "asr": "昨夜雨疏风骤，浓睡不消残酒。试问卷帘人，却道海棠依旧。"
        "知否，知否？应是绿肥红瘦。",
        "source": "李清照《如梦令·昨夜雨疏风骤》",
        "dynasty": "宋",
        "genre": "词",
    },
    # 曲
    {
        "id": "asr_qu_01",
        "asr": "枯藤老树昏鸦，小桥流水人家，古道西风瘦马。夕阳西下，断肠人在天涯。",
        "source": "马致远《天净沙·秋思》",
        "dynasty": "元",
        "genre": "曲",
    },
    {
        "id": "asr_qu_02",
        "asr": "峰峦如聚，波涛如怒，山河表里潼关路。望西都，意踌躇。"
        "伤心秦汉经行处，宫阙万间都做了土。兴，百姓苦；亡，百姓苦。",
        "source": "张养浩《山坡羊·潼关怀古》",
        "dynasty": "元",
        "genre": "曲",
    },
    # 赋
    {
        "id": "asr_fu_01",
        "asr": "六王毕，四海一，蜀山兀，阿房出。覆压三百余里，隔离天日。",
        "source": "杜牧《阿房宫赋》",
        "dynasty": "唐",
        "genre": "赋",
    },
    {
        "id": "asr_fu_02",
        "asr": "壬戌之秋，七月既望，苏子与客泛舟游于赤壁之下。清风徐来，水波不兴。",
        "source": "苏轼《赤壁赋》",
        "dynasty": "宋",
        "genre": "赋",
    },
    # 文
    {
        "id": "asr_wen_01",
        "asr": "山不在高，有仙则名。水不在深，有龙则灵。斯是陋室，惟吾德馨。",
        "source": "刘禹锡《陋室铭》",
        "dynasty": "唐",
        "genre": "文",
    },
    {
        "id": "asr_wen_02",
        "asr": "晋陶渊明独爱菊。自李唐来，世人甚爱牡丹。予独爱莲之出淤泥而不染，濯清涟而不妖。",
        "source": "周敦颐《爱莲说》",
        "dynasty": "宋",
        "genre": "文",
    },
]

# ---------------------------------------------------------------------------
# SQA: short-answer questions about a clip (author, dynasty, title, genre).
# ---------------------------------------------------------------------------
SQA_ITEMS = [
    {"id": "sqa_01", "clip": "asr_shi_01", "sqa": "这首诗的作者是谁？", "sqa_a": "李白"},
    # the same id, a second question, asked about the second speaker's recording (release: SQA has one such id)
    {"id": "sqa_01", "clip": "asr_shi_01", "speaker": "espeak-f", "sqa": "这首诗的题目是什么？", "sqa_a": "《静夜思》"},
    {"id": "sqa_03", "clip": "asr_wen_01", "speaker": "espeak-f", "sqa": "这篇文章的题目是什么？", "sqa_a": "陋室铭"},
    {"id": "sqa_02", "clip": "asr_qu_01", "sqa": "这首作品的作者是哪个朝代的人？", "sqa_a": "元"},
    {"id": "sqa_03", "clip": "asr_wen_01", "sqa": "这篇文章的题目是什么？", "sqa_a": "陋室铭"},
    {
        "id": "sqa_04",
        "clip": "asr_ci_01",
        "sqa": "这段作品属于诗、词、曲、赋、文中的哪一种体裁？",
        "sqa_a": "词",
    },
]

# ---------------------------------------------------------------------------
# SU: understanding, four options, one correct.
# ---------------------------------------------------------------------------
SU_ITEMS = [
    {
        "id": "su_01",
        "clip": "asr_qu_01",
        "question": "这首小令主要抒发了怎样的情感？",
        "options": [
            "边塞将士建功立业的豪情",
            "漂泊天涯的游子的思乡愁苦",
            "归隐田园的闲适与快乐",
            "久别重逢的喜悦",
        ],
        "answer": "B",
    },
    {
        "id": "su_02",
        "clip": "asr_wen_01",
        "question": "“斯是陋室，惟吾德馨”一句的意思最接近哪一项？",
        "options": [
            "这间屋子装饰华丽，远近闻名",
            "主人嫌屋子简陋，打算搬走",
            "这虽是简陋的屋子，但因主人品德高尚而不觉其陋",
            "屋里种满香草，所以气味芬芳",
        ],
        "answer": "C",
    },
    {
        "id": "su_03",
        "clip": "asr_wen_02",
        "question": "文中说晋代的陶渊明唯独喜爱哪一种花？",
        "options": ["牡丹", "莲", "梅", "菊"],
        "answer": "D",
    },
]

# ---------------------------------------------------------------------------
# SR: reasoning from the text (time, season, what comes next), four options.
# ---------------------------------------------------------------------------
SR_ITEMS = [
    {
        "id": "sr_01",
        "clip": "asr_fu_02",
        "question": "文中说“七月既望”（农历七月十六日），由此推断当晚的月亮最可能是什么样子？",
        "options": ["一弯细细的新月", "接近圆满的月亮", "天上看不到月亮", "恰好半圆的上弦月"],
        "answer": "B",
    },
    {
        "id": "sr_02",
        "clip": "asr_ci_02",
        "question": "根据词中“海棠依旧”“绿肥红瘦”等描写，推断所写的季节最可能是？",
        "options": ["暮春", "盛夏", "深秋", "隆冬"],
        "answer": "A",
    },
    {
        "id": "sr_03",
        "clip": "asr_ci_01",
        "question": "根据所听内容，这首词紧接着的下一句最可能是？",
        "options": [
            "大江东去，浪淘尽，千古风流人物。",
            "寻寻觅觅，冷冷清清，凄凄惨惨戚戚。",
            "春花秋月何时了，往事知多少。",
            "起舞弄清影，何似在人间。",
        ],
        "answer": "D",
    },
]


# ---------------------------------------------------------------------------
# S2TT: reference English translations, written for this sample (not from MCGA).
# ---------------------------------------------------------------------------
S2TT_ITEMS = [
    {
        "id": "s2tt_01",
        "clip": "asr_shi_01",
        "s2tt": "Before my bed the moonlight gleams,\n"
        "Like frost upon the ground it seems.\n"
        "I raise my head to watch the moon,\n"
        "Then bow it, lost in homeland dreams.",
    },
    {
        "id": "s2tt_02",
        "clip": "asr_shi_02",
        "s2tt": "Guan-guan cry the ospreys\n"
        "On the islet in the stream.\n"
        "The gentle, graceful maiden\n"
        "Is a good match for the lord.",
    },
    {
        "id": "s2tt_03",
        "clip": "asr_qu_01",
        "s2tt": "Withered vines, old trees, crows at dusk;\n"
        "A little bridge, a flowing stream, a cottage;\n"
        "An ancient road, the west wind, a bony horse.\n"
        "The setting sun goes down in the west;\n"
        "A heartbroken man at the end of the world.",
    },
]

# ---------------------------------------------------------------------------
# SEC: emotion captions in the official three-part shape, written for this
# sample.  sec_1 describes the synthetic espeak voice (male; the age bracket
# is a label we assign, espeak has no age), sec_2 and sec_3 are literary
# readings of the texts.
# ---------------------------------------------------------------------------
SEC_PERSONA = "男声，青年（18-40岁），语调平直，语速平稳。"
SEC_ITEMS = [
    {
        "id": "sec_01",
        "clip": "asr_shi_01",
        "sec_2": "全诗基调是客居他乡的孤寂与思乡，以月光起兴，意境清冷静谧，意在抒发游子对故乡的深切怀念。",
        "sec_3": [
            "床前明月光|夜深独处，月光洒落床前，氛围清冷宁静。",
            "疑是地上霜|以霜喻月光，透出寒意与恍惚，暗含孤寂。",
            "举头望明月|抬头望月，情绪由静观转为凝望，思绪被牵动。",
            "低头思故乡|低头沉思，思乡之情推向高潮，惆怅深沉。",
        ],
    },
    {
        "id": "sec_02",
        "clip": "asr_qu_01",
        "sec_2": "全曲基调凄凉悲苦，以秋日黄昏的萧瑟景物烘托羁旅天涯之悲，意境苍凉，抒发漂泊者的断肠思乡之情。",
        "sec_3": [
            "枯藤老树昏鸦|枯败景物层层叠加，营造萧瑟衰败的秋日氛围。",
            "小桥流水人家|以安宁的人家反衬游子无家可归，暗含羡慕与凄凉。",
            "古道西风瘦马|古道、西风、瘦马写尽旅途的荒凉与疲惫。",
            "夕阳西下|日暮时分，时光流逝加深愁绪。",
            "断肠人在天涯|直抒胸臆，漂泊天涯的悲痛达到顶点。",
        ],
    },
    {
        "id": "sec_03",
        "clip": "asr_ci_02",
        "sec_2": "全词基调婉约而惜春伤感，借雨后问海棠的对话，写词人对春光流逝的敏锐感受与怜花惜春之情，意境清新含蓄。",
        "sec_3": [
            "昨夜雨疏风骤|回忆昨夜风雨，暗含对花事的担忧。",
            "浓睡不消残酒|醉后沉睡，慵懒中带着淡淡愁绪。",
            "试问卷帘人|急切相问，流露对花的牵挂。",
            "却道海棠依旧|侍女答得漫不经心，与词人的关切形成反差。",
            "知否，知否|连声反问，情绪转为急切与嗔怪。",
            "应是绿肥红瘦|叶盛花残，惜春伤春之情含蓄而深沉。",
        ],
    },
]

def fail(msg):
    sys.exit("make_mcga_sample.py: error: " + msg)


def tool_version(tool):
    path = shutil.which(tool)
    if path is None:
        fail(
            "'%s' was not found on PATH; install it (e.g. apt-get install espeak-ng sox) "
            "and run again" % tool
        )
    out = subprocess.run(
        [tool, "--version"], check=True, capture_output=True, text=True
    ).stdout
    line = out.strip().splitlines()[0].strip()
    # "eSpeak NG text-to-speech: 1.51  Data at: ..." / "sox:      SoX v14.4.2"
    line = line.split("Data at:")[0].strip()
    if line.startswith("sox:"):
        line = line[len("sox:"):].strip()
    return line


def synthesize(text, out_wav, tmp_dir, speaker):
    voice, rate, _ = SPEAKERS[speaker]
    raw = os.path.join(tmp_dir, "espeak.wav")
    subprocess.run(
        ["espeak-ng", "-v", voice, "-s", str(rate), "-w", raw, text], check=True
    )
    subprocess.run(
        ["sox", "-R", "-G", raw, "-r", str(SAMPLE_RATE), "-c", "1", "-b", "16", out_wav],
        check=True,
    )


def check_wav(path):
    """Check format and loudness; return the duration in seconds."""
    with wave.open(path, "rb") as w:
        if w.getframerate() != SAMPLE_RATE or w.getnchannels() != 1 or w.getsampwidth() != 2:
            fail(
                "%s: expected 16 kHz mono 16-bit, got %d Hz, %d ch, %d bytes/sample"
                % (path, w.getframerate(), w.getnchannels(), w.getsampwidth())
            )
        frames = w.getnframes()
        samples = array.array("h")
        samples.frombytes(w.readframes(frames))
    if sys.byteorder == "big":
        samples.byteswap()
    seconds = frames / float(SAMPLE_RATE)
    peak = max(abs(s) for s in samples) if samples else 0
    rms = (sum(s * s for s in samples) / len(samples)) ** 0.5 if samples else 0.0
    if peak < 1000 or rms < 100:
        fail("%s looks silent (peak %d, rms %.1f)" % (path, peak, rms))
    if not MIN_SECONDS <= seconds <= MAX_SECONDS:
        fail(
            "%s lasts %.2f s, outside %.0f-%.0f s; change the text"
            % (path, seconds, MIN_SECONDS, MAX_SECONDS)
        )
    return seconds


def mc_question(question, options):
    lines = [question]
    for letter, option in zip("ABCD", options):
        lines.append("%s. %s" % (letter, option))
    lines.append("答案：")
    return "\n".join(lines)


def validate_data():
    ids = [it["id"] for it in ASR_ITEMS]
    if len(set(ids)) != len(ids):
        fail("duplicate asr ids")
    for it in ASR_ITEMS:
        if it["genre"] not in GENRES or it["dynasty"] not in DYNASTIES:
            fail("bad genre/dynasty in %s" % it["id"])
    for genre in GENRES:
        n = sum(1 for it in ASR_ITEMS if it["genre"] == genre)
        if n != 2:
            fail("genre %s has %d clips, expected 2" % (genre, n))
    for items in (S2TT_ITEMS, SEC_ITEMS, SQA_ITEMS, SU_ITEMS, SR_ITEMS):
        # release shape: ids may repeat, the recording (clip, speaker) may not
        recordings = [(it["clip"], it.get("speaker", "espeak-m")) for it in items]
        if len(set(recordings)) != len(recordings):
            fail("two items use the same recording: %s" % recordings)
        for it in items:
            if it["clip"] not in ids:
                fail("%s refers to unknown clip %s" % (it["id"], it["clip"]))
            if it.get("speaker", "espeak-m") != "espeak-m" and it["clip"] not in SECOND_SPEAKER_TEXTS:
                fail("%s: %s is not read by %s" % (it["id"], it["clip"], it["speaker"]))
            if "options" in it and (len(it["options"]) != 4 or it["answer"] not in "ABCD"):
                fail("%s needs 4 options and a gold letter A-D" % it["id"])


def write_jsonl(path, rows):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out-dir",
        default=DEFAULT_OUT_DIR,
        help="output folder (default: mcga/sample_data/data in the repository)",
    )
    args = parser.parse_args()

    espeak_version = tool_version("espeak-ng")
    sox_version = tool_version("sox")
    print("espeak-ng: %s" % espeak_version)
    print("sox:       %s" % sox_version)
    print("voice: %s, rate: %d wpm, output: %d Hz mono 16-bit PCM" % (VOICE, RATE_WPM, SAMPLE_RATE))

    validate_data()

    out_dir = os.path.abspath(args.out_dir)
    recordings = [(it, "espeak-m") for it in ASR_ITEMS] + [
        (it, "espeak-f") for it in ASR_ITEMS if it["id"] in SECOND_SPEAKER_TEXTS
    ]
    recordings.sort(key=lambda rec: (rec[0]["id"], rec[1]))
    wanted = {"%s/%s.wav" % (speaker, it["id"]) for it, speaker in recordings}
    upload = os.path.join(out_dir, AUDIO_ROOT)
    for speaker in sorted(os.listdir(upload)) if os.path.isdir(upload) else []:  # drop stale clips
        folder = os.path.join(upload, speaker)
        for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
            if name.endswith(".wav") and "%s/%s" % (speaker, name) not in wanted:
                os.remove(os.path.join(folder, name))
        if os.path.isdir(folder) and not os.listdir(folder):
            os.rmdir(folder)

    clips = {}
    asr_rows = []
    with tempfile.TemporaryDirectory() as tmp_dir:
        for it, speaker in recordings:
            rel = "%s/%s/%s.wav" % (AUDIO_ROOT, speaker, it["id"])
            wav_path = os.path.join(out_dir, *rel.split("/"))
            os.makedirs(os.path.dirname(wav_path), exist_ok=True)
            synthesize(it["asr"], wav_path, tmp_dir, speaker)
            seconds = round(check_wav(wav_path), 2)
            clips[(it["id"], speaker)] = {"asr": it["asr"], "audio": rel, "source": speaker, "time": seconds}
            asr_rows.append(
                {
                    "id": it["id"],
                    "asr": it["asr"],
                    "audio": rel,
                    "source": speaker,
                    "time": seconds,
                    "prompt": PROMPT_FIELD,
                    "check_score": "",
                    "split": "test",
                    "dynasty": it["dynasty"],
                    "genre": it["genre"],
                    "sex": SPEAKERS[speaker][2],
                }
            )

    def clip_fields(it):
        """asr, audio and the extra release fields of the recording an item asks about."""
        clip = clips[(it["clip"], it.get("speaker", "espeak-m"))]
        return {"asr": clip["asr"], "audio": clip["audio"], "source": clip["source"], "time": clip["time"]}

    def order(items):
        return sorted(items, key=lambda it: (it["id"], it.get("speaker", "espeak-m")))

    def both_speakers(items, ids):
        """The items, plus a second-speaker copy of those in ``ids`` (one text id, two recordings)."""
        return items + [dict(it, speaker="espeak-f") for it in items if it["id"] in ids]

    sqa_rows = [
        {"id": it["id"], **clip_fields(it), "sqa": it["sqa"], "sqa_a": it["sqa_a"], "split": "test"}
        for it in order(SQA_ITEMS)
    ]

    def mc_rows(items, key):
        return [
            {
                "id": it["id"],
                **clip_fields(it),
                key: mc_question(it["question"], it["options"]),
                key + "_a": it["answer"],
                "split": "test",
            }
            for it in order(items)
        ]

    s2tt_rows = [
        {"id": it["id"], **clip_fields(it), "s2tt": it["s2tt"], "split": "test"}
        for it in order(S2TT_ITEMS)
    ]
    sec_rows = []
    for it in order(SEC_ITEMS):
        sec_3 = "\n".join(it["sec_3"])
        sec_rows.append(
            {
                "id": it["id"],
                **clip_fields(it),
                "split": "test",
                "sec_1": SEC_PERSONA,
                "sec_2": it["sec_2"],
                "sec_3": sec_3,
                "sec": "\n".join([SEC_PERSONA, it["sec_2"], sec_3]),
            }
        )

    write_jsonl(os.path.join(out_dir, "MCGA_asr_test.jsonl"), asr_rows)
    write_jsonl(os.path.join(out_dir, "MCGA_s2tt_test.jsonl"), s2tt_rows)
    write_jsonl(os.path.join(out_dir, "MCGA_sec_test.jsonl"), sec_rows)
    write_jsonl(os.path.join(out_dir, "MCGA_sqa_test.jsonl"), sqa_rows)
    su_rows = mc_rows(both_speakers(SU_ITEMS, ("su_01", "su_02")), "su")
    sr_rows = mc_rows(both_speakers(SR_ITEMS, ("sr_03",)), "sr")
    write_jsonl(os.path.join(out_dir, "MCGA_su_test.jsonl"), su_rows)
    write_jsonl(os.path.join(out_dir, "MCGA_sr_test.jsonl"), sr_rows)

    total_bytes = 0
    print()
    print("| id | speaker (source) | genre | dynasty | duration (s) |")
    print("|---|---|---|---|---|")
    for row in asr_rows:
        total_bytes += os.path.getsize(os.path.join(out_dir, *row["audio"].split("/")))
        print(
            "| %s | %s | %s | %s | %.2f |"
            % (row["id"], row["source"], row["genre"], row["dynasty"], row["time"])
        )
    print()
    print(
        "wrote %d asr, %d s2tt, %d sec, %d sqa, %d su, %d sr items to %s (%d wav files, %d bytes, %.2f s)"
        % (
            len(asr_rows),
            len(s2tt_rows),
            len(sec_rows),
            len(sqa_rows),
            len(su_rows),
            len(sr_rows),
            out_dir,
            len(asr_rows),
            total_bytes,
            sum(r["time"] for r in asr_rows),
        )
    )


if __name__ == "__main__":
    main()
