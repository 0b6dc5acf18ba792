"""Valid JSON from anything we write: a number that is not finite (NaN, ±inf) is written ``null`` with its reason.

Python's ``json.dumps`` writes ``NaN`` / ``Infinity`` by default, which is not JSON (RFC 8259): ``jq``, JavaScript and
most readers refuse the whole file. Every JSON text this project writes for a reader (reports printed with
``--json``, the plugin's additions to the results file) goes through :func:`json_text` (``allow_nan=False``, after
:func:`finite_or_null`).
"""

from __future__ import annotations

import json
import math


def _reason(value: float) -> str:
    return "undefined (the computation gave NaN)" if math.isnan(value) else f"not finite (the computation gave {value})"


def finite_or_null(value: object) -> object:
    """A copy of ``value`` (dicts, lists and tuples rebuilt) with every float that is not finite replaced by ``None``.

    In a dict, the key ``k`` of such a float also gets a sibling ``k_reason`` saying why (``"undefined (the computation
    gave NaN)"``), unless the dict already holds ``k_reason`` or ``k_note``. Other values are returned as they are.
    """
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            out[key] = finite_or_null(item)
            if isinstance(item, float) and not math.isfinite(item) and isinstance(key, str) and f"{key}_reason" not in value and f"{key}_note" not in value:
                out[f"{key}_reason"] = _reason(item)
        return out
    if isinstance(value, (list, tuple)):
        return [finite_or_null(item) for item in value]
    return value


def json_text(value: object, **kwargs) -> str:
    """``json.dumps`` of :func:`finite_or_null` of ``value`` with ``allow_nan=False`` (``ensure_ascii=False`` unless
    given); other keyword arguments are passed on. Raises ``ValueError`` only if a non-finite number hides where the
    walk cannot see it (a ``default=`` hook's output)."""
    kwargs.setdefault("ensure_ascii", False)
    return json.dumps(finite_or_null(value), allow_nan=False, **kwargs)
