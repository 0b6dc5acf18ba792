"""MMAC's design as data: the 6 capability categories, their 15 dimensions, the one caption prompt.

Source: MMAC paper (arXiv 2607.27109), Sec. 2.2 and Table 1 (dimensions per category), Fig. 2 (dimension
names), Sec. 3.1 (the prompt). Names are snake_case versions of the paper's ("speed change" ->
``speed_change``); :func:`canonical_name` turns a release's spelling into them.
"""

from __future__ import annotations

import re

#: The prompt every model gets (paper Sec. 3.1); no dimension is ever asked for.
PROMPT = "Describe this audio in detail."

#: Category -> its target dimensions, in the paper's order (Table 1: 1, 1, 2, 6, 4, 1 dimensions).
CATEGORIES: dict[str, tuple[str, ...]] = {
    "content": ("content",),
    "background": ("background",),
    "persona": ("gender", "age"),
    "paralinguistic": ("emotion", "accent", "pitch", "speed", "timbre", "vocal"),
    "dynamic": ("background_change", "emotion_change", "pitch_change", "speed_change"),
    "implication": ("implication",),
}

#: Dimension -> its category (each dimension belongs to exactly one).
DIMENSION_CATEGORY: dict[str, str] = {dimension: category for category, dimensions in CATEGORIES.items() for dimension in dimensions}

#: All 15 dimensions in the paper's order.
DIMENSIONS: tuple[str, ...] = tuple(DIMENSION_CATEGORY)

#: Label types (paper Sec. 3.2: "mapped to either a binary or graded score"). A binary dimension is judged
#: 0 or 1; a graded one on the integers 0..scale. Either way the score is divided by the scale (-> [0, 1]).
LABEL_TYPES = ("binary", "graded")


def canonical_name(raw: object) -> str:
    """``" Speed-Change "`` -> ``"speed_change"``: lower case, runs of spaces/hyphens/underscores -> one ``_``."""
    return re.sub(r"[\s\-_]+", "_", str(raw).strip().lower()).strip("_")
