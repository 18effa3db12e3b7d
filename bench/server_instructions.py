"""Instructions the ``warden serve`` process executes per approval, counted by valgrind (callgrind):
the server figure the machine's load does not move (``server_load.py``'s CPU time moves 1.5-2x).

The server (``python -m warden_server``, uvicorn, ``server_load_app``) runs under callgrind on
loopback; ``--runs`` runs are suspended through HTTP, then callgrind's counters are zeroed
(``callgrind_control -z``), ``--clients`` concurrent SDK clients make the approvals exactly as
``server_load.py`` does (1/50 of a listing page, ``GET`` the pending run, approve-tool-call with
its SSE answer read to ``[DONE]``), and the counters are dumped (``callgrind_control -d``):
instructions of the timed phase / approvals. Start-up and the suspensions are not counted.
Instructions are not time (a system call or a cache miss costs more than its count), but a change
that lowers them lowers the CPU the server needs.

``--compare DIR`` counts another checkout's server code too (A, B, A, ...).

    python bench/server_instructions.py --runs 200 --compare /work/main
"""

from __future__ import annotations

import argparse
import asyncio
import glob
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

sys.path.insert(0, str(REPO / "bench"))

from server_load import start_server  # noqa: E402

from warden_client import WardenClient  # noqa: E402

PAGE = 50


def _control(flag: str, pid: int) -> None:
    subprocess.run(
        ["callgrind_control", flag, str(pid)], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


async def approvals(url: str, token: str, runs: int, clients: int, pid: int) -> None:
    conn = WardenClient(url, token=token, timeout=600)
    try:
        agent = conn.agent("bench")
        sem = asyncio.Semaphore(clients)

        async def suspend(i: int) -> None:
            async with sem:
                s = await agent.stream(f"rec-{i}")
                await s.consume()
                assert s.status == "suspended", s.status

        await asyncio.gather(*(suspend(i) for i in range(runs)))
        await asyncio.to_thread(_control, "-z", pid)
        queue: asyncio.Queue[str] = asyncio.Queue()
        page = 0
        while True:
            listed = await agent.list_suspended_runs(page=page, per_page=PAGE)
            for run in listed.runs:
                queue.put_nowait(run.run_id)
            page += 1
            if page * PAGE >= listed.total:
                break
        assert queue.qsize() == runs

        async def worker() -> None:
            while True:
                try:
                    run_id = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                call = (await conn.get_suspended_run(run_id)).tool_calls[0]
                stream = await agent.approve_tool_call(
                    run_id=run_id, tool_call_id=call.tool_call_id, fingerprint=call.fingerprint
                )
                await stream.consume()
                assert stream.status == "finished", stream.status

        await asyncio.gather(*(worker() for _ in range(clients)))
        await asyncio.to_thread(_control, "-d", pid)
    finally:
        await conn.aclose()


def count(code: Path, runs: int, clients: int, memory: bool, keep: Path | None = None) -> float:
    with tempfile.TemporaryDirectory(prefix="warden-instr-") as tmp:
        out = Path(tmp) / "callgrind.out"
        token = secrets.token_urlsafe(24)
        proc, url = start_server(
            Path(tmp) / "bench.db",
            token,
            "memory" if memory else "NORMAL",
            code,
            prefix=("valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--dump-instr=no"),
            PYTHONHASHSEED="0",
        )
        try:
            asyncio.run(approvals(url, token, runs, clients, proc.pid))
        finally:
            proc.terminate()
            proc.wait()
        dumps = sorted(glob.glob(f"{out}.*"))  # callgrind_control -d writes <out>.1; <out> is the exit's
        totals = []
        for path in dumps:
            m = re.search(r"^(?:summary|totals): (\d+)", Path(path).read_text(errors="replace"), re.M)
            if m:
                totals.append(int(m.group(1)))
        if not totals:
            raise SystemExit(f"no callgrind dump of the timed phase in {dumps}")
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            shutil.copy(dumps[0], keep / f"callgrind.{code.name}.out")
        return totals[0] / runs


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=200)
    p.add_argument("--clients", type=int, default=16)
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--memory", action="store_true", help="InMemoryStore in the server (default SQLite NORMAL)")
    p.add_argument("--compare", type=Path, default=None, help="another checkout, counted in turns with this one")
    p.add_argument("--keep", type=Path, default=None, help="copy the timed phase's callgrind file into this directory")
    a = p.parse_args()
    if not (1 <= a.runs <= 5000 and 1 <= a.clients <= 256 and 1 <= a.repeat <= 10):
        raise SystemExit("--runs 1..5000, --clients 1..256, --repeat 1..10")
    codes = [("this", REPO)]
    if a.compare is not None:
        codes.insert(0, (a.compare.resolve().name, a.compare.resolve()))
    store = "InMemoryStore" if a.memory else "SQLite NORMAL"
    print(f"server_instructions: {a.runs} approvals, {a.clients} clients, {store}, instructions of the server process")
    for _ in range(a.repeat):
        for label, code in codes:
            per = count(code, a.runs, a.clients, a.memory, a.keep)
            print(f"  {label:<12} {per / 1e6:.3f} M instructions/approval", flush=True)


if __name__ == "__main__":
    main()
