"""One function that opens the store a ``--db`` / ``WARDEN_DB`` value names: a path or a URL."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # ``is_postgres_url`` and ``describe`` stay cheap to import (the console's start)
    from storage.base import Store

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def is_postgres_url(value: str | os.PathLike[str]) -> bool:
    return isinstance(value, str) and value.lower().startswith(POSTGRES_SCHEMES)


def open_store(url_or_path: str | os.PathLike[str], **options: Any) -> Store:
    """The store ``url_or_path`` names, not yet opened (it connects on first use).

    - ``postgresql://user:password@host:port/db`` (or ``postgres://``): ``PostgresStore``;
    - ``sqlite:///abs/path.db`` or ``sqlite:relative.db``, or a plain path: ``SqliteStore``;
    - ``memory:``: ``InMemoryStore`` (this process only).

    ``options`` go to the store's constructor (e.g. ``synchronous="FULL"`` for SQLite).
    """
    if is_postgres_url(url_or_path):
        from storage.postgres import PostgresStore  # asyncpg is imported only when used

        return PostgresStore(str(url_or_path), **options)
    text = os.fspath(url_or_path)
    if text == "memory:":
        from storage.memory import InMemoryStore

        return InMemoryStore()
    if text.startswith("sqlite://"):
        text = text.removeprefix("sqlite://")
    elif text.startswith("sqlite:"):
        text = text.removeprefix("sqlite:")
    from storage.sqlite import SqliteStore

    return SqliteStore(Path(text).expanduser(), **options)


def describe(url_or_path: str | os.PathLike[str]) -> str:
    """A label for ``url_or_path`` without a password (for status bars and messages)."""
    if is_postgres_url(url_or_path):
        from storage.postgres import redact

        return redact(str(url_or_path))
    return os.fspath(url_or_path)
