"""Console benchmarks: log-pane throughput with key responsiveness, first interactive frame,
``warden runs list`` wall time, and the pending picker with 10,000 pending runs.

    /work/venv/bin/python bench/console_stream.py [--chunks 100000] [--pending 10000]

Targets (issue 3): >= 5,000 text-delta chunks/s absorbed while keys stay
responsive, first interactive frame < 1 s, ``warden runs list`` < 0.3 s.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent_core.chunks import Chunk, make_chunk  # noqa: E402
from tui.backend import AgentInfo, PendingPage  # noqa: E402


class SyntheticStream:
    """A stream of ``n`` text-delta chunks produced as fast as Python can (no model, no storage)."""

    def __init__(self, n: int) -> None:
        self.run_id = "bench-run"
        self.n = n
        self.status = "finished"

    @property
    def full_stream(self) -> AsyncIterator[Chunk]:
        return self._iter()

    async def _iter(self) -> AsyncIterator[Chunk]:
        words = ["lorem ", "ipsum ", "dolor ", "sit ", "amet, ", "consectetur ", "adipiscing ", "elit.\n"]
        yield make_chunk("start", self.run_id, agent_id="bench")
        for i in range(self.n):
            yield make_chunk("text-delta", self.run_id, text=words[i % len(words)])
        yield make_chunk("finish", self.run_id, finish_reason="stop")


class BenchBackend:
    store_label = "(bench)"

    def __init__(self, n: int) -> None:
        self.n = n

    def list_agents(self):
        return [AgentInfo("bench", "Bench", "synthetic", True)]

    async def start_run(self, agent_id, prompt, **kw):
        return SyntheticStream(self.n)

    async def list_pending(self, **kw):
        return PendingPage([], 0, 0, 1)

    async def aclose(self):
        pass


async def bench_log_throughput(n: int) -> dict[str, float]:
    from tui.app import WardenApp

    app = WardenApp(BenchBackend(n), picker_refresh=0, status_refresh=0, cursor_blink=False)
    latencies: list[float] = []
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.run_screen
        await pilot.pause()
        start = time.perf_counter()
        app.start_run("bench", "go")
        # Keep typing while the stream runs, as a terminal would: send a key through the driver and
        # time until the prompt shows it. (Pilot.press waits for the process to be idle, which a
        # CPU-bound stream never is, so it would measure the stream, not the key.)
        from textual import events

        prompt = screen.query_one("#prompt")
        while app.streams_done == 0:
            before = len(prompt.value)
            t = time.perf_counter()
            event = events.Key("x", "x")
            event.set_sender(app)
            app._driver.send_message(event)  # type: ignore[union-attr]
            while len(prompt.value) == before and app.streams_done == 0:
                await asyncio.sleep(0.0005)
            if len(prompt.value) > before:
                latencies.append(time.perf_counter() - t)
        screen.log_view.flush()
        elapsed = time.perf_counter() - start
        typed = len(screen.query_one("#prompt").value)
        assert screen.chunks_seen == n + 2, screen.chunks_seen
        assert screen.log_view.line_count <= screen.log_view.max_lines
    return {
        "chunks_per_s": n / elapsed,
        "seconds": elapsed,
        "keys": typed,
        "key_p50_ms": statistics.median(latencies) * 1000 if latencies else float("nan"),
        "key_max_ms": max(latencies) * 1000 if latencies else float("nan"),
    }


CHILD_FIRST_FRAME = """
import sys
sys.path.insert(0, {root!r})
sys.argv = ["warden", "--db", {db!r}]
import tui.cli
from textual.app import App

run = App.run

def run_headless(self, **kw):  # the real `warden` entry point, in a headless terminal
    async def auto_pilot(pilot):
        while not (self.focused is not None and self.focused.id == "prompt"):
            await pilot.pause(0.001)
        print("READY", flush=True)
        self.exit()
    return run(self, headless=True, auto_pilot=auto_pilot)

