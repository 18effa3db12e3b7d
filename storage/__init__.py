"""Persistence behind one async ``Store`` protocol. Knows nothing about agents or UI."""

from storage.base import Store
from storage.errors import (
    CorruptRecord,
    SchemaTooNew,
    StorageError,
    StoreClosed,
    StoreCorrupt,
    StoreReadOnly,
    StoreUnavailable,
    UnstorableText,
    WardenError,
)
from storage.memory import InMemoryStore
from storage.records import AuditRow, ClaimResult, Decision, PendingCallRow, RunRow, SuspendedRunRow
from storage.sqlite import SqliteStore

__all__ = [
    "AuditRow",
    "ClaimResult",
    "CorruptRecord",
    "Decision",
    "InMemoryStore",
    "PendingCallRow",
    "RunRow",
    "SchemaTooNew",
    "SqliteStore",
    "StorageError",
    "Store",
    "StoreClosed",
    "StoreCorrupt",
    "StoreReadOnly",
    "StoreUnavailable",
    "SuspendedRunRow",
    "UnstorableText",
    "WardenError",
]
