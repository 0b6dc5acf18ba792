"""Finding the data folder a user meant, for the "did you mean" hints of the benchmarks' data checks."""

from __future__ import annotations

import os
from pathlib import Path


def nearest_data_folder(path: str | Path, count, levels_up: int = 2, max_depth: int = 4, max_folders: int = 2000) -> Path | None:
    """The likely right data folder near ``path``, or ``None``: among the folders within ``max_depth`` levels
    below the ancestor ``levels_up`` above ``path`` (or above its nearest existing ancestor when ``path`` does not
    exist; never the file system root; at most ``max_folders`` visited, breadth first), the nearest to ``path``
    (fewest steps up and down) for which ``count(folder)`` (e.g. the task files it holds) is not 0, the one with the
    larger count on a tie. So the parent of
    the data folder, a folder inside it, a sibling folder or a misspelt path all point at the data folder.
    Shared by the three benchmarks' data checks (``mcga.data``, ``parsa.data``, ``mmac.data``) so they hint alike."""
    path = Path(path).expanduser().absolute()
    existing = path
    while not existing.is_dir() and existing != existing.parent:
        existing = existing.parent
    top = existing
    for _ in range(levels_up):
        if top.parent == top or top.parent == Path(top.anchor):
            break
        top = top.parent
    if top == Path(top.anchor):
        return None  # never walk the whole file system
    found, queue, visited = [], [(top, 0)], 0
    while queue and visited < max_folders:
        folder, depth = queue.pop(0)
        visited += 1
        number = count(folder) if folder != path else 0
        if number:
            found.append((number, folder))
        if depth >= max_depth:
            continue
        try:
            children = sorted(c for c in folder.iterdir() if c.is_dir() and not c.is_symlink() and not c.name.startswith("."))
        except OSError:
            continue
        queue += [(child, depth + 1) for child in children]
    if not found:
        return None

    def distance(folder: Path) -> int:
        common = Path(os.path.commonpath([folder, path]))
        return len(folder.relative_to(common).parts) + len(path.relative_to(common).parts)

    return max(found, key=lambda item: (-distance(item[1]), item[0]))[1]
