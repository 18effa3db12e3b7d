"""Persistence behind one async ``Store`` protocol. Knows nothing about agents or UI."""

from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from storage.base import Store
    from storage.events import StoreEvent, subscribe
    from storage.memory import InMemoryStore
    from storage.postgres import PostgresStore
    from storage.records import AuditRow, ClaimResult, Decision, PendingCallRow, RunRow, SuspendedRunRow
    from storage.sqlite import SqliteStore
    from storage.urls import open_store

#: Loaded on first use (PEP 562): ``from storage.errors import X`` (every error of the console)
#: does not load the stores; PostgresStore imports asyncpg (~70 ms) only when asked for.
_EXPORTS: dict[str, str] = {
    "Store": "storage.base",
    "StoreEvent": "storage.events",
    "subscribe": "storage.events",
    "InMemoryStore": "storage.memory",
    "PostgresStore": "storage.postgres",
    "AuditRow": "storage.records",
    "ClaimResult": "storage.records",
    "Decision": "storage.records",
    "PendingCallRow": "storage.records",
    "RunRow": "storage.records",
    "SuspendedRunRow": "storage.records",
    "SqliteStore": "storage.sqlite",
    "open_store": "storage.urls",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:  # a submodule (``from storage import sqlite``) or a wrong name
        raise AttributeError(f"module 'storage' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


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
