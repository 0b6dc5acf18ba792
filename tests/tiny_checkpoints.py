"""Tiny random-weight checkpoints of the real model classes, built offline in seconds for CLI tests.

Each builder writes a folder in the layout of the hub repository it imitates (config.json + safetensors,
tokenizer files, preprocessor_config.json, chat_template.json; Qwen2.5-Omni also spk_dict.pt), so the
models' own ``from_pretrained`` code paths load it. How they are made:

- tokenizer: a byte-level BPE trained here (``tokenizers``) on the shipped sample texts and the task
  prompts, then the model's special tokens appended (``<|im_start|>``, ``<|AUDIO|>`` ...), wrapped in
  transformers' ``Qwen2TokenizerFast`` with the special-token attributes the processors read;
- feature extractor: ``WhisperFeatureExtractor`` with the real models' settings (128 mel bins, 16 kHz,
  hop 160; window 300 s for Qwen2.5-Omni, 30 s for Qwen2-Audio, as in their preprocessor_config.json);
- chat template: the behaviour of the real models' templates (a default "You are a helpful assistant."
  system turn when the conversation has none; ``<|audio_bos|><|AUDIO|><|audio_eos|>`` per audio part;
  Qwen2-Audio numbers its audios "Audio N: "), written here;
- weights: the real model classes with configs scaled down (hidden size 64, 2 layers), seed 0;
- generation_config.json: ``exponential_decay_length_penalty`` (a standard transformers generation setting,
  absent from the real checkpoints) makes end-of-turn likely after a few tokens, so a random model answers
  in a handful of tokens whatever ``max_new_tokens`` the task asks for (the tests check that setting is
  passed through) instead of generating thousands of tokens on CPU.

Answers of such a model are random token strings: tests assert that text comes back and what the model
received, not what it says.
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

QWEN_SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|AUDIO|>", "<|audio_bos|>", "<|audio_eos|>"]
OMNI_EXTRA_SPECIAL = ["<|vision_bos|>", "<|vision_eos|>", "<|vision_pad|>", "<|IMAGE|>", "<|VIDEO|>"]

_DEFAULT_SYSTEM = (
    "{% if loop.first and message['role'] != 'system' %}<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n{% endif %}"
)
OMNI_CHAT_TEMPLATE = (
    "{% for message in messages %}" + _DEFAULT_SYSTEM + "<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'audio' or 'audio' in part %}<|audio_bos|><|AUDIO|><|audio_eos|>"
    "{% elif part['type'] == 'image' or 'image' in part %}<|vision_bos|><|IMAGE|><|vision_eos|>"
    "{% elif part['type'] == 'video' or 'video' in part %}<|vision_bos|><|VIDEO|><|vision_eos|>"
    "{% elif 'text' in part %}{{ part['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
QWEN2_AUDIO_CHAT_TEMPLATE = (
    "{% set audio_count = namespace(value=0) %}{% for message in messages %}" + _DEFAULT_SYSTEM + "<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}<|im_end|>\n{% else %}{% for part in message['content'] %}"
    "{% if 'audio' in part or 'audio_url' in part %}{% set audio_count.value = audio_count.value + 1 %}"
    "Audio {{ audio_count.value }}: <|audio_bos|><|AUDIO|><|audio_eos|>\n{% elif 'text' in part %}{{ part['text'] }}{% endif %}"
    "{% endfor %}<|im_end|>\n{% endif %}{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)



def _save_omni_processor_files(out: Path, processor_class: str, chat_template: str) -> None:
    """One preprocessor_config.json with both processors' fields (as in the hub repositories) and the chat template."""
    from transformers import Qwen2VLImageProcessorPil, WhisperFeatureExtractor

    preprocessor = {
        **WhisperFeatureExtractor(feature_size=128, chunk_length=300, sampling_rate=16000, hop_length=160, n_fft=400).to_dict(),
        **{k: v for k, v in Qwen2VLImageProcessorPil().to_dict().items() if k != "processor_class"},
        "feature_extractor_type": "WhisperFeatureExtractor", "image_processor_type": "Qwen2VLImageProcessor", "processor_class": processor_class,
    }  # fmt: skip
    (out / "preprocessor_config.json").write_text(json.dumps(preprocessor, indent=2), encoding="utf-8")
    (out / "chat_template.json").write_text(json.dumps({"chat_template": chat_template}), encoding="utf-8")

def _training_texts() -> list[str]:
    """The shipped sample rows (MCGA jsonl, PARSA csv) and the MCGA prompt file: the scripts the models will see."""
    files = sorted((ROOT / "mcga").rglob("*.jsonl")) + sorted((ROOT / "parsa" / "sample_data").rglob("*.csv"))
    lines = ["system user assistant You are a helpful assistant."]
    for file in files:
        lines.extend(file.read_text(encoding="utf-8").splitlines())
    return lines


