"""Persistence behind one async ``Store`` protocol. Knows nothing about agents or UI.

The names below are imported on first use (PEP 562): ``import storage.sqlite`` does not
load every backend, so ``warden runs list`` reads a SQLite file without asyncio, aiosqlite
or asyncpg (~70 ms for asyncpg alone).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from storage.base import Store
    from storage.errors import (
        CorruptRecord,
        SchemaTooNew,
        StorageError,
        StoreAuthFailed,
        StoreClosed,
        StoreCorrupt,
        StoreReadOnly,
        StoreUnavailable,
        UnstorableText,
        WardenError,
    )
    from storage.events import subscribe
    from storage.memory import InMemoryStore
    from storage.postgres import PostgresStore
    from storage.records import AuditRow, ClaimResult, Decision, PendingCallRow, RunRow, SuspendedRunRow
    from storage.sqlite import SqliteStore
    from storage.urls import open_store
    from warden_types.events import StoreEvent

_WHERE: dict[str, str] = {
    "Store": "storage.base",
    **dict.fromkeys(
        (
            "CorruptRecord",
            "SchemaTooNew",
            "StorageError",
            "StoreAuthFailed",
            "StoreClosed",
            "StoreCorrupt",
            "StoreReadOnly",
            "StoreUnavailable",
            "UnstorableText",
            "WardenError",
        ),
        "storage.errors",
    ),
    "StoreEvent": "warden_types.events",
    "subscribe": "storage.events",
    "InMemoryStore": "storage.memory",
    "PostgresStore": "storage.postgres",
    **dict.fromkeys(
        ("AuditRow", "ClaimResult", "Decision", "PendingCallRow", "RunRow", "SuspendedRunRow"), "storage.records"
    ),
    "SqliteStore": "storage.sqlite",
    "open_store": "storage.urls",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'storage' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])


__all__ = [
    "AuditRow",
    "ClaimResult",
    "CorruptRecord",
    "Decision",
    "InMemoryStore",
    "PendingCallRow",
    "PostgresStore",
    "RunRow",
    "SchemaTooNew",
    "SqliteStore",
    "StorageError",
    "Store",
    "StoreAuthFailed",
    "StoreClosed",
    "StoreCorrupt",
    "StoreEvent",
    "StoreReadOnly",
    "StoreUnavailable",
    "SuspendedRunRow",
    "UnstorableText",
    "WardenError",
    "open_store",
    "subscribe",
]
