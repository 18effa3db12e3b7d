"""``warden runs list | head``: a reader that goes away ends the command quietly (no traceback)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

from storage import SqliteStore
from storage.records import PendingCallRow, RunRow


async def _suspend_many(db: Path, n: int) -> None:
    store = SqliteStore(db)
    for i in range(n):
        run_id = f"run-{i:05d}"
        run = RunRow(run_id, "ops", None, None, "suspended", "{}", suspended_at=1000.0 + i)
        call = PendingCallRow(run_id, "c1", "delete_record", "approval", {"record_id": f"abc-{i}"}, "sha256:x")
        await store.save_suspended(run, [call])
    await store.aclose()


def test_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    db = tmp_path / "w.db"
    asyncio.run(_suspend_many(db, 1000))  # ~100 KB of rows: more than a pipe buffer holds
    warden = Path(sys.executable).parent / "warden"
    proc = subprocess.Popen(
        [str(warden), "runs", "list", "--db", str(db), "--per-page", "1000"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=0,
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.read(20)  # like `head -c 20`, then the reader goes away
    proc.stdout.close()
    err = proc.stderr.read().decode()
    code = proc.wait(timeout=60)
    assert first.startswith(b"RUN")
    assert "Traceback" not in err and "BrokenPipe" not in err, err
    assert code in (0, 141)
