"""A few kills of ``bench/chaos_instances.py``: two ``warden serve`` processes on one PostgreSQL database,
one killed with SIGKILL and restarted while runs are started on one and approved through the other.
The bench's own figures must be clean: no deadlock, no 5xx, no untrue stream, every call run at most once,
no run lost or stuck (the full run is ``python bench/chaos_instances.py --kills 300``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.pg import ADMIN_DSN, _admin

ROOT = Path(__file__).resolve().parent.parent
ARGS = ["--kills", "4", "--workers", "2", "--seed", "43", "--json"]


async def test_two_instances_killed_and_restarted_keep_every_decision_exactly_once():
    await (await _admin()).close()  # a clear failure when PostgreSQL is not there
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "chaos_instances.py"), *ARGS, "--pg", ADMIN_DSN],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["kills"] == 4 and got["runs"] > 0 and got["approve_streams"] > 0, got
    clean = {k: got[k] for k in ("deadlocks", "deadlocks_logged", "5xx", "untrue_failed_streams", "doubles")}
    assert clean == dict.fromkeys(clean, 0), got
    assert (got["lost"], got["stuck"], got["failed_runs"]) == (0, 0, 0), got
