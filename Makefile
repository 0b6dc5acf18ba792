# Two commands for a fresh machine: `make demo` (the main job on the shipped sample) and `make test`.
# (The demo names the six MCGA tasks and the three PARSA dimension groups instead of the groups `mcga` and
# `parsa`: in this folder lmms-eval would read `--tasks mcga` as the folder mcga/, see README.)
# Both create .venv with the CPU-only install first. Other Python: make PYTHON=python3.12 ...
# CPU torch from another index: make setup TORCH_PIP_ARGS="--index-url https://download.pytorch.org/whl/cpu"
PYTHON ?= python3
VENV ?= .venv
TORCH_PIP_ARGS ?=
BIN := $(VENV)/bin
OFFLINE := HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1

.PHONY: setup demo test clean
setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml requirements/cpu-constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet torch==2.13.0 $(TORCH_PIP_ARGS)
	$(BIN)/pip install --quiet -c requirements/cpu-constraints.txt -e ".[test]"
	$(BIN)/pip uninstall --quiet --yes torchvision
	touch $@

demo: setup
	$(OFFLINE) $(BIN)/lmms-eval --tasks mcga_asr,mcga_s2tt,mcga_sec,mcga_sqa,mcga_su,mcga_sr --model faster_whisper --model_args language=zh \
		--output_path out/demo/mcga --log_samples --verbosity DEBUG
	$(BIN)/mcga-report out/demo/mcga
	$(OFFLINE) $(BIN)/lmms-eval --tasks parsa_speech_understanding,parsa_paralinguistic,parsa_cultural --model faster_whisper --model_args language=fa \
		--output_path out/demo/parsa --log_samples --verbosity DEBUG
	$(BIN)/audio-bench-report out/demo/mcga out/demo/parsa --out out/demo/report

test: setup
	$(OFFLINE) $(BIN)/python -m pytest -q

clean:
	rm -rf $(VENV) out
