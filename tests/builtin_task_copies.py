"""Local copies of lmms-eval built-in tasks' hub datasets, in the hub's own parquet layout, for offline CLI runs.

lmms-eval's built-in YAML is used unchanged: it names a hub repository (``dataset_path: lmms-lab-audio/librispeech``)
and ``datasets.load_dataset`` reads a local folder of that name, relative to the working directory, before it
would ask the hub. Each folder holds what the hub holds for a dataset pushed with ``push_to_hub``: a ``README.md``
whose YAML header has ``configs`` (config name -> split -> files) and ``dataset_info`` (features), and
``<config>/<split>-00000-of-00001.parquet`` whose schema carries the features as JSON under the ``huggingface``
metadata key. An ``Audio`` or ``Image`` column is stored the hub's way: ``struct<bytes: binary, path: string>``
holding the encoded file and the name it had when the dataset was built (``0.wav``: not a file anywhere here).
The files are written with pyarrow, not with ``datasets``, so the reader under test is not also the writer.

Contents (made here from the shipped samples; no hub data):

- ``lmms-lab-audio/librispeech``, config and split ``librispeech_test_clean`` (the task ``librispeech_test_clean``):
  three English espeak-ng clips of ``mmac/sample_data`` (16 kHz mono) as wav, flac, wav bytes, with their texts
  upper-cased without punctuation as LibriSpeech writes them (``gt``), ``source`` and ``task`` (``asr_en``) as the
  real rows have;
- ``lmms-lab-encoder/MME``, split ``test`` (the task ``mme``): two PNG images drawn here, each with the
  yes and the no question MME pairs per image (MME scores pairs), one pair "existence" (perception), one
  "commonsense_reasoning" (cognition);
- ``gsm8k``, config ``main``, splits ``train`` (5 rows, enough for the 5-shot ``gsm8k``) and ``test`` (2 rows), read
  by ``gsm8k`` and ``gsm8k_cot_zeroshot``: arithmetic word problems written here, answers in GSM8K's
  ``... #### <number>`` form.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MMAC_AUDIO = ROOT / "mmac" / "sample_data" / "audio"

#: (clip of mmac/sample_data/audio, stored file name and format, LibriSpeech-style transcript)
LIBRISPEECH_ROWS = (
    ("content_en_01", "0.wav", "THE LIBRARY OPENS AT NINE O'CLOCK EVERY MORNING AND CLOSES AT SIX IN THE EVENING"),
    ("persona_female_01", "1.flac", "GOOD AFTERNOON THIS IS YOUR DRIVER SPEAKING WE WILL ARRIVE IN TEN MINUTES"),
    ("emotion_neutral_01", "2.wav", "THE MEETING HAS BEEN MOVED TO ROOM FOUR ON THE SECOND FLOOR"),
)


def _write_hub_dataset(folder: Path, config: str | None, splits: dict[str, list[dict]], features: dict) -> None:
    """``folder/README.md`` + ``folder/<config or data>/<split>-00000-of-00001.parquet`` as the hub stores them."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    arrow_types = {
        "Audio": pa.struct([("bytes", pa.binary()), ("path", pa.string())]),
        "Image": pa.struct([("bytes", pa.binary()), ("path", pa.string())]),
        "string": pa.string(),
    }
    schema = pa.schema(
        [(name, arrow_types[spec["_type"] if spec["_type"] != "Value" else spec["dtype"]]) for name, spec in features.items()],
        metadata={"huggingface": json.dumps({"info": {"features": features}})},
    )
    subfolder = config or "data"
    (folder / subfolder).mkdir(parents=True, exist_ok=True)
    for split, rows in splits.items():
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), folder / subfolder / f"{split}-00000-of-00001.parquet")

    def card_feature(name, spec):
        if spec["_type"] == "Audio":
            return f"  - name: {name}\n    dtype:\n      audio:\n        sampling_rate: {spec['sampling_rate']}\n"
        return f"  - name: {name}\n    dtype: {'image' if spec['_type'] == 'Image' else spec['dtype']}\n"

    config_name = config or "default"
    card = "---\ndataset_info:\n- config_name: " + config_name + "\n  features:\n" + "".join(card_feature(n, s) for n, s in features.items())
    card += "  splits:\n" + "".join(f"  - name: {split}\n    num_examples: {len(rows)}\n" for split, rows in splits.items())
    card += f"configs:\n- config_name: {config_name}\n  data_files:\n"
    card += "".join(f"  - split: {split}\n    path: {subfolder}/{split}-*\n" for split in splits)
    (folder / "README.md").write_text(card + "---\n", encoding="utf-8")


