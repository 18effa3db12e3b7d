"""Root of Warden's error hierarchy.

It lives in the lowest layer so that storage, the runtime and the console all
raise errors that share one base (``agent_core`` re-exports it as
``WardenError``) without ``storage`` importing anything above it.
"""

from __future__ import annotations


class WardenError(Exception):
    """Base of every error Warden raises; ``code`` is a stable string for programs."""

    code: str = "WARDEN_ERROR"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""


class StorageError(WardenError):
    """The store could not do what was asked (closed, unreadable, newer schema)."""

    code = "STORAGE_ERROR"


class LeaseNotHeld(StorageError):
    """A write by a process that no longer holds the run's lease (it stalled past it and another took
    the run over): nothing was written. Its code stays ``STORAGE_ERROR``."""

    @classmethod
    def on(cls, store: str, run_id: str) -> LeaseNotHeld:
        return cls(f"{store}: lost the lease on run {run_id!r}; not saved")


class StoreClosed(StorageError):
    code = "STORAGE_CLOSED"


class SchemaTooNew(StorageError):
    """The database was written by a newer Warden: refuse rather than corrupt it."""

    code = "STORAGE_SCHEMA_TOO_NEW"


class StoreUnavailable(StorageError):
    """The database cannot be opened: a directory, a parent that is a file, no permission, or unreachable."""

    code = "STORAGE_UNAVAILABLE"


class StoreCorrupt(StorageError):
    """The file is not a Warden database, or it is damaged (truncated, overwritten)."""

    code = "STORAGE_CORRUPT"


class StoreReadOnly(StorageError):
    """A change was asked of a database this process may only read."""

    code = "STORAGE_READ_ONLY"


class CorruptRecord(StorageError):
    """One stored row cannot be decoded; the rest of the store is usable."""

    code = "STORAGE_RECORD_CORRUPT"


class UnstorableText(StorageError):
    """Text that cannot be stored as UTF-8 (a lone surrogate such as ``"\\ud800"``): bad input, nothing changed."""

    code = "STORAGE_TEXT_INVALID"


class StoreAuthFailed(StoreUnavailable):
    """The database server refused the credentials (a wrong password, an unknown user)."""

    code = "STORAGE_AUTH_FAILED"