def build_tokenizer(special_tokens: list[str], vocab_size: int = 1000, named: dict | None = None):
    """``Qwen2TokenizerFast`` over a byte-level BPE trained on :func:`_training_texts` plus ``special_tokens``;
    ``named``: the processor's token attributes (default Qwen2-Audio / Qwen2.5-Omni names)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import Qwen2TokenizerFast

    raw = Tokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    raw.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    raw.train_from_iterator(_training_texts(), trainer)
    raw.add_special_tokens(special_tokens)
    if named is None:
        named = {"audio_token": "<|AUDIO|>", "audio_bos_token": "<|audio_bos|>", "audio_eos_token": "<|audio_eos|>"}
    if "<|IMAGE|>" in special_tokens:
        named.update(image_token="<|IMAGE|>", video_token="<|VIDEO|>", vision_bos_token="<|vision_bos|>", vision_eos_token="<|vision_eos|>")
    return Qwen2TokenizerFast(
        tokenizer_object=raw, eos_token="<|im_end|>", pad_token="<|endoftext|>", unk_token=None, bos_token=None,
        model_max_length=32768, padding_side="left", clean_up_tokenization_spaces=False, **named,
    )  # fmt: skip


def _stop_soon(generation_config, eos_token_id: int) -> None:
    """End-of-turn after about 3-6 new tokens (see the module docstring)."""
    generation_config.exponential_decay_length_penalty = (3, 8.0)
    if generation_config.eos_token_id is None:
        generation_config.eos_token_id = eos_token_id


def build_tiny_qwen2_5_omni(out: str | Path) -> Path:
    """A Qwen2.5-Omni checkpoint (thinker + talker + token2wav, as on the hub) with ~1 M random weights at ``out``."""
    import torch
    from transformers import Qwen2_5OmniConfig, Qwen2_5OmniForConditionalGeneration

    out = Path(out)
    tokenizer = build_tokenizer(QWEN_SPECIAL + OMNI_EXTRA_SPECIAL)
    ids = {token: tokenizer.convert_tokens_to_ids(token) for token in QWEN_SPECIAL + OMNI_EXTRA_SPECIAL}
    hidden = 64
    media_ids = dict(
        audio_token_index=ids["<|AUDIO|>"], image_token_index=ids["<|IMAGE|>"], video_token_index=ids["<|VIDEO|>"],
        audio_start_token_id=ids["<|audio_bos|>"], audio_end_token_id=ids["<|audio_eos|>"],
        vision_start_token_id=ids["<|vision_bos|>"], vision_end_token_id=ids["<|vision_eos|>"],
    )  # fmt: skip
    config = Qwen2_5OmniConfig(
        enable_audio_output=True,
        thinker_config=dict(
            audio_config=dict(num_mel_bins=128, encoder_layers=1, encoder_attention_heads=2, encoder_ffn_dim=64, d_model=32, output_dim=hidden, n_window=100),
            vision_config=dict(depth=1, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=hidden, fullatt_block_indexes=[0]),
            text_config=dict(
                vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                rope_parameters={"rope_type": "default", "rope_theta": 1e6, "mrope_section": [2, 3, 3]},
                eos_token_id=ids["<|im_end|>"], pad_token_id=ids["<|endoftext|>"],
            ),
            vision_token_id=ids["<|vision_pad|>"], user_token_id=tokenizer.convert_tokens_to_ids("user") or ids["<|im_start|>"],
            bos_token_id=ids["<|im_start|>"], eos_token_id=ids["<|im_end|>"], pad_token_id=ids["<|endoftext|>"], **media_ids,
        ),
        talker_config=dict(vocab_size=64, hidden_size=hidden, embedding_size=hidden, intermediate_size=128, num_hidden_layers=1, num_attention_heads=4,
                           num_key_value_heads=2, head_dim=16, **media_ids),
        token2wav_config=dict(
            dit_config=dict(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, ff_mult=1, emb_dim=16, head_dim=16, repeats=2, num_embeds=64,
                            mel_dim=16, enc_emb_dim=16, enc_dim=16, enc_channels=[16, 16, 32], enc_kernel_sizes=[5, 3, 1], enc_dilations=[1, 2, 1],
                            enc_attention_channels=8, enc_res2net_scale=2, enc_se_channels=8, look_ahead_layers=[0], look_backward_layers=[0]),
            bigvgan_config=dict(mel_dim=16, upsample_initial_channel=32, resblock_kernel_sizes=[3], resblock_dilation_sizes=[[1, 3, 5]], upsample_rates=[2],
                                upsample_kernel_sizes=[4]),
        ),
    )  # fmt: skip
    torch.manual_seed(0)
    model = Qwen2_5OmniForConditionalGeneration(config).eval()
    _stop_soon(model.generation_config, ids["<|im_end|>"])
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    _save_omni_processor_files(out, "Qwen2_5OmniProcessor", OMNI_CHAT_TEMPLATE)
    torch.save({"Chelsie": {"bos_token": ids["<|im_start|>"]}, "Ethan": {"bos_token": ids["<|im_start|>"]}}, out / "spk_dict.pt")
    return out


QWEN3_OMNI_TOKENS = {
    "audio_token": "<|audio_pad|>", "audio_bos_token": "<|audio_start|>", "audio_eos_token": "<|audio_end|>", "image_token": "<|image_pad|>",
    "video_token": "<|video_pad|>", "vision_bos_token": "<|vision_start|>", "vision_eos_token": "<|vision_end|>",
}  # fmt: skip
QWEN3_OMNI_CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}{% if part['type'] == 'audio' %}<|audio_start|><|audio_pad|><|audio_end|>"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def build_tiny_qwen3_omni_thinker(out: str | Path) -> Path:
    """A thinker-only Qwen3-Omni (MoE) checkpoint with random weights at ``out`` (4 experts, 2 layers; 300 s window).

    Thinker-only (a fine-tuned thinker's layout), since the talker and code2wav are never loaded by the plugin.
    The chat template renders audio as ``<|audio_start|><|audio_pad|><|audio_end|>`` and adds no system turn.
    """
    import torch
    from transformers import Qwen3OmniMoeThinkerConfig, Qwen3OmniMoeThinkerForConditionalGeneration

    out = Path(out)
    special = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", *QWEN3_OMNI_TOKENS.values()]
    tokenizer = build_tokenizer(special, named=QWEN3_OMNI_TOKENS)
    ids = {token: tokenizer.convert_tokens_to_ids(token) for token in special}
    config = Qwen3OmniMoeThinkerConfig(
        audio_config=dict(num_mel_bins=128, encoder_layers=1, encoder_attention_heads=2, encoder_ffn_dim=64, d_model=32, output_dim=64, downsample_hidden_size=16),
        vision_config=dict(depth=1, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=64, deepstack_visual_indexes=[0]),
        text_config=dict(
            vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
            moe_intermediate_size=32, num_experts=4, num_experts_per_tok=2,
            rope_parameters={"rope_type": "default", "rope_theta": 1e6, "mrope_section": [2, 3, 3], "interleaved": True},
            eos_token_id=ids["<|im_end|>"], pad_token_id=ids["<|endoftext|>"],
        ),
        audio_token_id=ids["<|audio_pad|>"], image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        audio_start_token_id=ids["<|audio_start|>"], vision_start_token_id=ids["<|vision_start|>"],
        user_token_id=tokenizer.convert_tokens_to_ids("user") or ids["<|im_start|>"],
    )  # fmt: skip
    torch.manual_seed(0)
    model = Qwen3OmniMoeThinkerForConditionalGeneration(config).eval()
    _stop_soon(model.generation_config, ids["<|im_end|>"])
    model.generation_config.eos_token_id = ids["<|im_end|>"]
    model.generation_config.pad_token_id = ids["<|endoftext|>"]
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    _save_omni_processor_files(out, "Qwen3OmniMoeProcessor", QWEN3_OMNI_CHAT_TEMPLATE)
    return out


def build_tiny_qwen2_audio(out: str | Path) -> Path:
    """A Qwen2-Audio-Instruct checkpoint with random weights at ``out`` (Whisper features, 30 s window)."""
    import torch
    from transformers import Qwen2AudioConfig, Qwen2AudioForConditionalGeneration, Qwen2AudioProcessor, WhisperFeatureExtractor

    out = Path(out)
    tokenizer = build_tokenizer(QWEN_SPECIAL)
    ids = {token: tokenizer.convert_tokens_to_ids(token) for token in QWEN_SPECIAL}
    processor = Qwen2AudioProcessor(feature_extractor=WhisperFeatureExtractor(feature_size=128), tokenizer=tokenizer, chat_template=QWEN2_AUDIO_CHAT_TEMPLATE)
    config = Qwen2AudioConfig(
        audio_config=dict(num_mel_bins=128, encoder_layers=1, encoder_attention_heads=2, encoder_ffn_dim=64, d_model=32),
        text_config=dict(model_type="qwen2", vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, eos_token_id=ids["<|im_end|>"], pad_token_id=ids["<|endoftext|>"]),
        audio_token_index=ids["<|AUDIO|>"],
    )  # fmt: skip
    torch.manual_seed(0)
    model = Qwen2AudioForConditionalGeneration(config).eval()
    model.generation_config.eos_token_id = [ids["<|im_end|>"], ids["<|endoftext|>"]]
    model.generation_config.pad_token_id = ids["<|endoftext|>"]
    _stop_soon(model.generation_config, ids["<|im_end|>"])
    model.save_pretrained(out)
    processor.save_pretrained(out)
    return out


if __name__ == "__main__":
    import sys
    import time

    for name, build in (("omni", build_tiny_qwen2_5_omni), ("qwen2_audio", build_tiny_qwen2_audio), ("qwen3_omni", build_tiny_qwen3_omni_thinker)):
        start = time.time()
        path = build(Path(sys.argv[1]) / name)
        print(name, path, f"{time.time() - start:.1f} s", sorted(p.name for p in path.iterdir()))
