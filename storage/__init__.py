"""Persistence behind one async ``Store`` protocol. Knows nothing about agents or UI."""

from typing import TYPE_CHECKING, Any

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
from storage.events import StoreEvent, subscribe
from storage.memory import InMemoryStore
from storage.records import AuditRow, ClaimResult, Decision, PendingCallRow, RunRow, SuspendedRunRow
from storage.sqlite import SqliteStore
from storage.urls import open_store

if TYPE_CHECKING:
    from storage.postgres import PostgresStore


def __getattr__(name: str) -> Any:
    # PostgresStore imports asyncpg (~70 ms): only when asked for.
    if name == "PostgresStore":
        from storage.postgres import PostgresStore

        return PostgresStore
    raise AttributeError(f"module 'storage' has no attribute {name!r}")


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
