#!/usr/bin/env python3
"""Make the small synthetic sample of PARSA-Bench shipped in ``parsa/sample_data``, in the CSV + Audios layout.

For each of the 16 tasks it writes ``<Folder>/<Folder>.csv`` and ``<Folder>/Audios/<id>.wav`` (16 kHz mono
16-bit PCM), with the folder and column names of ``parsa/column_map.json`` (read here, so the sample always
matches the loader's defaults). Texts, questions, options and every gold label are written by hand below.

Audio:
- speech: espeak-ng (voice ``fa``; ``en-us`` for the English source of s2tt_en_fa; code-switched sentences are
  cut into Persian-script and Latin-script runs, each spoken with its own voice and joined), then
  ``sox -R -G in.wav -r 16000 -c 1 -b 16 out.wav`` (repeatable dither, gain guarded against clipping);
- gender: the ``fa`` voice with an espeak-ng male (``+m3``) or female (``+f3``, ``+f4``) variant;
- music: pure tones made with ``sox -n ... synth`` (a four-note melody, a three-note chord, clicks at 60 or
  180 beats per minute): the labels (polyphony, tempo, number of notes) are true of the signal.

Deterministic: fixed voices and rates, ``sox -R``, rows sorted by id; reruns with the same espeak-ng and sox
give byte-identical files. Stale wavs from earlier runs are removed. Needs espeak-ng and sox on PATH and the
repository on ``sys.path`` (it imports ``parsa.tasks`` and ``parsa.data`` to check every label and then
loads the written sample with the real loader).

Usage:  python scripts/make_parsa_sample.py [--out-dir DIR]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import wave

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO_ROOT)

from parsa.data import column_map, load_task_docs
from parsa.tasks import TASKS

DEFAULT_OUT_DIR = os.path.join(REPO_ROOT, "parsa", "sample_data")
SAMPLE_RATE = 16000
RATE_WPM = 165
FA, EN = "fa", "en-us"
MIN_SECONDS, MAX_SECONDS = 1.0, 20.0

# ------------------------------------------------------------------------------------------ items
# Each item: id, text read aloud (becomes the transcript unless "transcript" is given), gold, and for
# multiple choice the question and options. All sentences were written for this sample.

ASR = [
    {"id": "asr_01", "text": "امروز هوا آفتابی و گرم است."},
    {"id": "asr_02", "text": "کتابخانه‌ی شهر ساعت هشت صبح باز می‌شود."},
    {"id": "asr_03", "text": "لطفاً پنجره را ببندید چون باد سردی می‌وزد."},
    {"id": "asr_04", "text": "تهران پایتخت ایران است."},
    {"id": "asr_05", "text": "من هر روز با اتوبوس به دانشگاه می‌روم."},
]

S2TT_FA_EN = [
    {"id": "fa_en_01", "text": "من فردا به کتابخانه می‌روم.", "translation": "I am going to the library tomorrow."},
    {"id": "fa_en_02", "text": "این غذا خیلی خوشمزه است.", "translation": "This food is very delicious."},
    {"id": "fa_en_03", "text": "قطار ساعت پنج حرکت می‌کند.", "translation": "The train leaves at five o'clock."},
    {"id": "fa_en_04", "text": "برادرم در بیمارستان کار می‌کند.", "translation": "My brother works at the hospital."},
]

S2TT_EN_FA = [
    {"id": "en_fa_01", "text": "The weather is cold today.", "translation": "امروز هوا سرد است."},
    {"id": "en_fa_02", "text": "Where is the nearest bus station?", "translation": "نزدیک‌ترین ایستگاه اتوبوس کجاست؟"},
    {"id": "en_fa_03", "text": "She reads a book every night.", "translation": "او هر شب یک کتاب می‌خواند."},
    {"id": "en_fa_04", "text": "We are going to the sea this summer.", "translation": "ما این تابستان به دریا می‌رویم."},
]

# MASSIVE intent names (parsa/labels.json); the sentences are ours, in the style of MASSIVE's Persian utterances.
INTENT = [
    {"id": "intent_01", "text": "فردا ساعت شش صبح بیدارم کن", "label": "alarm_set"},
    {"id": "intent_02", "text": "هوای فردا در شیراز چطور است", "label": "weather_query"},
    {"id": "intent_03", "text": "یک آهنگ شاد برایم پخش کن", "label": "play_music"},
    {"id": "intent_04", "text": "چراغ‌های اتاق خواب را خاموش کن", "label": "iot_hue_lightoff"},
    {"id": "intent_05", "text": "الان ساعت چند است", "label": "datetime_query"},
]

# MASSIVE slot types; spans are exact substrings of the text.
NER = [
    {"id": "ner_01", "text": "فردا ساعت هفت صبح بیدارم کن",
     "entities": [{"type": "date", "span": "فردا"}, {"type": "time", "span": "ساعت هفت صبح"}]},
    {"id": "ner_02", "text": "هوای تهران امروز چطور است",
     "entities": [{"type": "place_name", "span": "تهران"}, {"type": "date", "span": "امروز"}]},
    {"id": "ner_03", "text": "به مادرم زنگ بزن", "entities": [{"type": "relation", "span": "مادرم"}]},
    {"id": "ner_04", "text": "جلسه با علی را برای دوشنبه تنظیم کن",
     "entities": [{"type": "event_name", "span": "جلسه"}, {"type": "person", "span": "علی"}, {"type": "date", "span": "دوشنبه"}]},
]  # fmt: skip

# Formal (written, ketabi) versus informal (spoken, mohavere'i) Persian; the informal forms are colloquial
# spellings (میای، میرم، خونه، نمی‌دونم).
REGISTER = [
    {"id": "register_01", "text": "خواهشمند است در جلسه‌ی فردا حضور به هم رسانید.", "label": "formal"},
    {"id": "register_02", "text": "فردا میای بریم سینما؟", "label": "informal"},
    {"id": "register_03", "text": "اینجانب از حضور شما در این مراسم سپاسگزارم.", "label": "formal"},
    {"id": "register_04", "text": "دارم میرم خونه، یه کم دیر میشه.", "label": "informal"},
    {"id": "register_05", "text": "کتاب مورد نظر شما در کتابخانه موجود است.", "label": "formal"},
    {"id": "register_06", "text": "نمی‌دونم چی بگم، خیلی خسته‌م.", "label": "informal"},
]

# Code-switching (paper §3.1): positive if an English word is embedded in a Persian utterance.
CODE_SWITCH = [
    {"id": "cs_01", "text": "امروز یک meeting مهم داریم.", "label": "code_switched"},
    {"id": "cs_02", "text": "امروز یک جلسه‌ی مهم داریم.", "label": "monolingual"},
    {"id": "cs_03", "text": "این deadline خیلی نزدیک است.", "label": "code_switched"},
    {"id": "cs_04", "text": "کتاب را روی میز گذاشتم.", "label": "monolingual"},
]

# Multiple-choice QA in the style of ParsiNLU (common knowledge, literature, arithmetic). The question is read.
MCQA = [
    {"id": "mcqa_01", "text": "پایتخت ایران کدام شهر است؟", "options": ["اصفهان", "تهران", "شیراز", "تبریز"], "answer": 2},
    {"id": "mcqa_02", "text": "شاهنامه سروده‌ی کدام شاعر است؟", "options": ["حافظ", "سعدی", "فردوسی", "مولوی"], "answer": 3},
    {"id": "mcqa_03", "text": "حاصل ضرب پنج در شش چند است؟", "options": ["۱۱", "۲۵", "۳۶", "۳۰"], "answer": 4},
    {"id": "mcqa_04", "text": "بلندترین قله‌ی ایران کدام است؟", "options": ["دماوند", "سبلان", "علم‌کوه", "تفتان"], "answer": 1},
]

# Reading comprehension: the passage is read aloud; question and options are text.
RC_WIKI = [
    {"id": "rcw_01", "text": "دریای خزر بزرگ‌ترین دریاچه‌ی جهان است. این دریاچه در شمال ایران قرار دارد و با پنج کشور هم‌مرز است.",
     "question": "دریای خزر با چند کشور هم‌مرز است؟", "options": ["سه", "چهار", "پنج", "شش"], "answer": 3},
    {"id": "rcw_02", "text": "حافظ شیرازی شاعر قرن هشتم هجری است. آرامگاه او در شهر شیراز قرار دارد و به حافظیه معروف است.",
     "question": "آرامگاه حافظ در کدام شهر است؟", "options": ["مشهد", "شیراز", "تبریز", "کرمان"], "answer": 2},
    {"id": "rcw_03", "text": "کارون پرآب‌ترین رود ایران است. این رود از کوه‌های زاگرس سرچشمه می‌گیرد و از شهر اهواز می‌گذرد.",
     "question": "رود کارون از کدام شهر می‌گذرد؟", "options": ["اهواز", "یزد", "قم", "رشت"], "answer": 1},
    {"id": "rcw_04", "text": "نوروز جشن آغاز سال نو در ایران است و در روز اول فروردین برگزار می‌شود.",
     "question": "نوروز در چه روزی برگزار می‌شود؟", "options": ["اول مهر", "اول دی", "اول فروردین", "اول تیر"], "answer": 3},
]  # fmt: skip

# Reading comprehension on short stories written for this sample (TinyStories-like: simple, novel).
RC_TINY = [
    {"id": "rct_01", "text": "سارا یک گربه‌ی کوچک سفید داشت. یک روز گربه بالای درخت رفت و نتوانست پایین بیاید. پدر سارا با نردبان گربه را پایین آورد.",
     "question": "چه کسی گربه را پایین آورد؟", "options": ["سارا", "مادر سارا", "پدر سارا", "همسایه"], "answer": 3},
    {"id": "rct_02", "text": "علی توپ قرمزش را در پارک گم کرد. دوستش رضا توپ را زیر یک نیمکت پیدا کرد. علی خیلی خوشحال شد.",
     "question": "توپ کجا پیدا شد؟", "options": ["زیر نیمکت", "کنار حوض", "روی درخت", "در خانه"], "answer": 1},
    {"id": "rct_03", "text": "مریم هر صبح به گل‌های باغچه آب می‌داد. یک روز باران بارید و مریم گفت امروز گل‌ها خودشان آب خوردند.",
     "question": "چرا مریم آن روز به گل‌ها آب نداد؟", "options": ["خواب مانده بود", "باران باریده بود", "آب قطع بود", "گل‌ها خشک شده بودند"], "answer": 2},
    {"id": "rct_04", "text": "یک خرگوش کوچک در جنگل راهش را گم کرد. جغد پیر به او کمک کرد تا خانه‌اش را پیدا کند.",
     "question": "چه کسی به خرگوش کمک کرد؟", "options": ["روباه", "جغد پیر", "سنجاب", "خرس"], "answer": 2},
]  # fmt: skip

# Paralinguistics. espeak-ng speech carries no real speaker age or emotion: the age and emotion labels are the
# labels these rows are given (emotion rows say the emotion in words). Gender follows the espeak voice variant.
AGE = [
    {"id": "age_01", "text": "من هر روز صبح ورزش می‌کنم.", "label": "teens", "voice": FA + "+m3"},
    {"id": "age_02", "text": "این کتاب را دیروز خریدم.", "label": "twenties", "voice": FA + "+f3"},
    {"id": "age_03", "text": "لطفاً در را باز کنید.", "label": "thirties", "voice": FA + "+m3"},
    {"id": "age_04", "text": "باغ ما پر از درخت سیب است.", "label": "fifties", "voice": FA + "+f4"},
]
GENDER = [
    {"id": "gender_01", "text": "امروز کار زیادی دارم.", "label": "male", "voice": FA + "+m3"},
    {"id": "gender_02", "text": "امروز کار زیادی دارم.", "label": "female", "voice": FA + "+f3"},
    {"id": "gender_03", "text": "به خانه برمی‌گردم.", "label": "female", "voice": FA + "+f4"},
    {"id": "gender_04", "text": "به خانه برمی‌گردم.", "label": "male", "voice": FA + "+m3"},
]
EMOTION = [
    {"id": "emotion_01", "text": "چرا باز هم دیر آمدی؟ دیگر تحمل ندارم!", "label": "anger"},
    {"id": "emotion_02", "text": "صدای پا از پشت در می‌آید، خیلی می‌ترسم.", "label": "fear"},
    {"id": "emotion_03", "text": "وای چه خوب! بالاخره قبول شدم!", "label": "happiness"},
    {"id": "emotion_04", "text": "دلم برای مادربزرگم خیلی تنگ شده است.", "label": "sadness"},
    {"id": "emotion_05", "text": "واقعاً؟ باورم نمی‌شود که اینجا هستی!", "label": "surprise"},
    {"id": "emotion_06", "text": "جلسه ساعت ده صبح در اتاق شماره‌ی دو برگزار می‌شود.", "label": "neutral"},
]

# Poetry. Metre names in Ganjoor's style (feet, then the name). The option list is ours: ten common metres of
# classical Persian poetry (the paper uses the ten most frequent metres of its Ganjoor recitations and does
# not list them). Every gold metre and form below is the standard one for these famous openings (public
# domain, 10th-14th century; the verses and their metres are on ganjoor.net) and was checked against
# PARSA.md's table and a second, independent reading of the scansion.
VAZN_OPTIONS = [
    "فاعلاتن فاعلاتن فاعلن (رمل مسدس محذوف)",
    "فعولن فعولن فعولن فعل (متقارب مثمن محذوف)",
    "مفاعیلن مفاعیلن مفاعیلن مفاعیلن (هزج مثمن سالم)",
    "فاعلاتن فاعلاتن فاعلاتن فاعلن (رمل مثمن محذوف)",
    "فاعلاتن فعلاتن فعلاتن فعلن (رمل مثمن مخبون محذوف)",
    "مستفعلن مستفعلن مستفعلن مستفعلن (رجز مثمن سالم)",
    "مفاعیلن مفاعیلن فعولن (هزج مسدس محذوف)",
    "مفعول فاعلات مفاعیل فاعلن (مضارع مثمن اخرب مکفوف محذوف)",
    "مفاعلن فعلاتن مفاعلن فعلن (مجتث مثمن مخبون محذوف)",
    "مفعول مفاعیل مفاعیل فعولن (هزج مثمن اخرب مکفوف محذوف)",
]
VAZN_QUESTION = "وزن عروضی این دو بیت کدام است؟"
MASNAVI_1 = ["بشنو این نی چون شکایت می‌کند", "از جدایی‌ها حکایت می‌کند", "کز نیستان تا مرا ببریده‌اند", "در نفیرم مرد و زن نالیده‌اند"]
SHAHNAMEH_1 = ["به نام خداوند جان و خرد", "کزین برتر اندیشه برنگذرد", "خداوند نام و خداوند جای", "خداوند روزی ده رهنمای"]
HAFEZ_1 = ["الا یا ایها الساقی ادر کاسا و ناولها", "که عشق آسان نمود اول ولی افتاد مشکل‌ها",
           "به بوی نافه‌ای کاخر صبا زان طره بگشاید", "ز تاب جعد مشکینش چه خون افتاد در دل‌ها"]  # fmt: skip
HAFEZ_YUSUF = ["یوسف گم گشته باز آید به کنعان غم مخور", "کلبه احزان شود روزی گلستان غم مخور",
               "ای دل غمدیده حالت به شود دل بد مکن", "وین سر شوریده باز آید به سامان غم مخور"]  # fmt: skip
HAFEZ_DUSH = ["دوش دیدم که ملائک در میخانه زدند", "گل آدم بسرشتند و به پیمانه زدند",
              "ساکنان حرم ستر و عفاف ملکوت", "با من راه نشین باده مستانه زدند"]  # fmt: skip
BABA_TAHER = ["ز دست دیده و دل هر دو فریاد", "که هر چه دیده بیند دل کند یاد", "بسازم خنجری نیشش ز فولاد", "زنم بر دیده تا دل گردد آزاد"]
KHAYYAM = ["این قافله عمر عجب می‌گذرد", "دریاب دمی که با طرب می‌گذرد", "ساقی غم فردای حریفان چه خوری", "پیش آر پیاله را که شب می‌گذرد"]
SAADI_BANI_ADAM = ["بنی آدم اعضای یکدیگرند", "که در آفرینش ز یک گوهرند", "چو عضوی به درد آورد روزگار", "دگر عضوها را نماند قرار"]

VAZN = [
    {"id": "vazn_01", "lines": MASNAVI_1, "source": "Rumi, Masnavi I.1-2", "answer": 1},
    {"id": "vazn_02", "lines": SHAHNAMEH_1, "source": "Ferdowsi, Shahnameh, opening", "answer": 2},
    {"id": "vazn_03", "lines": HAFEZ_1, "source": "Hafez, ghazal 1 (opening of the Divan)", "answer": 3},
    {"id": "vazn_04", "lines": HAFEZ_YUSUF, "source": "Hafez, ghazal 'Yusuf-e gomgashteh'", "answer": 4},
    {"id": "vazn_05", "lines": HAFEZ_DUSH, "source": "Hafez, ghazal 'Dush didam ke malayek'", "answer": 5},
    {"id": "vazn_06", "lines": BABA_TAHER, "source": "Baba Taher, dobeyti", "answer": 7},
]

SABK_OPTIONS = ["غزل / قصیده / قطعه", "مثنوی", "رباعی", "دوبیتی"]
SABK_QUESTION = "قالب (سبک) این شعر کدام است؟"
# Sabk excerpts are two beits here (the paper uses four); the four that are also vazn items reuse the vazn
# recording (audio path ../Poetry-Vazn/Audios/<id>.wav, inside the data root), as one recitation would.
SABK = [
    {"id": "sabk_01", "lines": MASNAVI_1, "source": "Rumi, Masnavi I.1-2", "answer": 2, "clip_of": "vazn_01"},
    {"id": "sabk_02", "lines": KHAYYAM, "source": "Khayyam, ruba'i", "answer": 3},
    {"id": "sabk_03", "lines": BABA_TAHER, "source": "Baba Taher, dobeyti", "answer": 4, "clip_of": "vazn_06"},
    {"id": "sabk_04", "lines": HAFEZ_YUSUF, "source": "Hafez, ghazal 'Yusuf-e gomgashteh'", "answer": 1, "clip_of": "vazn_04"},
    {"id": "sabk_05", "lines": SAADI_BANI_ADAM, "source": "Saadi, Golestan I (qat'eh)", "answer": 1},
    {"id": "sabk_06", "lines": SHAHNAMEH_1, "source": "Ferdowsi, Shahnameh (masnavi)", "answer": 2, "clip_of": "vazn_02"},
]

# Music: tones made with sox; the gold answer is a property of the generated signal.
TEMPO_OPTIONS = ["حدود ۶۰ ضرب در دقیقه", "حدود ۱۲۰ ضرب در دقیقه", "حدود ۱۸۰ ضرب در دقیقه", "حدود ۲۴۰ ضرب در دقیقه"]
POLY_OPTIONS = ["تک‌صدایی (در هر لحظه یک نت)", "چندصدایی (چند نت هم‌زمان)", "فقط سکوت", "گفتار بدون موسیقی"]
MUSIC = [
    {"id": "music_01", "signal": ("melody", [440.0, 493.88, 523.25, 587.33]), "question": "این قطعه تک‌صدایی است یا چندصدایی؟", "options": POLY_OPTIONS, "answer": 1},
    {"id": "music_02", "signal": ("chord", [261.63, 329.63, 392.0]), "question": "این قطعه تک‌صدایی است یا چندصدایی؟", "options": POLY_OPTIONS, "answer": 2},
    {"id": "music_03", "signal": ("clicks", 60), "question": "تمپوی این قطعه تقریباً چقدر است؟", "options": TEMPO_OPTIONS, "answer": 1},
    {"id": "music_04", "signal": ("clicks", 180), "question": "تمپوی این قطعه تقریباً چقدر است؟", "options": TEMPO_OPTIONS, "answer": 3},
    {"id": "music_05", "signal": ("melody", [392.0, 440.0, 493.88]), "question": "در این قطعه چند نت پشت سر هم نواخته می‌شود؟",
     "options": ["دو", "سه", "چهار", "پنج"], "answer": 2},
]  # fmt: skip


def poem_text(lines: list[str]) -> str:
    """Hemistichs joined as read: a comma inside a beit, a full stop between beits."""
    beits = [f"{lines[i]}، {lines[i + 1]}." for i in range(0, len(lines), 2)]
    return " ".join(beits)


# --------------------------------------------------------------------------------------- tooling
def fail(message: str) -> None:
    sys.exit("make_parsa_sample.py: error: " + message)


def tool_version(tool: str) -> str:
    if shutil.which(tool) is None:
        fail(f"{tool!r} was not found on PATH; install it (e.g. apt-get install espeak-ng sox) and run again")
    out = subprocess.run([tool, "--version"], check=True, capture_output=True, text=True).stdout.strip().splitlines()[0]
    return out.split("Data at:")[0].replace("sox:", "").strip()


def to_16k(raw: str, out_wav: str) -> None:
    subprocess.run(["sox", "-R", "-G", raw, "-r", str(SAMPLE_RATE), "-c", "1", "-b", "16", out_wav], check=True)


def speak(text: str, voice: str, out_wav: str, tmp: str) -> None:
    """espeak-ng; Latin-script runs inside Persian text are spoken with the English voice and joined."""
    runs = [r.strip() for r in re.split(r"([A-Za-z][A-Za-z' -]*[A-Za-z])", text) if r.strip()] if voice.startswith(FA) else [text]
    parts = []
    for i, run in enumerate(runs):
        part = os.path.join(tmp, f"run{i}.wav")
        run_voice = EN if voice.startswith(FA) and re.fullmatch(r"[A-Za-z' -]+", run) else voice
        subprocess.run(["espeak-ng", "-v", run_voice, "-s", str(RATE_WPM), "-w", part, run], check=True)
        parts.append(part)
    joined = parts[0]
    if len(parts) > 1:
        joined = os.path.join(tmp, "joined.wav")
        subprocess.run(["sox", "-R", *parts, joined], check=True)
    to_16k(joined, out_wav)


def synth_music(signal: tuple, out_wav: str, tmp: str) -> None:
    kind, value = signal
    raw = os.path.join(tmp, "music.wav")
    base = ["sox", "-R", "-n", "-r", str(SAMPLE_RATE), "-c", "1", "-b", "16"]
    if kind == "chord":
        subprocess.run([*base, raw, "synth", "3", *[w for f in value for w in ("sine", str(f))], "remix", "-", "fade", "0.02", "3", "0.05"], check=True)
    elif kind == "melody":
        notes = []
        for i, freq in enumerate(value):
            note = os.path.join(tmp, f"note{i}.wav")
            subprocess.run([*base, note, "synth", "0.6", "sine", str(freq), "fade", "0.02", "0.6", "0.05", "pad", "0", "0.15"], check=True)
            notes.append(note)
        subprocess.run(["sox", "-R", *notes, raw], check=True)
    elif kind == "clicks":
        period = 60.0 / value
        click = os.path.join(tmp, "click.wav")
        subprocess.run([*base, click, "synth", "0.05", "sine", "1000", "pad", "0", f"{period - 0.05:.4f}"], check=True)
        subprocess.run(["sox", "-R", *([click] * round(6 / period)), raw], check=True)
    else:
        fail(f"unknown music signal {kind!r}")
    to_16k(raw, out_wav)


def check_wav(path: str) -> float:
    with wave.open(path, "rb") as w:
        if (w.getframerate(), w.getnchannels(), w.getsampwidth()) != (SAMPLE_RATE, 1, 2):
            fail(f"{path}: expected 16 kHz mono 16-bit")
        seconds = w.getnframes() / SAMPLE_RATE
    if not MIN_SECONDS <= seconds <= MAX_SECONDS:
        fail(f"{path} lasts {seconds:.2f} s, outside {MIN_SECONDS}-{MAX_SECONDS} s")
    return seconds


# ----------------------------------------------------------------------------------------- tables
def rows_for(task: str) -> list[dict]:
    """Rows in the default column names (id, audio, transcript, reference column, question, options)."""

    def mc(item, text, question, options):
        return {"id": item["id"], "text": text, "transcript": text, "question": question, "options": json.dumps(options, ensure_ascii=False), "answer": str(item["answer"])}

    if task == "asr":
        return [{"id": i["id"], "text": i["text"], "transcript": i["text"]} for i in ASR]
    if task in ("s2tt_fa_en", "s2tt_en_fa"):
        items, voice = (S2TT_FA_EN, FA) if task == "s2tt_fa_en" else (S2TT_EN_FA, EN)
        return [{"id": i["id"], "text": i["text"], "voice": voice, "transcript": i["text"], "translation": i["translation"]} for i in items]
    if task in ("intent", "register", "code_switch", "age", "gender", "emotion"):
        items = {"intent": INTENT, "register": REGISTER, "code_switch": CODE_SWITCH, "age": AGE, "gender": GENDER, "emotion": EMOTION}[task]
        return [{"id": i["id"], "text": i["text"], "voice": i.get("voice", FA), "transcript": i["text"], "label": i["label"]} for i in items]
    if task == "ner":
        return [{"id": i["id"], "text": i["text"], "transcript": i["text"], "entities": json.dumps(i["entities"], ensure_ascii=False)} for i in NER]
    if task == "mcqa":
        return [mc(i, i["text"], i["text"], i["options"]) for i in MCQA]
    if task in ("rc_wiki", "rc_tiny"):
        return [mc(i, i["text"], i["question"], i["options"]) for i in (RC_WIKI if task == "rc_wiki" else RC_TINY)]
    if task == "vazn":
        return [{**mc(i, poem_text(i["lines"][:4]), VAZN_QUESTION, VAZN_OPTIONS), "source": i["source"]} for i in VAZN]
    if task == "sabk":
        return [{**mc(i, poem_text(i["lines"]), SABK_QUESTION, SABK_OPTIONS), "source": i["source"], "clip_of": i.get("clip_of")} for i in SABK]
    if task == "music":
        return [{**mc(i, "", i["question"], i["options"]), "transcript": "", "signal": i["signal"]} for i in MUSIC]
    fail(f"no sample items for task {task!r}")


def validate(task: str, rows: list[dict]) -> None:
    spec = TASKS[task]
    ids = [r["id"] for r in rows]
    if len(set(ids)) != len(ids) or len(rows) < 3:
        fail(f"{task}: ids must be unique and there must be at least 3 rows (2 few-shot demonstrations + a query)")
    for r in rows:
        if spec.kind == "classification" and r["label"] not in spec.labels:
            fail(f"{task} {r['id']}: label {r['label']!r} is not one of {spec.labels}")
        if spec.kind == "multiple_choice":
            options = json.loads(r["options"])
            if len(options) != spec.n_options or not 1 <= int(r["answer"]) <= len(options):
                fail(f"{task} {r['id']}: needs {spec.n_options} options and an answer in range")
        if spec.kind == "ner":
            for entity in json.loads(r["entities"]):
                if entity["type"] not in spec.entity_types or entity["span"] not in r["text"]:
                    fail(f"{task} {r['id']}: bad entity {entity}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", default=DEFAULT_OUT_DIR, help="output folder (default: parsa/sample_data)")
    args = parser.parse_args()
    print(f"espeak-ng: {tool_version('espeak-ng')}\nsox:       {tool_version('sox')}")
    mapping = column_map({})  # the shipped defaults, never the user's overrides
    out_dir = os.path.abspath(args.out_dir)
    summary = []
    with tempfile.TemporaryDirectory() as tmp:
        for task in TASKS:
            rows = sorted(rows_for(task), key=lambda r: r["id"])
            validate(task, rows)
            folder, cols = mapping[task]["folder"], mapping[task]["columns"]
            audio_dir = os.path.join(out_dir, folder, mapping[task]["audio_dir"])
            os.makedirs(audio_dir, exist_ok=True)
            wanted = {r["id"] + ".wav" for r in rows if not r.get("clip_of")}
            for name in sorted(os.listdir(audio_dir)):
                if name.endswith(".wav") and name not in wanted:
                    os.remove(os.path.join(audio_dir, name))
            seconds = 0.0
            for r in rows:
                wav = os.path.join(audio_dir, r["id"] + ".wav")
                if r.get("clip_of"):
                    owner = mapping["vazn"]
                    r["audio_file"] = f"../{owner['folder']}/{owner['audio_dir']}/{r['clip_of']}.wav"
                    seconds += check_wav(os.path.join(out_dir, owner["folder"], owner["audio_dir"], r["clip_of"] + ".wav"))
                    continue
                if "signal" in r:
                    synth_music(r["signal"], wav, tmp)
                else:
                    speak(r["text"], r.get("voice", FA), wav, tmp)
                seconds += check_wav(wav)
            header = [c for c in (cols["id"], cols["audio"], cols["transcript"], cols["reference"], cols["question"], cols["options"]) if c]
            header += ["source"] if task in ("vazn", "sabk") else []
            header = list(dict.fromkeys(header))  # asr: reference is the transcript column
            with open(os.path.join(out_dir, folder, f"{folder}.csv"), "w", encoding="utf-8", newline="") as handle:
                writer = csv.DictWriter(handle, fieldnames=header, lineterminator="\n", extrasaction="ignore")
                writer.writeheader()
                for r in rows:
                    writer.writerow({**r, cols["audio"]: r.get("audio_file") or r["id"] + ".wav"})
            summary.append((task, folder, len(rows), seconds))
    total_seconds = sum(s for *_, s in summary)
    total_bytes = sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(out_dir) for f in files if f.endswith(".wav"))
    n_files = sum(f.endswith(".wav") for _, _, files in os.walk(out_dir) for f in files)
    for task, folder, n, seconds in summary:
        print(f"{task:12s} {folder:36s} {n} rows {seconds:6.2f} s")
    print(f"total {sum(n for _, _, n, _ in summary)} rows, {total_seconds:.2f} s of audio per row summed; {n_files} wav files, {total_bytes} bytes")
    for task in TASKS:  # the real loader must accept everything written
        load_task_docs(task, data_dir=out_dir, setting="text" if "text" in TASKS[task].settings else "audio", columns={})


if __name__ == "__main__":
    main()
