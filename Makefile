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

# The suite runs in PYTEST_WORKERS processes (pytest-xdist), each taking whole test modules (a module's shared fixture,
# e.g. one CLI run read by several tests, runs once). make test PYTEST_WORKERS=0: one process.
PYTEST_WORKERS ?= 2
test: setup
	$(OFFLINE) $(BIN)/python -m pytest -q -n $(PYTEST_WORKERS) --dist loadscope

# Speed and memory figures of issue 13, each a ratio against a floor measured in the same run (bench/README.md).
# Not tests: CI does not run them. Default sizes take about 13 minutes in all on 2 quiet cores; issue sizes: bench/README.md.
# MCGA_OFFICIAL_DIR: folder with the official eval_model.py (not shipped; the comparison is skipped without it).
bench: setup
	PYTHONPATH=$(CURDIR) $(OFFLINE) $(BIN)/python -m bench.scoring_mcga
	PYTHONPATH=$(CURDIR) $(OFFLINE) $(BIN)/python -m bench.scoring_parsa
	PYTHONPATH=$(CURDIR) $(OFFLINE) $(BIN)/python -m bench.answer_reading
	PYTHONPATH=$(CURDIR) $(OFFLINE) $(BIN)/python -m bench.scoring_long_answers --max-mb 1
	PYTHONPATH=$(CURDIR) $(OFFLINE) $(BIN)/python -m bench.audio_handoff
	PYTHONPATH=$(CURDIR) $(OFFLINE) $(BIN)/python -m bench.judge_throughput
	PYTHONPATH=$(CURDIR) $(OFFLINE) $(BIN)/python -m bench.serving_throughput
	PYTHONPATH=$(CURDIR) $(OFFLINE) $(BIN)/python -m bench.startup
	PYTHONPATH=$(CURDIR) $(OFFLINE) $(BIN)/python -m bench.replay_full
	PYTHONPATH=$(CURDIR) $(OFFLINE) $(BIN)/python -m bench.embedded_model
	PYTHONPATH=$(CURDIR) $(OFFLINE) $(BIN)/python -m bench.compare_speed
	PYTHONPATH=$(CURDIR) $(OFFLINE) $(BIN)/python -m bench.samples_size

clean:
	rm -rf $(VENV) out

# The plugin's CLI tests marked lmms_eval_versions, against lmms-eval 0.7.2 (upstream main's version; `make test` runs
# 0.7.3). A second venv holding only lmms-eval 0.7.2 from PyPI, over .venv's packages (a .pth file adds .venv's
# site-packages after its own, so everything else is the tested set: 0.7.2 declares the same runtime requirements as
# 0.7.3, minus black and isort). Seconds, no second torch. CI (.ci/run) runs it after `make test`.
LMMS_EVAL_072 := .venv-lmms-eval-0.7.2
.PHONY: test-lmms-eval-0.7.2
test-lmms-eval-0.7.2: setup
	rm -rf $(LMMS_EVAL_072)
	$(BIN)/python -m venv $(LMMS_EVAL_072)
	$(BIN)/python -c "import sysconfig, pathlib, sys; base = sysconfig.get_paths()['purelib']; \
		target = pathlib.Path(sys.argv[1]).resolve() / pathlib.Path(base).relative_to(sys.prefix); \
		(target / 'zz_lmms_eval_audio_plugin_base.pth').write_text(f'import site; site.addsitedir({base!r})\n')" $(LMMS_EVAL_072)
	$(LMMS_EVAL_072)/bin/pip install --quiet --no-deps --ignore-installed lmms-eval==0.7.2
	$(OFFLINE) $(LMMS_EVAL_072)/bin/python -c "import importlib.metadata as m; v = m.version('lmms-eval'); print('lmms-eval', v); assert v == '0.7.2'"
	$(OFFLINE) $(LMMS_EVAL_072)/bin/python -m pytest -q -m lmms_eval_versions
