"""Which data a task loaded, made part of what lmms-eval's response cache (``--use_cache``) keys on.

lmms-eval 0.7's response cache (``lmms_eval/caching/response_cache.py``) keys a model response by request type, task
name, document **index**, the generation settings that change the output, a hash of the leading text arguments (the
prompt text) and a fingerprint of the task config: ``json.dumps(task.dump_config(), default=str)`` with function
addresses removed, where every callable of the config (``process_docs`` among them) appears as its ``str()``. What
``process_docs`` returns can change under the same config (another revision of the hub dataset, another local data
folder) and is in none of these: two releases with as many documents and the same prompt texts (MCGA ASR's prompt is
fixed) got the same keys, so a cache built on one served its answers to the other's clips.

:class:`DocsLoader` is the ``process_docs`` of every MCGA, PARSA and MMAC task: it loads the documents with the
benchmark's loader and records :func:`data_digest` of what it loaded; its ``str()`` names the task and that digest,
so the task config fingerprint, and with it every cache key of the task, changes when the rows or the audio change
(and only then: a digest of content, not of the folder's name). The digest also shows in the results file's
``configs`` section (``process_docs: mcga_asr_docs(data=sha256:…)``).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable

#: ``{task process_docs name: digest}`` of the documents each loader returned in this process.
_LOADED: dict[str, str] = {}
#: Document fields holding an audio file path whose file is part of the identity.
AUDIO_PATH_FIELDS = ("audio_path",)


def data_digest(rows: Iterable[dict]) -> str:
    """``sha256:<16 hex>`` of documents as loaded: every row as canonical JSON (sorted keys; values JSON cannot hold
    as their ``str``), and for every audio file a row names (:data:`AUDIO_PATH_FIELDS`) its size and modification
    time in ns (the identity the audio checks already memoise on, ``audio_bench_core.audio``), or ``missing``.

    Two loads give the same digest exactly when they give the same rows, in the same order, naming audio files of
    the same size and time; rewriting a clip, changing a transcript or a label, or pointing the data variable at
    another folder whose rows differ changes it. Linear in the rows; no audio is read.
    """
    digest = hashlib.sha256()
    for row in rows:
        digest.update(json.dumps(row, sort_keys=True, ensure_ascii=False, default=str).encode("utf-8", "surrogatepass"))
        for field in AUDIO_PATH_FIELDS:
            path = row.get(field)
            if isinstance(path, str) and path:
                try:
                    stat = os.stat(path)
                    digest.update(f"\x00{stat.st_size}:{stat.st_mtime_ns}".encode())
                except OSError:
                    digest.update(b"\x00missing")
        digest.update(b"\x01")
    return "sha256:" + digest.hexdigest()[:16]


class DocsLoader:
    """A task's ``process_docs`` hook that names the data it loaded in its ``str()`` (module docstring).

    Args:
        name: the hook's name as the YAML refers to it (``mcga_asr_docs``).
        load: ``load(dataset) -> datasets.Dataset``, the benchmark's loader (it replaces the rows lmms-eval read).
    """

    def __init__(self, name: str, load: Callable):
        self.name = name
        self._load = load
        self.__name__ = self.__qualname__ = name

    def __call__(self, dataset):
        docs = self._load(dataset)
        _LOADED[self.name] = data_digest(docs)
        return docs

    @property
    def identity(self) -> str:
        """The digest of what this loader last returned in this process (``"not loaded"`` before that)."""
        return _LOADED.get(self.name, "not loaded")

    def __repr__(self) -> str:
        return f"{self.name}(data={self.identity})"

    __str__ = __repr__

    def __deepcopy__(self, memo: dict) -> DocsLoader:
        # dataclasses.asdict (TaskConfig.to_dict) deep-copies values; the copy must name the same loaded data
        return self
