#!/usr/bin/env python3
"""Make the small synthetic MMAC sample shipped in ``mmac/sample_data`` (all 6 categories, all 15 dimensions).

Writes ``mmac.jsonl`` (the canonical schema of :mod:`mmac.data`) and ``audio/<id>.wav`` (16 kHz mono 16-bit
PCM). Every label is true of the signal by construction and, where the paper measures it, measured here:

- speech: ``espeak-ng -v <voice> -s <words per minute> -p <pitch 0-99> -w tmp.wav "<text>"``, then
  ``sox -R -G tmp.wav -r 16000 -c 1 -b 16 out.wav`` (repeatable dither, gain guarded against clipping);
- pitch: median F0 over voiced frames, ``librosa.pyin(y, fmin=50, fmax=500, sr=16000, frame_length=1024)``;
  level low < 100 Hz <= medium <= 200 Hz < high (our thresholds);
- speed: syllables per second = the text's syllable count (counted by hand, written below) / the speech
  duration after trimming leading and trailing silence (``librosa.effects.trim(y, top_db=30)``); level
  slow < 3.5 <= medium <= 5.5 < fast (our thresholds);
- gender / age / timbre: the espeak-ng voice variant's design (``m3`` male, ``f3`` female, ``grandpa`` an old
  man's voice with pitch tremor, ``whisper`` breathy unvoiced speech; the whisper label also states pyin's
  voiced-frame share);
- accent: English text read by espeak-ng's French voice (``fr``: French phonology) or its British voice
  (``en-gb``);
- emotion: espeak-ng has no emotional expression; the neutral item is labelled neutral for that reason. The
  emotion-change item's emotions are carried by the words and by prosody set here (slow, low pitch, then
  fast, high pitch), not acted;
- background: noise made with numpy (seeded): pink noise band-limited to 300-6000 Hz ("rain-like hiss"),
  mixed 12 dB below the speech's RMS; a click train of 5 ms 2 kHz bursts at 2 per second (a metronome at 120
  beats per minute);
- dynamic changes: two segments concatenated (or noise switched on) inside one clip; the change time in
  seconds is the first segment's measured length and is part of the label;
- content: the transcript is the text read; implication: public-domain texts (Aesop's fable "The Fox and
  the Grapes"; Oscar Wilde, *Lady Windermere's Fan*, 1892) with their stated meaning.

Deterministic for the same espeak-ng, sox, numpy and librosa versions (seeded noise, ``sox -R``). Needs
espeak-ng and sox on PATH (``apt-get install espeak-ng sox``) and the repository importable (it loads the
written sample with :func:`mmac.data.load_samples` as a final check).

Usage:  python scripts/make_mmac_sample.py [--out-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import soundfile

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO_ROOT)

SR = 16000
DEFAULT_OUT = os.path.join(REPO_ROOT, "mmac", "sample_data")
PITCH_LOW_HZ, PITCH_HIGH_HZ = 100.0, 200.0
SLOW_SPS, FAST_SPS = 3.5, 5.5


# ------------------------------------------------------------------------------------------ signal tools
def speak(text: str, voice: str = "en-us+m3", wpm: int = 160, pitch: int = 50) -> np.ndarray:
    """espeak-ng speech, converted by sox to 16 kHz mono 16-bit, as float32 in [-1, 1]."""
    with tempfile.TemporaryDirectory() as tmp:
        raw, out = os.path.join(tmp, "raw.wav"), os.path.join(tmp, "out.wav")
        subprocess.run(["espeak-ng", "-v", voice, "-s", str(wpm), "-p", str(pitch), "-w", raw, text], check=True)
        subprocess.run(["sox", "-R", "-G", raw, "-r", str(SR), "-c", "1", "-b", "16", out], check=True)
        samples, rate = soundfile.read(out, dtype="float32")
    assert rate == SR
    return samples


def rms(y: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(y, dtype=np.float64))))


def pink_noise(seconds: float, seed: int) -> np.ndarray:
    """Pink (1/f power) noise band-limited to 300-6000 Hz, unit RMS: a steady rain-like hiss."""
    n = int(seconds * SR)
    spectrum = np.fft.rfft(np.random.default_rng(seed).standard_normal(n))
    freqs = np.fft.rfftfreq(n, 1 / SR)
    shape = np.zeros_like(freqs)
    band = (freqs >= 300) & (freqs <= 6000)
    shape[band] = 1 / np.sqrt(freqs[band])
    noise = np.fft.irfft(spectrum * shape, n)
    return (noise / rms(noise)).astype(np.float32)


def click_train(seconds: float, per_second: float = 2.0) -> np.ndarray:
    """5 ms bursts of a 2 kHz sine (Hann-windowed) every 1/per_second s, peak 0.5."""
    y = np.zeros(int(seconds * SR), dtype=np.float32)
    burst = int(0.005 * SR)
    tone = 0.5 * np.sin(2 * np.pi * 2000 * np.arange(burst) / SR) * np.hanning(burst)
    for start in np.arange(0.1, seconds - 0.01, 1 / per_second):
        i = int(start * SR)
        y[i : i + burst] += tone[: len(y) - i]
    return y


def mix_under(speech: np.ndarray, noise: np.ndarray, db_below: float = 12.0) -> np.ndarray:
    """``speech + noise`` with the noise scaled to ``db_below`` dB under the speech's RMS."""
    return speech + noise * (rms(speech) / 10 ** (db_below / 20))


