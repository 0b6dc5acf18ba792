"""The persistent cache of judge replies (:class:`JudgeCache`, SQLite). Part of :mod:`audio_bench_core.judge`."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import closing
from pathlib import Path

from loguru import logger


class JudgeCacheError(RuntimeError):
    """The judge cache file cannot be created or opened (not a damaged file: those are replaced)."""


def _is_damaged(error: sqlite3.DatabaseError) -> bool:
    """True when SQLite says the file is not a database or is corrupt (not for locks or missing permissions)."""
    name = getattr(error, "sqlite_errorname", "")
    return name in ("SQLITE_NOTADB", "SQLITE_CORRUPT") or any(
        text in str(error) for text in ("file is not a database", "database disk image is malformed")
    )


class JudgeCache:
    """Replies on disk in one SQLite table ``replies(key PRIMARY KEY, request, content, model, created, usage)``:
    ``model`` is the judge model the server reported in the reply, ``usage`` its ``usage`` object as JSON (NULL when
    not reported, and in rows of caches made before the column was added, which is added on open).

    Safe with several processes and threads writing at once: every operation opens its own connection,
    the database runs in WAL mode, writers wait up to 60 s for the lock, and a second write of the same
    key is ignored (the first reply wins) unless it replaces a reply that no longer yields a valid score.
    Only replies that yield a valid score are stored (the caller checks).

    A damaged file (SQLite: "file is not a database", "database disk image is malformed"), found when it
    is opened or at any later read or write, is moved aside to ``<name>.damaged-<UTC time>`` (with its
    ``-wal``/``-shm`` files), logged with both paths, listed in :attr:`recovered`, and replaced by a fresh
    empty cache; the operation is then repeated once. Other SQLite errors (locked for over 60 s, no
    permission) are raised.
    """

    def __init__(self, path: Path) -> None:
        """Open (or create) the cache at ``path``.

        Raises:
            JudgeCacheError: the file or its folder cannot be created or opened (message names the path).
        """
        self.path = Path(path)
        self.recovered: list[dict] = []  # {"path", "moved_to", "error"} per damaged file moved aside
        self._recover_lock = threading.Lock()
        self._anchor: sqlite3.Connection | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._guarded(self._create)
        except (OSError, sqlite3.Error) as error:
            raise JudgeCacheError(f"judge cache {self.path} cannot be used: {error}") from error

    def _open_anchor(self) -> None:
        """Hold one idle connection while the cache is in use: when the last connection to a WAL database closes,
        SQLite checkpoints and deletes the WAL, which made every get/put (each on its own connection) cost about
        1.3 ms instead of about 0.1 ms."""
        self._close_anchor()
        self._anchor = sqlite3.connect(self.path, timeout=60, check_same_thread=False)
        self._anchor.execute("SELECT count(*) FROM replies WHERE 0").fetchall()  # opens the WAL index, and keeps it open

    def _close_anchor(self) -> None:
        if self._anchor is not None:
            self._anchor.close()
            self._anchor = None

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=60)

    def _create(self) -> None:
        with closing(self._connect()) as db, db:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, request TEXT, content TEXT, model TEXT, created REAL, usage TEXT)")
            if "usage" not in {row[1] for row in db.execute("PRAGMA table_info(replies)")}:  # a cache made before the usage column
                try:
                    db.execute("ALTER TABLE replies ADD COLUMN usage TEXT")
                except sqlite3.OperationalError as error:  # another process added it meanwhile
                    if "duplicate column" not in str(error):
                        raise
        self._open_anchor()

    def _guarded(self, operation: Callable[[], object]) -> object:
        try:
            return operation()
        except sqlite3.DatabaseError as error:
            if not _is_damaged(error):
                raise
            self._move_aside(error)
            return operation()

    def _still_damaged(self) -> bool:
        try:
            with closing(self._connect()) as db:
                return db.execute("PRAGMA quick_check").fetchone()[0] != "ok"
        except sqlite3.DatabaseError as error:
            return _is_damaged(error)

    def _move_aside(self, error: sqlite3.DatabaseError) -> None:
        with self._recover_lock:
            if self.path.exists() and not self._still_damaged():  # another thread or process replaced it already
                return
            stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
            moved = self.path.with_name(f"{self.path.name}.damaged-{stamp}")
            number = 1
            while moved.exists():  # a second damaged file within the same second
                moved, number = self.path.with_name(f"{self.path.name}.damaged-{stamp}-{number}"), number + 1
            self._close_anchor()
            for suffix in ("", "-wal", "-shm"):
                source = Path(f"{self.path}{suffix}")
                if source.exists():
                    source.replace(Path(f"{moved}{suffix}"))
            self.recovered.append({"path": str(self.path), "moved_to": str(moved), "error": str(error)})
            logger.warning(f"judge cache {self.path} is damaged ({error}); moved aside to {moved}; a fresh cache is used there (earlier replies will be asked again)")
            self._create()

    def get(self, key: str) -> tuple[str, str | None] | None:
        """``(content, model)`` cached under ``key``, or None."""
        return self.get_many([key]).get(key)

    def get_many(self, keys: Sequence[str], usage: bool = False) -> dict[str, tuple]:
        """``{key: (content, model)}`` for the ``keys`` that are cached (one connection, one query per 500 keys);
        ``{key: (content, model, usage dict or None)}`` with ``usage``."""
        distinct = list(dict.fromkeys(keys))
        columns = "key, content, model, usage" if usage else "key, content, model"

        def read():
            found = {}
            with closing(self._connect()) as db:
                for start in range(0, len(distinct), 500):
                    chunk = distinct[start : start + 500]
                    rows = db.execute(f"SELECT {columns} FROM replies WHERE key IN ({', '.join('?' * len(chunk))})", chunk)
                    found.update((row[0], row[1:] if not usage else (row[1], row[2], _usage(row[3]))) for row in rows)
            return found

        return self._guarded(read)

    def put(self, key: str, request: dict, content: str, model: str | None, replace: bool = False) -> None:
        """Store a reply that yields a valid score. A second write of ``key`` is ignored unless ``replace``
        (used when the stored reply no longer yields a valid score)."""
        self.put_many([(key, request, content, model, replace)])

    def put_many(self, rows: Sequence[tuple]) -> list[tuple[int, str]]:
        """Store ``(key, request, content, model, replace)`` rows, or ``(..., replace, usage)`` with the reply's
        ``usage`` dict (see :meth:`put`) in one transaction, in order: one commit for a whole batch instead of one per
        reply.

        When the batch fails, each row is stored alone, so one bad row costs only itself: a row whose text SQLite
        cannot hold (a lone UTF-16 surrogate from a ``\\ud800`` escape in the reply's JSON) is stored with those
        code points replaced by U+FFFD (the reply's score is checked again when it is read back), and a row that
        still cannot be stored is skipped.

        Returns:
            ``[(row index, reason), ...]`` of the rows not stored (empty when all were).
        Raises:
            sqlite3.Error: the first row stored alone fails with the same error as the batch (the file cannot be
                written at all: locked for over 60 s, disk full, no permission); nothing was stored.
        """
        if not rows:
            return []

        def write(batch):
            with closing(self._connect()) as db, db:
                for key, request, content, model, replace, *usage in batch:
                    db.execute(
                        f"{'INSERT OR REPLACE' if replace else 'INSERT OR IGNORE'} INTO replies (key, request, content, model, created, usage) VALUES (?, ?, ?, ?, ?, ?)",
                        (key, json.dumps(request, ensure_ascii=False, sort_keys=True), content, model, time.time(),
                         json.dumps(usage[0], sort_keys=True) if usage and usage[0] is not None else None),
                    )  # fmt: skip

        try:
            self._guarded(lambda: write(rows))
            return []
        except (sqlite3.Error, UnicodeError, ValueError) as error:
            if len(rows) == 1 and not isinstance(error, (UnicodeError, ValueError)):
                raise
            batch_error = error
        skipped: list[tuple[int, str]] = []
        for index, row in enumerate(rows):
            try:
                self._guarded(lambda: write([row]))
                continue
            except (UnicodeError, ValueError):
                pass
            except sqlite3.Error as error:
                if index == 0 and type(error) is type(batch_error) and str(error) == str(batch_error):
                    raise  # the file itself cannot be written: not a bad row
                skipped.append((index, f"{type(error).__name__}: {error}"))
                continue
            key, request, content, model, replace, *usage = row
            try:
                self._guarded(lambda: write([(key, _valid_text(request), _valid_text(content), _valid_text(model), replace, *_valid_text(usage))]))
            except (sqlite3.Error, UnicodeError, ValueError) as error:
                skipped.append((index, f"{type(error).__name__}: {error}"))
        return skipped


def _usage(text: str | None) -> dict | None:
    """A stored ``usage`` column read back (None for NULL or unreadable text)."""
    try:
        value = json.loads(text) if text else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _valid_text(value):
    """``value`` (a str, None, or a JSON-like structure of them) with every code point UTF-8 cannot encode (a lone
    surrogate) replaced by U+FFFD, and surrogate pairs joined into the character they stand for."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, dict):
        return {_valid_text(k): _valid_text(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_valid_text(v) for v in value]
    return value


class _NoCache:
    """Stands in for :class:`JudgeCache` when the cache cannot be opened: nothing is read, nothing is stored."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path, self.reason = Path(path), reason
        self.recovered: list[dict] = []

    def get(self, key: str) -> None:
        return None

    def get_many(self, keys: Sequence[str], usage: bool = False) -> dict:
        return {}

    def put(self, key: str, request: dict, content: str, model: str | None, replace: bool = False) -> None:
        self.put_many([(key, request, content, model, replace)])

    def put_many(self, rows: Sequence) -> list[tuple[int, str]]:
        return [(index, f"no cache ({self.reason})") for index in range(len(rows))]
