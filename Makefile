# Two commands for a fresh machine: `make demo` (the main job on the shipped sample) and `make test`.
# Both create .venv first. torch: scripts/install_torch.py tries the PyTorch CPU index (TORCH_INDEX), falls
# back to pip's configured index if that fails, and prints which build it got (CPU-only or CUDA).
# Other Python: make PYTHON=python3.12 ...   Only pip's own index: make setup TORCH_INDEX=
# `make demo` can be run again: mcga-report reads the newest run of each task in out/demo/mcga.
PYTHON ?= python3
VENV ?= .venv
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
BIN := $(VENV)/bin
OFFLINE := HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1

.PHONY: setup demo test bench clean
setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml requirements/cpu-constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python scripts/install_torch.py --version 2.13.0 --index-url "$(TORCH_INDEX)"
	$(BIN)/pip install --quiet -c requirements/cpu-constraints.txt -e ".[test]"
	$(BIN)/pip uninstall --quiet --yes torchvision
	touch $@

demo: setup
	$(OFFLINE) $(BIN)/lmms-eval --tasks mcga --model faster_whisper --output_path out/demo/mcga --log_samples
	$(BIN)/mcga-report out/demo/mcga
	$(OFFLINE) $(BIN)/lmms-eval --tasks parsa --model faster_whisper --output_path out/demo/parsa --log_samples
	$(OFFLINE) $(BIN)/lmms-eval --tasks mmac --model faster_whisper --output_path out/demo/mmac --log_samples
	$(BIN)/audio-bench-report out/demo --out out/demo/report

test: setup
	$(OFFLINE) $(BIN)/python -m pytest -q

# Speed and memory figures of issue 13, each a ratio against a floor measured in the same run (bench/README.md).
# Not tests: CI does not run them. Default sizes take about 13 minutes in all on 2 quiet cores; issue sizes: bench/README.md.
# MCGA_OFFICIAL_DIR: folder with the official eval_model.py (not shipped; the comparison is skipped without it).
bench: setup
	PYTHONPATH=$(CURDIR) $(OFFLINE) $(BIN)/python -m bench.scoring_mcga
	PYTHONPATH=$(CURDIR) $(OFFLINE) $(BIN)/python -m bench.scoring_parsa
	PYTHONPATH=$(CURDIR) $(OFFLINE) $(BIN)/python -m bench.answer_reading
	PYTHONPATH=$(CURDIR) $(OFFLINE) $(BIN)/python -m bench.audio_handoff
	PYTHONPATH=$(CURDIR) $(OFFLINE) $(BIN)/python -m bench.judge_throughput
	PYTHONPATH=$(CURDIR) $(OFFLINE) $(BIN)/python -m bench.serving_throughput
	PYTHONPATH=$(CURDIR) $(OFFLINE) $(BIN)/python -m bench.startup
	PYTHONPATH=$(CURDIR) $(OFFLINE) $(BIN)/python -m bench.replay_full
	PYTHONPATH=$(CURDIR) $(OFFLINE) $(BIN)/python -m bench.embedded_model

clean:
	rm -rf $(VENV) out
