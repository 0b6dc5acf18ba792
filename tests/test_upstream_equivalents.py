"""Each swap of ``lmms_eval_tasks.upstream_export.UPSTREAM_EQUIVALENTS`` gives the same numbers as the library the
plugin uses, on the real MCGA rows (the sample release, the official runner's rows and the official-score fixture), the
PARSA-Bench sample and hostile strings; the swap not made (OpenCC ``t2s`` -> zhconv) differs, and the first differing
input is pinned. Upstream's modules come from ``../shared/upstream/lmms-eval-main-75571cfe.tar.gz``, one file each,
loaded by path (the whole lmms-eval package is not imported)."""

from __future__ import annotations

import csv
import importlib.util
import json
import re
import sys
import tarfile
from pathlib import Path

import pytest

from lmms_eval_tasks import upstream_export as ex
from mcga import judging, metrics, normalize
from parsa.normalize import normalize_persian

ROOT = Path(__file__).resolve().parents[1]
UPSTREAM = ROOT.parent / "shared" / "upstream" / "lmms-eval-main-75571cfe.tar.gz"
HOSTILE = [
    "",
    " ",
    "\t\n\u3000 \u00a0",
    "e\u0301 a\u0308 n\u0303",  # combining marks
    "\u0915\u093f\u0928\u094d",  # Devanagari vowel sign and virama (Mn/Mc)
    "ＡＢＣ１２３，。！（全角）［注］",  # full-width
    "😀👍🏽👨‍👩‍👧 🇮🇷",  # emoji, skin tone, ZWJ sequence, flag
    "[unclosed <tag (paren",
    "a)b]c>d",
    "<think>draft</think>答案：舉頭望明月",
    "ﬁ ﬀ ㎏ ① Ⅻ",  # NFKC compatibility forms
    "\u200c\u200d\u200e\ufeff",  # ZWNJ, ZWJ, LRM, BOM
    "اَلسَّلامُ عَلَيْكُم، ۱۲۳ ك ي",  # Arabic harakat, Persian digits, Arabic kaf/yeh
    "Œuvre ßtraße ÆØ ł",
    "乾清宮裏靜 乾隆 乾燥 徳 豫",
]


