"""Persistence behind one async ``Store`` protocol. Knows nothing about agents or UI."""

from storage.base import Store
from storage.errors import SchemaTooNew, StorageError, StoreClosed, WardenError
from storage.memory import InMemoryStore
from storage.records import AuditRow, ClaimResult, Decision, PendingCallRow, RunRow, SuspendedRunRow
from storage.sqlite import SqliteStore

__all__ = [
    "AuditRow",
    "ClaimResult",
    "Decision",
    "InMemoryStore",
    "PendingCallRow",
    "RunRow",
    "SchemaTooNew",
    "SqliteStore",
    "StorageError",
    "Store",
    "StoreClosed",
    "SuspendedRunRow",
    "WardenError",
]
