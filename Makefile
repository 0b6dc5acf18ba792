# Two commands for a fresh machine: `make demo` (the main job on the shipped sample) and `make test`.
# (The demo names the four tasks instead of the group `mcga`: in this folder lmms-eval would read
# `--tasks mcga` as the folder mcga/, see README.)
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
	$(OFFLINE) $(BIN)/lmms-eval --tasks mcga_asr,mcga_sqa,mcga_su,mcga_sr --model faster_whisper --model_args language=zh \
		--output_path out/demo --log_samples --verbosity DEBUG
	$(BIN)/mcga-report out/demo

test: setup
	$(OFFLINE) $(BIN)/python -m pytest -q

clean:
	rm -rf $(VENV) out