def _encoded(clip: Path, file_format: str) -> bytes:
    import soundfile

    samples, rate = soundfile.read(clip, dtype="float32")
    buffer = io.BytesIO()
    soundfile.write(buffer, samples, rate, format=file_format, subtype="PCM_16")
    return buffer.getvalue()


def write_librispeech_test_clean(root: Path) -> Path:
    """``root/lmms-lab-audio/librispeech`` (see the module docstring); returns that folder."""
    folder = Path(root) / "lmms-lab-audio" / "librispeech"
    rows = [
        {"audio": {"bytes": _encoded(MMAC_AUDIO / f"{clip}.wav", name.rsplit(".", 1)[1].upper()), "path": name}, "gt": text,
         "source": "librispeech_test_clean", "task": "asr_en"}
        for clip, name, text in LIBRISPEECH_ROWS
    ]  # fmt: skip
    features = {"audio": {"sampling_rate": 16000, "_type": "Audio"}, "gt": {"dtype": "string", "_type": "Value"},
                "source": {"dtype": "string", "_type": "Value"}, "task": {"dtype": "string", "_type": "Value"}}  # fmt: skip
    _write_hub_dataset(folder, "librispeech_test_clean", {"librispeech_test_clean": rows}, features)
    return folder


#: MME rows: (image index, question, answer, category); MME scores each image's yes/no pair together.
MME_ROWS = (
    (0, "Is there a red square in this image? Please answer yes or no.", "Yes", "existence"),
    (0, "Is there a green circle in this image? Please answer yes or no.", "No", "existence"),
    (1, "Is this a picture of a clear blue sky? Please answer yes or no.", "Yes", "commonsense_reasoning"),
    (1, "Is it night in this picture? Please answer yes or no.", "No", "commonsense_reasoning"),
)
#: The two images' sizes (width, height): one larger than lmms-eval's chat budget of 512 x 512 pixels, one smaller.
MME_IMAGE_SIZES = ((800, 600), (320, 240))


def write_mme(root: Path) -> Path:
    """``root/lmms-lab-encoder/MME`` (see the module docstring); returns that folder."""
    from PIL import Image, ImageDraw

    images = []
    for index, (width, height) in enumerate(MME_IMAGE_SIZES):
        image = Image.new("RGB", (width, height), (255, 255, 255) if index == 0 else (120, 170, 235))
        if index == 0:
            ImageDraw.Draw(image).rectangle((width // 4, height // 4, width // 2, height // 2), fill=(220, 20, 20))
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        images.append(buffer.getvalue())
    rows = [
        {"question_id": f"{category}/{index}.png", "image": {"bytes": images[index], "path": f"{index}.png"}, "question": question, "answer": answer, "category": category}
        for index, question, answer, category in MME_ROWS
    ]
    features = {"question_id": {"dtype": "string", "_type": "Value"}, "image": {"_type": "Image"}, "question": {"dtype": "string", "_type": "Value"},
                "answer": {"dtype": "string", "_type": "Value"}, "category": {"dtype": "string", "_type": "Value"}}  # fmt: skip
    folder = Path(root) / "lmms-lab-encoder" / "MME"
    _write_hub_dataset(folder, None, {"test": rows}, features)
    return folder


GSM8K_TRAIN = tuple(
    (f"Tom has {a} apples and buys {b} more. How many apples does he have now?", f"Tom has {a} + {b} = <<{a}+{b}={a + b}>>{a + b} apples.\n#### {a + b}")
    for a, b in ((3, 4), (10, 5), (7, 8), (12, 9), (6, 6))
)
GSM8K_TEST = (
    ("A box holds 4 pens. How many pens are in 3 boxes?", "3 boxes hold 3 * 4 = <<3*4=12>>12 pens.\n#### 12"),
    ("Sara reads 5 pages a day. How many pages does she read in 7 days?", "She reads 5 * 7 = <<5*7=35>>35 pages.\n#### 35"),
)


def write_gsm8k(root: Path) -> Path:
    """``root/gsm8k`` (see the module docstring); returns that folder."""
    features = {"question": {"dtype": "string", "_type": "Value"}, "answer": {"dtype": "string", "_type": "Value"}}
    splits = {name: [{"question": q, "answer": a} for q, a in rows] for name, rows in (("train", GSM8K_TRAIN), ("test", GSM8K_TEST))}
    folder = Path(root) / "gsm8k"
    _write_hub_dataset(folder, "main", splits, features)
    return folder