def median_f0(y: np.ndarray) -> tuple[float | None, float]:
    """(median F0 in Hz over voiced frames or None, share of voiced frames) by librosa pyin."""
    import librosa

    f0, voiced, _ = librosa.pyin(y, fmin=50, fmax=500, sr=SR, frame_length=1024)
    values = f0[voiced]
    return (float(np.median(values)) if len(values) else None), float(np.mean(voiced))


def speech_seconds(y: np.ndarray) -> float:
    import librosa

    trimmed, _ = librosa.effects.trim(y, top_db=30)
    return len(trimmed) / SR


def pitch_level(hz: float) -> str:
    return "low" if hz < PITCH_LOW_HZ else "high" if hz > PITCH_HIGH_HZ else "medium"


def speed_level(sps: float) -> str:
    return "slow" if sps < SLOW_SPS else "fast" if sps > FAST_SPS else "medium"


# ------------------------------------------------------------------------------------------ items
def build() -> list[tuple[dict, np.ndarray]]:
    """Every sample: (row of mmac.jsonl without 'audio', signal)."""
    items = []

    def add(sample_id, category, targets, y, language="en", source="", measured=None):
        row = {"id": sample_id, "category": category, "targets": targets, "language": language, "source": source}
        if measured:
            row["measured"] = measured
        items.append((row, np.clip(y, -1, 1).astype(np.float32)))

    def target(dimension, label):
        return {"dimension": dimension, "label": label}

    # content: the transcript is the text read.
    text = "The library opens at nine o'clock every morning, and closes at six in the evening."
    add("content_en_01", "content", [target("content", f'"{text}"')], speak(text), source="espeak-ng en-us+m3, 160 wpm")
    text = "床前明月光，疑是地上霜。举头望明月，低头思故乡。"
    add("content_zh_01", "content", [target("content", f"「{text}」(李白《静夜思》)")], speak(text, "cmn-latn-pinyin", 140),
        language="zh", source="espeak-ng cmn-latn-pinyin, 140 wpm; Li Bai, public domain")  # fmt: skip

    # background: mixed-in sounds.
    speech = speak("Please remember to bring an umbrella tomorrow.")
    add("background_rain_01", "background",
        [target("background", "a continuous, steady broadband hiss like rain (band-limited pink noise) throughout the clip, under a male voice")],
        mix_under(speech, pink_noise(len(speech) / SR, seed=1)), source="espeak-ng en-us+m3; numpy pink noise 300-6000 Hz, 12 dB under the speech")  # fmt: skip
    add("background_clicks_01", "background",
        [target("background", "regular short clicks, 2 per second, like a metronome at 120 beats per minute; no speech and no other sound")],
        click_train(4.0), language="", source="numpy: 5 ms 2 kHz bursts every 0.5 s")  # fmt: skip

    # persona: the voice variant's design (F0 measured for the gender items).
    text = "Good afternoon, this is your driver speaking. We will arrive in ten minutes."
    male = speak(text, "en-us+m3")
    f0, _ = median_f0(male)
    add("persona_male_adult_01", "persona", [target("gender", "male"), target("age", "adult")], male,
        source="espeak-ng en-us+m3 (a male adult voice variant)", measured={"median_f0_hz": round(f0, 1)})  # fmt: skip
    female = speak(text, "en-us+f3")
    f0, _ = median_f0(female)
    add("persona_female_01", "persona", [target("gender", "female")], female, source="espeak-ng en-us+f3 (a female voice variant)",
        measured={"median_f0_hz": round(f0, 1)})  # fmt: skip
    add("persona_elderly_01", "persona", [target("age", "elderly (an old man)")], speak("When I was young, we walked to school every day.", "en-us+grandpa"),
        source="espeak-ng en-us+grandpa (variant designed as an old man's voice: pitch tremor, flutter 20)")  # fmt: skip

    # paralinguistic
    add("emotion_neutral_01", "paralinguistic", [target("emotion", "neutral: a flat read-out with no emotional expression")],
        speak("The meeting has been moved to room four on the second floor."), source="espeak-ng en-us+m3 (no emotion model)")  # fmt: skip
    add("accent_french_01", "paralinguistic", [target("accent", "French accent: English spoken with French pronunciation")],
        speak("I would like a cup of coffee and a piece of cake, please.", "fr"), source="espeak-ng fr voice reading an English sentence")  # fmt: skip
    add("accent_british_01", "paralinguistic", [target("accent", "British English (southern British) accent")],
        speak("I would like a cup of coffee and a piece of cake, please.", "en-gb"), source="espeak-ng en-gb")  # fmt: skip
    text = "The train to the city centre leaves from platform two."  # 14 syllables
    for sample_id, voice, pitch in (("pitch_low_01", "en-us+m3", 5), ("pitch_high_01", "en-us+f3", 95)):
        y = speak(text, voice, pitch=pitch)
        f0, _ = median_f0(y)
        add(sample_id, "paralinguistic", [target("pitch", f"{pitch_level(f0)} (median F0 {f0:.0f} Hz)")], y,
            source=f"espeak-ng {voice} -p {pitch}", measured={"median_f0_hz": round(f0, 1)})  # fmt: skip
    text, syllables = "Please read the instructions carefully before you begin the test.", 17
    for sample_id, wpm in (("speed_slow_01", 90), ("speed_fast_01", 300)):
        y = speak(text, wpm=wpm)
        sps = syllables / speech_seconds(y)
        add(sample_id, "paralinguistic", [target("speed", f"{speed_level(sps)} ({sps:.1f} syllables per second)")], y,
            source=f"espeak-ng en-us+m3 -s {wpm}", measured={"syllables": syllables, "speech_seconds": round(speech_seconds(y), 3), "syllables_per_second": round(sps, 2)})  # fmt: skip
    y = speak("Can you keep a secret? Nobody else must know about this.", "en-us+whisper")
    _, voiced = median_f0(y)
    add("timbre_whisper_01", "paralinguistic", [target("timbre", f"whispered, breathy voice with no voiced pitch (pyin finds voicing in {100 * voiced:.0f}% of frames)")], y,
        source="espeak-ng en-us+whisper", measured={"voiced_frame_share": round(voiced, 3)})  # fmt: skip
    add("vocal_laugh_01", "paralinguistic", [target("vocal", "laughter: repeated 'ha ha ha' syllables (synthetic, spoken rather than natural laughter)")],
        speak("Ha ha ha ha! Ha ha ha!", pitch=70), source="espeak-ng en-us+m3 reading 'Ha ha ha ha! Ha ha ha!'")  # fmt: skip

    # dynamic: one change per clip, at a recorded time.
    speech = speak("The weather report says it will stay dry today, but I am not so sure about that.")
    change = 2.0
    noise = pink_noise(len(speech) / SR, seed=2)
    noise[: int(change * SR)] = 0.0
    add("background_change_01", "dynamic",
        [target("background_change", f"quiet background (no sound besides the voice) until {change:.2f} s, then a continuous rain-like hiss (pink noise) to the end")],
        mix_under(speech, noise), source="espeak-ng en-us+m3; numpy pink noise switched on at 2.00 s, 12 dB under the speech")  # fmt: skip
    first = speak("I lost my keys again, and now I will be late for work.", wpm=110, pitch=20)
    second = speak("Oh wait, here they are, in my pocket! Wonderful!", wpm=200, pitch=85)
    add("emotion_change_01", "dynamic",
        [target("emotion_change", f"from dejected and sad (slow, low voice: 'I lost my keys again...') to happy, excited relief (fast, high voice: 'Oh wait, here they are...') at {len(first) / SR:.2f} s")],
        np.concatenate([first, second]), source="espeak-ng en-us+m3: -s 110 -p 20, then -s 200 -p 85 (emotion carried by words and prosody, not acted)")  # fmt: skip
    text = "The next stop is the central station."
    low, high = speak(text, pitch=5), speak(text, "en-us+m3", pitch=99)
    f_low, f_high = median_f0(low)[0], median_f0(high)[0]
    add("pitch_change_01", "dynamic",
        [target("pitch_change", f"rises at {len(low) / SR:.2f} s from {pitch_level(f_low)} (median F0 {f_low:.0f} Hz) to {pitch_level(f_high)} (median F0 {f_high:.0f} Hz); the same sentence twice")],
        np.concatenate([low, high]), source="espeak-ng en-us+m3 -p 5, then -p 99", measured={"median_f0_hz_before": round(f_low, 1), "median_f0_hz_after": round(f_high, 1)})  # fmt: skip
    text, syllables = "We will start the test now.", 7
    slow, fast = speak(text, wpm=90), speak(text, wpm=300)
    s1, s2 = syllables / speech_seconds(slow), syllables / speech_seconds(fast)
    add("speed_change_01", "dynamic",
        [target("speed_change", f"speeds up at {len(slow) / SR:.2f} s from slow ({s1:.1f} syllables per second) to fast ({s2:.1f} syllables per second); the same sentence twice")],
        np.concatenate([slow, fast]), source="espeak-ng en-us+m3 -s 90, then -s 300",
        measured={"syllables_each": syllables, "syllables_per_second_before": round(s1, 2), "syllables_per_second_after": round(s2, 2)})  # fmt: skip

    # implication: public-domain texts with their stated meaning.
    add("implication_grapes_01", "implication",
        [target("implication", "sour grapes: the speaker belittles what they failed to get, to hide their disappointment (Aesop, 'The Fox and the Grapes')")],
        speak("Those grapes are surely sour. I did not want them anyway."), source="Aesop, 'The Fox and the Grapes' (public domain); espeak-ng en-us+m3")  # fmt: skip
    add("implication_wilde_01", "implication",
        [target("implication", "ironic self-mockery: it sounds like a boast of willpower but admits having none, since temptation is the one thing that needs resisting")],
        speak("I can resist everything except temptation."), source="Oscar Wilde, Lady Windermere's Fan, 1892 (public domain); espeak-ng en-us+m3")  # fmt: skip
    return items


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out-dir", default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    for tool in ("espeak-ng", "sox"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is not on PATH (apt-get install espeak-ng sox)")
    audio_dir = os.path.join(args.out_dir, "audio")
    os.makedirs(audio_dir, exist_ok=True)
    for name in os.listdir(audio_dir):
        if name.endswith(".wav"):
            os.remove(os.path.join(audio_dir, name))
    rows = []
    for row, y in sorted(build(), key=lambda item: item[0]["id"]):
        seconds = len(y) / SR
        assert 1.0 <= seconds <= 15.0 and rms(y) > 1e-3, (row["id"], seconds)
        relative = f"audio/{row['id']}.wav"
        soundfile.write(os.path.join(args.out_dir, relative), y, SR, subtype="PCM_16")
        rows.append({"id": row["id"], "audio": relative, **{k: v for k, v in row.items() if k != "id"}, "seconds": round(seconds, 2)})
    with open(os.path.join(args.out_dir, "mmac.jsonl"), "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    from mmac.data import load_samples, summary

    samples = load_samples(args.out_dir)
    print(f"{len(samples)} samples, {sum(r['seconds'] for r in rows):.1f} s: {json.dumps(summary(samples))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
