"""The demo's sample records: a small SQLite file beside the store, which its dangerous
tools really change (so an approval visibly matters). Shared by Warden's demo agents and
the other frameworks' (``warden_demo.frameworks``)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from storage.urls import is_postgres_url

SAMPLE_RECORDS = [
    ("abc-123", "Customer Ada Lovelace, order history"),
    ("abc-124", "Customer Alan Turing, invoices"),
    ("abc-125", "Customer Grace Hopper, support tickets"),
    ("def-200", "Draft report Q3"),
    ("def-201", "Archived newsletter"),
]


def records_path(db_path: str | Path) -> Path:
    if is_postgres_url(db_path):  # the demo's sample records stay a local SQLite file
        from platformdirs import user_data_dir

        return Path(user_data_dir("warden", appauthor=False)) / "demo.records.sqlite"
    db = Path(db_path)
    return db.with_name(db.name + ".records.sqlite")


def seed_records(path: Path) -> None:
    """Create the sample table on first use (a deleted record stays deleted)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as db:
        created = db.execute("SELECT name FROM sqlite_master WHERE name = 'records'").fetchone() is None
        if created:
            db.execute("CREATE TABLE records (id TEXT PRIMARY KEY, title TEXT NOT NULL)")
            db.executemany("INSERT INTO records VALUES (?, ?)", SAMPLE_RECORDS)
    # sqlite3's context manager commits but does not close
    sqlite3.connect(path).close()


def list_records(path: Path) -> list[str]:
    db = sqlite3.connect(path)
    try:
        return [row[0] for row in db.execute("SELECT id FROM records ORDER BY id")]
    finally:
        db.close()


# -- schemas --------------------------------------------------------------------------------------
def delete_row(path: Path, record_id: str) -> dict[str, Any]:
    """Really delete a sample record (the demo's dangerous action)."""
    db = sqlite3.connect(path)
    try:
        with db:
            deleted = db.execute("DELETE FROM records WHERE id = ?", (record_id,)).rowcount
    finally:
        db.close()
    return {"deleted": bool(deleted), "record_id": record_id}
