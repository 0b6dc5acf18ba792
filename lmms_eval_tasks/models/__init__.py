"""Helper models registered through the ``lmms_eval.models`` entry point (see :mod:`lmms_eval_tasks.plugin`)."""

import torch


class CPUOrAcceleratorDevice:
    """Mixin: ``device`` is the accelerator's when lmms-eval attached one (multi-process runs), else CPU.

    lmms-eval's evaluator needs ``lm.device`` for its cross-rank gathers.
    """

    @property
    def device(self):
        accelerator = getattr(self, "accelerator", None)
        return accelerator.device if accelerator is not None else torch.device("cpu")