def _strings_in(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings_in(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings_in(v)]
    return []


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def mcga_rows() -> list[dict]:
    """Every row of the MCGA sample release and of the official runner's fixture (outputs included)."""
    paths = sorted((ROOT / "mcga/sample_data/data").glob("*.jsonl")) + sorted((ROOT / "tests/fixtures/official_runner_rows").glob("*/demo_audio.jsonl"))
    return [row for path in paths for row in _jsonl(path)]


def mcga_strings() -> list[str]:
    official = json.loads((ROOT / "tests/fixtures/mcga_official_scores.json").read_text(encoding="utf-8"))
    return _strings_in(mcga_rows()) + _strings_in({k: v for k, v in official.items() if k not in ("source", "versions")})


def parsa_strings() -> list[str]:
    out = []
    for path in sorted((ROOT / "parsa/sample_data").rglob("*.csv")):
        with path.open(encoding="utf-8", newline="") as handle:
            out += [cell for row in csv.reader(handle) for cell in row]
    return out


def corpus() -> list[str]:
    """Distinct strings, in a fixed order: MCGA, then PARSA, then the hostile ones."""
    return list(dict.fromkeys(mcga_strings() + parsa_strings() + HOSTILE))


def test_the_corpus_holds_the_real_rows():
    strings = corpus()
    assert len(mcga_strings()) > 900 and len(parsa_strings()) > 400 and len(strings) > 550
    assert "明月几时有？把酒问青天。不知天上宫阙，今夕是何年。我欲乘风归去，又恐琼楼玉宇，高处不胜寒。" in strings
    assert "امروز هوا آفتابی و گرم است." in strings


@pytest.fixture(scope="module")
def upstream_module(tmp_path_factory):
    """``load(path inside lmms-eval)``: one file of upstream main, loaded by path as its own module."""
    if not UPSTREAM.parent.is_dir():
        pytest.skip(f"{UPSTREAM.parent} is absent: upstream main is not available to compare with")
    folder = tmp_path_factory.mktemp("upstream")

    def load(inner: str):
        with tarfile.open(UPSTREAM) as archive:
            archive.extract(f"lmms-eval/{inner}", folder, filter="data")
        name = "upstream_" + re.sub(r"\W", "_", inner)
        spec = importlib.util.spec_from_file_location(name, folder / "lmms-eval" / inner)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module

    return load


# ------------------------------------------------------------------ whisper_normalizer.basic -> upstream's vendored copy
def test_upstreams_vendored_basic_normalizer_equals_whisper_normalizer_and_ours(upstream_module):
    from whisper_normalizer.basic import BasicTextNormalizer

    theirs = upstream_module("lmms_eval/tasks/librispeech/whisper_normalizer/basic.py").BasicTextNormalizer()
    library, ours = BasicTextNormalizer(), normalize._whisper_basic()
    strings = corpus()
    differing = [s for s in strings if not theirs(s) == library(s) == ours(s)]
    assert differing == []
    # the whole official normaliser, with upstream's step 3 in place of ours
    width = str.maketrans(normalize._FULL_WIDTH, normalize._HALF_WIDTH)
    swapped = [re.sub(r"\s+", "", theirs(normalize._t2s().convert(s).translate(width))) if s else "" for s in strings]
    assert swapped == [normalize.normalize_for_cer(s) for s in strings]
    assert theirs("ＡＢＣ１２３，。！（全角）［注］") == "abc123 全角 注 " and ours("[x] 《静夜思》") == " 静夜思 "


def test_the_export_imports_upstreams_normalizer_and_names_lmms_eval_in_the_signature():
    source = (ROOT / "mcga/normalize.py").read_text(encoding="utf-8")
    exported = ex.use_upstream_equivalents(source, "mcga/normalize.py")
    assert "    from lmms_eval.tasks.librispeech.whisper_normalizer.basic import BasicTextNormalizer\n" in exported
    assert "whisper_normalizer.basic import" not in exported.replace("lmms_eval.tasks.librispeech.whisper_normalizer.basic import", "")
    assert ex.set_constant(exported, "WHISPER_BASIC_DISTRIBUTION", "lmms_eval", "x").count('WHISPER_BASIC_DISTRIBUTION = "lmms_eval"') == 1
    assert "whisper-basic(whisper-normalizer-0.1.15)" in normalize.normalizer_signature()  # the plugin's is unchanged


# ------------------------------------------------------------------ rapidfuzz Levenshtein -> editdistance (and jiwer)
def _pairs(items: list) -> list[tuple]:
    """Every item against the next five (real references against real outputs and other lines)."""
    return [(a, b) for i, a in enumerate(items) for b in items[i + 1 : i + 6]] + [(a, a) for a in items[:20]]


def test_editdistance_counts_the_edits_rapidfuzz_counts_on_characters_and_words():
    import editdistance
    from rapidfuzz.distance.Levenshtein import distance

    mcga = list(dict.fromkeys(normalize.normalize_for_cer(s) for s in mcga_strings() + HOSTILE))
    persian = list(dict.fromkeys(normalize_persian(s) for s in parsa_strings() + HOSTILE))
    raw = corpus()
    character_pairs = _pairs(mcga) + _pairs(persian) + _pairs(raw)
    word_pairs = [(a.split(" "), b.split(" ")) for a, b in _pairs(persian)]
    assert len(character_pairs) > 5000 and len(word_pairs) > 1500
    assert [(a, b) for a, b in character_pairs + word_pairs if editdistance.eval(a, b) != distance(a, b)] == []
    assert editdistance.eval("床前明月光", "床前明日光") == distance("床前明月光", "床前明日光") == 1


def test_the_official_cer_from_editdistance_equals_jiwer_to_the_bit():
    import editdistance
    import jiwer

    rows = [r for r in mcga_rows() if r.get("asr")]
    refs = [normalize.normalize_for_cer(r["asr"]) for r in rows]
    hyps = [normalize.normalize_for_cer(next((v for k, v in r.items() if k.endswith("_r") and isinstance(v, str)), r["asr"][::-1])) for r in rows]
    pairs = [(editdistance.eval(r.strip(), h.strip()), len(r.strip())) for r, h in zip(refs, hyps)]
    assert 0 < sum(p[0] for p in pairs)  # real errors among the outputs
    assert 100.0 * metrics.cer_from_edits(pairs) == metrics._corpus_cer_percent(refs, hyps) == 100.0 * jiwer.cer(refs, hyps)
    for ref, hyp in _pairs(refs + hyps + [normalize.normalize_for_cer(s) for s in HOSTILE]):
        assert metrics.cer_from_edits([(editdistance.eval(ref, hyp), len(ref))]) == float(jiwer.cer(ref, hyp)), (ref, hyp)


def test_the_sec_cer_adapter_keeps_jiwers_values_on_the_real_rows():
    import jiwer

    rows = [r for r in mcga_rows() if "sec_3" in r or "sec_r" in r]
    texts = [r["asr"] for r in rows] + [s for r in rows for k, s in r.items() if k.startswith("sec") and isinstance(s, str)] + HOSTILE
    assert len(texts) > 20
    for asr, part in _pairs(texts):
        expected = float(jiwer.cer(normalize.normalize_for_cer(asr), normalize.normalize_for_cer(judging.sec_sentence_text(part))))
        assert judging.official_sec_cer(asr, part) == expected, (asr, part)
    assert judging.official_sec_cer("", "床前明月光|x") == 5.0  # jiwer's value with no reference: the insertions


def test_the_export_counts_edits_with_editdistance_under_the_plugins_names():
    for path in ("mcga/metrics.py", "parsa/metrics.py"):
        exported = ex.use_upstream_equivalents((ROOT / path).read_text(encoding="utf-8"), path)
        assert "rapidfuzz" not in "".join(line for line in exported.splitlines() if "import" in line), path
    assert "from editdistance import eval as _levenshtein_distance\n" in ex.use_upstream_equivalents((ROOT / "parsa/metrics.py").read_text(encoding="utf-8"), "p")
    with pytest.raises(ex.ExportError, match="x.py:1: rapidfuzz.distance.Levenshtein.opcodes has no proven upstream equivalent"):
        ex.use_upstream_equivalents("from rapidfuzz.distance.Levenshtein import opcodes\n", "x.py")
    with pytest.raises(ex.ExportError, match="x.py:2: `import`"):
        ex.use_upstream_equivalents("x = 1\nimport whisper_normalizer.basic\n", "x.py")


# ------------------------------------------------------------------ not swapped: OpenCC t2s -> zhconv
def test_zhconv_is_not_opencc_t2s_so_the_official_cer_keeps_opencc():
    """zhconv agrees with OpenCC ``t2s`` on every real MCGA string here, but not on the characters and phrases a reply
    may hold: 512 single characters of U+4E00-U+9FFF differ (zhconv 1.4.3, OpenCC 1.4.2), the first U+4E23, and phrases
    such as 傢俱 (家具 for OpenCC, 家俱 for zhconv), which changes an official CER from 0 to 50%."""
    zhconv = pytest.importorskip("zhconv", reason="zhconv (lmms-eval's audio extra) is not installed here")
    t2s = normalize._t2s()
    assert [s for s in mcga_strings() if zhconv.convert(s, "zh-cn") != t2s.convert(s)] == []
    differing = [(c, zhconv.convert(c, "zh-cn"), t2s.convert(c)) for c in map(chr, range(0x4E00, 0xA000)) if zhconv.convert(c, "zh-cn") != t2s.convert(c)]
    assert differing[0] == ("丣", "卯", "丣") and len(differing) > 100
    assert [(zhconv.convert(p, "zh-cn"), t2s.convert(p)) for p in ("傢俱", "甚麼")] == [("家俱", "家具"), ("什么", "甚么")]
    assert metrics._corpus_cer_percent(["家具"], [normalize.normalize_for_cer("傢俱")]) == 0.0
    assert metrics._corpus_cer_percent(["家具"], [zhconv.convert("傢俱", "zh-cn")]) == 50.0


# ------------------------------------------------------------------ not swapped: our reasoning split -> upstream's
def test_upstreams_reasoning_tag_stripping_is_not_our_split(upstream_module):
    """lmms-eval strips closed ``--reasoning_tags`` blocks (by default ``<think>``, ``<analysis>``) and then the
    whole text; our split keeps a reply without reasoning as it is, reads more spellings and counts an unclosed
    draft as unfinished (no answer) where lmms-eval passes the draft through. First differing real row: ``" B "``."""
    from audio_bench_core.reasoning import split_reasoning

    strip = upstream_module("lmms_eval/api/reasoning.py").strip_reasoning_tags
    tags = [["<think>", "</think>"], ["<analysis>", "</analysis>"]]  # lmms-eval's CLI default
    differing = [s for s in corpus() if strip(s, tags) != split_reasoning(s).answer]
    assert differing[0] == " B " and (strip(" B ", tags), split_reasoning(" B ").answer) == ("B", " B ")
    assert strip("<think>it is B", tags) == "<think>it is B" and split_reasoning("<think>it is B").answer == ""
    assert strip("<THINK>B</THINK>A", tags) == "<THINK>B</THINK>A" and split_reasoning("<THINK>B</THINK>A").answer == "A"
    assert strip("<think>B</think>A", tags) == split_reasoning("<think>B</think>A").answer == "A"


# ------------------------------------------------------------------ OpenCC stays, imported lazily with a clear message
def test_opencc_is_imported_only_inside_functions_and_its_absence_names_the_package(monkeypatch):
    import ast

    for path in ("mcga/normalize.py", "mcga/metrics.py", "mcga/judging.py"):
        tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
        top = [n for n in tree.body if isinstance(n, ast.Import)]
        assert not [n for n in top if "opencc" in [a.name for a in n.names]], path
        assert not [n for n in tree.body if isinstance(n, ast.ImportFrom) and n.module == "opencc"], path
    normalize.opencc_converter.cache_clear()
    monkeypatch.setitem(sys.modules, "opencc", None)
    try:
        with pytest.raises(ModuleNotFoundError, match=r"pip install opencc \(zhconv, lmms-eval's converter, uses other tables"):
            normalize.opencc_converter("t2s")
    finally:
        normalize.opencc_converter.cache_clear()
    dependencies = dict(ex.extra_dependencies([(ROOT / "mcga/normalize.py").read_text(encoding="utf-8")]))
    assert dependencies.get("opencc<2,>=1.4.2") == "missing"  # a lazy import that raises is still required for the CER