App.run = run_headless
tui.cli.main()
"""


def bench_first_frame(db: Path, repeat: int = 5) -> list[float]:
    times = []
    code = CHILD_FIRST_FRAME.format(root=str(ROOT), db=str(db))
    for _ in range(repeat):
        t = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, cwd=ROOT)
        line = proc.stdout.readline()  # type: ignore[union-attr]
        times.append(time.perf_counter() - t)
        proc.wait(timeout=60)
        assert line.strip() == "READY", line
    return times


def bench_runs_list(db: Path, repeat: int = 7, args: tuple[str, ...] = ()) -> list[float]:
    times = []
    env = {**os.environ, "WARDEN_DB": str(db)}
    for _ in range(repeat):
        t = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-m", "tui.cli", "runs", "list", *args],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        times.append(time.perf_counter() - t)
        assert out.stdout
    return times


async def fill_pending(db: Path, count: int) -> None:
    """One real suspended run, then ``count - 1`` copies of its rows under new ids (listing only)."""
    import dataclasses
    import uuid

    from tui.demo.agents import build_demo_runtime
    from tui.demo.model import DemoModel

    async with build_demo_runtime(db, model=DemoModel(delay=0)) as runtime:
        stream = await runtime.get_agent("ops").stream("delete record abc-123")
        await stream.text()
        store = runtime.store
        run = await store.get_run(stream.run_id)
        calls = await store.get_calls(stream.run_id)
        for i in range(count - 1):
            rid = f"bench-{uuid.uuid4()}"
            new_run = dataclasses.replace(run, run_id=rid, suspended_at=run.suspended_at - i)
            await store.save_suspended(new_run, [dataclasses.replace(c, run_id=rid) for c in calls])


async def bench_picker(db: Path) -> dict[str, float]:
    from tui.app import WardenApp
    from tui.backend import LocalBackend
    from tui.demo.agents import build_demo_runtime
    from tui.screens.picker import PendingPicker

    app = WardenApp(LocalBackend(build_demo_runtime(db)), picker_refresh=0, status_refresh=0, cursor_blink=False)
    async with app.run_test(size=(120, 40)):
        t = time.perf_counter()
        while not (isinstance(app.screen, PendingPicker) and app.screen.loads >= 1):
            await asyncio.sleep(0.001)
        first = time.perf_counter() - t
        picker = app.screen
        pages = []
        for page in (150, 199, 1, 100, 42):
            loads = picker.loads
            t = time.perf_counter()
            picker.page = page
            picker.reload()
            while picker.loads == loads:
                await asyncio.sleep(0.001)
            pages.append(time.perf_counter() - t)
        paged = statistics.median(pages)
        total = picker.total
    return {"first_page_s": first, "page_150_s": paged, "total": total}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--pending", type=int, default=10_000)
    ns = parser.parse_args()
    os.environ["WARDEN_DEMO_DELAY"] = "0"

    log = asyncio.run(bench_log_throughput(ns.chunks))
    print(
        f"log pane: {ns.chunks} text-delta chunks in {log['seconds']:.2f} s = {log['chunks_per_s']:,.0f} chunks/s "
        f"(target >= 5,000); {log['keys']} keys handled meanwhile, key latency p50 {log['key_p50_ms']:.1f} ms, "
        f"max {log['key_max_ms']:.1f} ms"
    )

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "warden.db"
        asyncio.run(fill_pending(db, 5))
        first = bench_first_frame(Path(tmp) / "empty.db")
        print(
            f"first interactive frame (`warden --db F` process start -> prompt focused, demo runtime): "
            f"median {statistics.median(first):.3f} s, min {min(first):.3f} s (target < 1 s)"
        )
        listing = bench_runs_list(db)
        print(
            f"warden runs list (5 pending): median {statistics.median(listing):.3f} s, "
            f"min {min(listing):.3f} s (target < 0.3 s)"
        )

        big = Path(tmp) / "big.db"
        t = time.perf_counter()
        asyncio.run(fill_pending(big, ns.pending))
        print(f"(stored {ns.pending} pending runs in {time.perf_counter() - t:.1f} s)")
        listing = bench_runs_list(big, repeat=5)
        print(f"warden runs list ({ns.pending} pending, first page of 50): median {statistics.median(listing):.3f} s")
        picker = asyncio.run(bench_picker(big))
        print(
            f"pending picker with {picker['total']} runs: first page {picker['first_page_s'] * 1000:.0f} ms "
            f"after app start, another page (query + table) median {picker['page_150_s'] * 1000:.0f} ms"
        )


if __name__ == "__main__":
    main()
