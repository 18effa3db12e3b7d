"""Console start-up and throughput, side by side with what Textual and Python cost anyway.

    .venv/bin/python bench/console_stream.py [--pending 10000] [--repeat 7] [--log-chunks 0] [--root DIR]

Printed in one run, each a median of ``--repeat`` fresh processes (headless terminal):

* a hello-world Textual app with the same widgets as the console (header, input, log,
  footer) and Warden (``warden --db F``, demo runtime), run in turns: process start -> the
  first frame painted with the prompt focused (``HARNESS``); their ratio (target <= 1.15);
  for reference, a plain Textual app with the widgets of Warden's first frame in a ``Screen`` of its
  own (``SAME_WIDGETS``), and when a pilot polling every millisecond first sees the focus;
* ``python -c pass`` and ``warden runs list``; their ratio (target <= 2.5);
* ``warden --db F`` with 10,000 pending runs in SQLite: process start -> the picker listing
  its first page painted (target <= 0.5 s), and in-process: another page, a filter.

``--root DIR`` measures another source tree (e.g. an export of an older commit: before/after).
``--log-chunks N`` adds the log pane's throughput (N text-delta chunks while keys are typed).
``--instructions N``: the first frame in CPU instructions too (valgrind's callgrind, N runs each,
the fewest): on a loaded machine wall times swing by tens of percent, instruction counts by
well under one.
"""

from __future__ import annotations

import argparse
import asyncio
import compileall
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("agent_core", "storage", "tui", "warden_cli", "warden_demo", "warden_client", "warden_server", "warden_mcp")

#: Every child app runs headless through this harness: FRAME when the first frame in which
#: ``ready`` holds has been composed and handed to the terminal (``post_display_hook``), READY
#: when a pilot polling every millisecond first sees ``ready``.
HARNESS = """
import sys
sys.path.insert(0, {root!r})
from textual.app import App
run = App.run
hook = App.post_display_hook
painted = False

def ready(self):
    return {ready}

def post_display_hook(self):
    global painted
    hook(self)
    if not painted and ready(self):
        painted = True
        print("FRAME", flush=True)

def run_headless(self, **kw):
    async def auto_pilot(pilot):
        while not ready(self):
            await pilot.pause(0.001)
        print("READY", flush=True)
        while not painted:
            await pilot.pause(0.001)
        self.exit()
    return run(self, headless=True, auto_pilot=auto_pilot)

App.post_display_hook = post_display_hook
App.run = run_headless
"""

HELLO = """
from textual.app import App
from textual.widgets import Footer, Header, Input, Log

class Hello(App):
    def compose(self):
        yield Header()
        yield Input(placeholder="prompt", id="prompt")
        yield Log()
        yield Footer()

Hello().run()
"""

#: For reference: a plain Textual app with the widgets of Warden's first frame (the agent
#: selector's placeholder — the ``Select`` comes with the runtime's agents —, prompt, banner, log,
#: side panel with an option list, status line, footer), composed in a ``Screen`` of its own as
#: Warden's is. The pilot's first look at ``focused`` comes after such a
#: screen's first layout, where the hello-world app's widgets (composed by the app itself) are
#: focused before it: this is what Textual costs for that screen, before any Warden code.
SAME_WIDGETS = """
from textual.app import App
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Input, Log, OptionList, Static

CSS = '''
#top-bar { height: auto; }
#agent-loading { width: 34; height: 3; border: tall $border-blurred; background: $surface; padding: 0 2; }
#prompt { width: 1fr; }
#main { height: 1fr; }
#log { width: 1fr; border: round $primary-darken-2; }
#side { width: 38; border: round $primary-darken-2; }
.hidden { display: none; }
'''

class Main(Screen):
    AUTO_FOCUS = "#prompt"

    def compose(self):
        with Horizontal(id="top-bar"):
            yield Static("loading agents…", id="agent-loading")
            yield Input(placeholder="prompt", id="prompt")
        yield Static("", id="waiting-banner", classes="hidden")
        with Horizontal(id="main"):
            yield Log(id="log")
            with Vertical(id="side"):
                yield Static("Pending decisions")
                yield OptionList()
                yield Static("hint")
        yield Static("status")
        yield Footer()

class Same(App):
    CSS = CSS

    def get_default_screen(self):
        return Main()

Same().run()
"""

#: The real entry point, in a headless terminal: READY once ``ready()`` holds.
WARDEN = """
sys.argv = ["warden", "--db", {db!r}]
import warden_cli.main
warden_cli.main.main()
"""

PROMPT_READY = "self.focused is not None and self.focused.id == 'prompt'"
PICKER_READY = "type(self.screen).__name__ == 'PendingPicker' and self.screen.loads >= 1 and self.screen.calls"


def time_until_ready(
    app_code: str, repeat: int, env: dict[str, str], cwd: Path, *, root: Path, ready: str
) -> dict[str, list[float]]:
    """Process start -> FRAME and -> READY (see ``HARNESS``), ``repeat`` fresh processes."""
    code = HARNESS.format(root=str(root), ready=ready) + app_code
    times: dict[str, list[float]] = {"FRAME": [], "READY": []}
    for _ in range(repeat):
        t = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd
        )
        seen = []
        for line in proc.stdout:  # type: ignore[union-attr]
            if line.strip() in times and line.strip() not in seen:
                times[line.strip()].append(time.perf_counter() - t)
                seen.append(line.strip())
            if len(seen) == 2:
                break
        _, err = proc.communicate(timeout=60)
        if len(seen) != 2:
            raise SystemExit(f"child did not get ready: {seen!r}\n{err[-2000:]}")
    return times


def time_command(argv: list[str], repeat: int, env: dict[str, str], cwd: Path) -> list[float]:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        subprocess.run(argv, env=env, capture_output=True, check=True, cwd=cwd)
        times.append(time.perf_counter() - t)
    return times


def console_app(backend: Any, **settings: Any) -> Any:
    """``WardenApp`` of the tree measured (``--root``): its settings one object, or keywords in a tree from before."""
    from tui.app import WardenApp

    try:
        from tui.console_settings import ConsoleSettings
    except ImportError:
        return WardenApp(backend, **settings)
    return WardenApp(backend, ConsoleSettings(**settings))


def bulk_pending(db: Path, root: Path, count: int) -> None:
    """``count`` pending runs: one real suspended run of the demo, its rows copied in SQL (fast)."""
    env = {**os.environ, "WARDEN_DEMO_DELAY": "0"}
    seed = f"""
import asyncio, sys
sys.path.insert(0, {str(root)!r})
from warden_demo.agents import build_demo_runtime
async def main():
    async with build_demo_runtime({str(db)!r}) as rt:
        s = await rt.get_agent("ops").stream("delete record abc-123")
        await s.text()
asyncio.run(main())
"""
    subprocess.run([sys.executable, "-c", seed], env=env, check=True, cwd=root)
    people = ["ana", "bob", "cy", "dee", "eve"]
    with sqlite3.connect(db) as conn:
        run = conn.execute("SELECT * FROM runs LIMIT 1").fetchone()
        cols = [d[0] for d in conn.execute("SELECT * FROM runs LIMIT 1").description]
        call = conn.execute("SELECT * FROM pending_calls LIMIT 1").fetchone()
        ccols = [d[0] for d in conn.execute("SELECT * FROM pending_calls LIMIT 1").description]
        runs, calls = [], []
        for i in range(count - 1):
            rid = f"bench-{i:07d}"
            r = dict(zip(cols, run, strict=True))
            r.update(run_id=rid, suspended_at=r["suspended_at"] - 1 - i)
            c = dict(zip(ccols, call, strict=True))
            c.update(run_id=rid, args=json.dumps({"record_id": f"{people[i % 5]}-{i}"}))
            runs.append(tuple(r.values()))
            calls.append(tuple(c.values()))
        conn.executemany(f"INSERT INTO runs ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})", runs)
        conn.executemany(
            f"INSERT INTO pending_calls ({', '.join(ccols)}) VALUES ({', '.join('?' * len(ccols))})", calls
        )


async def picker_in_process(db: Path) -> dict[str, float]:
    """Another page and a filter, in a running console (the store's query + the table)."""
    from tui.backend import LocalBackend
    from tui.screens.picker import PendingPicker
    from warden_demo.agents import build_demo_runtime

    started = time.perf_counter()
    app = console_app(LocalBackend(build_demo_runtime(db)), picker_refresh=0, status_refresh=0, cursor_blink=False)
    async with app.run_test(size=(120, 40)):
        while not (isinstance(app.screen, PendingPicker) and app.screen.loads >= 1):
            await asyncio.sleep(0.001)
        opened = time.perf_counter() - started
        picker = app.screen

        async def timed(change) -> float:
            loads = picker.loads
            t = time.perf_counter()
            change()
            while picker.loads == loads:
                await asyncio.sleep(0.001)
            return time.perf_counter() - t

        def goto(page: int):
            def change() -> None:
                picker.page = page
                picker.reload()

            return change

        pages = [await timed(goto(p)) for p in (150, 199, 1, 100, 42)]
        total = picker.total
        filters = []
        for text in ("ana-12", "bob", "tool:delete_record eve-9", "zzz-nothing"):
            filters.append(await timed(lambda text=text: picker.set_filter(text)))
        return {
            "opened": opened,
            "page": statistics.median(pages),
            "filter": statistics.median(filters),
            "total": total,
        }


async def log_throughput(n: int) -> dict[str, float]:
    from agent_core.chunks import Chunk, make_chunk
    from tui.backend import AgentInfo, PendingPage

    class Stream:
        run_id, status = "bench-run", "finished"

        @property
        def full_stream(self) -> AsyncIterator[Chunk]:
            return self._iter()

        async def _iter(self) -> AsyncIterator[Chunk]:
            words = ["lorem ", "ipsum ", "dolor ", "sit ", "amet.\n"]
            yield make_chunk("start", self.run_id, agent_id="bench")
            for i in range(n):
                yield make_chunk("text-delta", self.run_id, text=words[i % len(words)])
            yield make_chunk("finish", self.run_id, finish_reason="stop")

    class Backend:
        store_label = "(bench)"
        maintenance = None

        def list_agents(self):
            return [AgentInfo("bench", "Bench", "synthetic", True)]

        async def start_run(self, agent_id, prompt, **kw):
            return Stream()

        async def list_pending(self, **kw):
            return PendingPage([], 0, 0, 1)

        async def aclose(self):
            pass

    app = console_app(Backend(), picker_refresh=0, status_refresh=0, cursor_blink=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        t = time.perf_counter()
        app.start_run("bench", "go")
        while app.streams_done < 1:
            await asyncio.sleep(0.01)
        elapsed = time.perf_counter() - t
    return {"chunks_per_s": n / elapsed, "seconds": elapsed}


def instructions_until_frame(app_code: str, env: dict[str, str], cwd: Path, *, root: Path) -> int:
    """CPU instructions (callgrind's ``Ir``) from process start to the first frame (exit there)."""
    import re

    frame_exit = 'print("FRAME", flush=True); import os; os._exit(0)'
    code = HARNESS.format(root=str(root), ready=PROMPT_READY).replace('print("FRAME", flush=True)', frame_exit)
    with tempfile.TemporaryDirectory() as tmp:
        valgrind = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/callgrind.out"]
        out = subprocess.run(
            [*valgrind, sys.executable, "-c", code + app_code],
            env=env,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=900,
        )
    found = re.search(r"Collected : (\d+)", out.stderr)
    if "FRAME" not in out.stdout or found is None:
        raise SystemExit(f"no first frame under valgrind:\n{out.stderr[-2000:]}")
    return int(found.group(1))


def med(xs: list[float]) -> float:
    return statistics.median(xs)


def best(times: dict[str, list[float]]) -> float:
    return min(times["FRAME"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pending", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--log-chunks", type=int, default=0)
    parser.add_argument("--instructions", type=int, default=0, help="runs each under callgrind (0: none)")
    parser.add_argument("--root", type=Path, default=ROOT, help="source tree to measure (default: this one)")
    ns = parser.parse_args()
    root = ns.root.resolve()
    sys.path.insert(0, str(root))
    # byte-compiled first, as an install does: with ``PYTHONDONTWRITEBYTECODE`` set and no
    # ``__pycache__``, every start would compile Warden's modules again (Textual's are compiled)
    for package in PACKAGES:
        compileall.compile_dir(str(root / package), quiet=1)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "WARDEN_SERVER")}
    env.update(WARDEN_DEMO_DELAY="0", PYTHONPATH=str(root))
    print(f"source tree: {root}  ·  python {sys.version.split()[0]}  ·  {ns.repeat} processes each, medians")

    with tempfile.TemporaryDirectory() as tmp:
        empty = Path(tmp) / "empty.db"
        apps = {
            "hello": HELLO,
            "warden": WARDEN.format(db=str(empty)),
            "same": SAME_WIDGETS,
        }
        runs: dict[str, dict[str, list[float]]] = {name: {"FRAME": [], "READY": []} for name in apps}
        for _ in range(ns.repeat):  # in turns, so that a change of load hits all three alike
            for name, app_code in apps.items():
                for key, ts in time_until_ready(app_code, 1, env, root, root=root, ready=PROMPT_READY).items():
                    runs[name][key] += ts
        hello, warden, same = ({k: med(v) for k, v in runs[n].items()} for n in apps)
        print(
            f"first frame   process start -> the first frame painted with the prompt focused:\n"
            f"              hello-world Textual (header, input, log, footer) {hello['FRAME']:.3f} s  ·  "
            f"warden {warden['FRAME']:.3f} s  ·  ratio {warden['FRAME'] / hello['FRAME']:.2f} (target <= 1.15)\n"
            f"              plain Textual with the first frame's widgets in a Screen {same['FRAME']:.3f} s  ·  "
            f"ratio {same['FRAME'] / hello['FRAME']:.2f} (for reference)\n"
            f"              best of {ns.repeat} (load only adds): hello-world {best(runs['hello']):.3f} s  ·  "
            f"warden {best(runs['warden']):.3f} s  ·  ratio {best(runs['warden']) / best(runs['hello']):.2f}\n"
            f"              process start -> a pilot polling every 1 ms sees the prompt focused (hello-world's "
            f"focus comes before its first layout, a Screen's after):\n"
            f"              hello-world {hello['READY']:.3f} s  ·  warden {warden['READY']:.3f} s "
            f"(ratio {warden['READY'] / hello['READY']:.2f})  ·  plain Screen {same['READY']:.3f} s "
            f"(ratio {same['READY'] / hello['READY']:.2f})"
        )
        if ns.instructions:
            counts = {name: 0 for name in apps}
            for _ in range(ns.instructions):
                for name, app_code in apps.items():
                    n = instructions_until_frame(app_code, env, root, root=root)
                    counts[name] = min(counts[name] or n, n)
            print(
                f"              in CPU instructions (callgrind, fewest of {ns.instructions}): hello-world "
                f"{counts['hello'] / 1e6:.0f} M  ·  warden {counts['warden'] / 1e6:.0f} M "
                f"(ratio {counts['warden'] / counts['hello']:.3f})  ·  plain Screen {counts['same'] / 1e6:.0f} M "
                f"(ratio {counts['same'] / counts['hello']:.3f})"
            )
        small = Path(tmp) / "small.db"
        bulk_pending(small, root, 5)
        bare = time_command([sys.executable, "-c", "pass"], ns.repeat, env, root)
        listing = time_command(
            [sys.executable, "-m", "warden_cli", "runs", "list"], ns.repeat, {**env, "WARDEN_DB": str(small)}, root
        )
        print(
            f"headless      python -c pass {med(bare):.3f} s  ·  warden runs list (5 pending) {med(listing):.3f} s  ·  "
            f"ratio {med(listing) / med(bare):.2f} (target <= 2.5)"
        )
        big = Path(tmp) / "big.db"
        t = time.perf_counter()
        bulk_pending(big, root, ns.pending)
        print(f"(stored {ns.pending} pending runs in {time.perf_counter() - t:.1f} s)")
        picker = time_until_ready(WARDEN.format(db=str(big)), ns.repeat, env, root, root=root, ready=PICKER_READY)
        print(
            f"picker        warden --db F with {ns.pending} pending: process start -> first page painted "
            f"{med(picker['FRAME']):.3f} s (target <= 0.5 s); seen by a pilot {med(picker['READY']):.3f} s"
        )
        if (root / "tui" / "screens" / "picker.py").read_text().count("set_filter"):
            inproc = asyncio.run(picker_in_process(big))
            print(
                f"              in process (modules loaded): app start -> first page listed "
                f"{inproc['opened'] * 1000:.0f} ms; another page {inproc['page'] * 1000:.0f} ms, "
                f"a filter (store query + table) {inproc['filter'] * 1000:.0f} ms, of {inproc['total']} runs"
            )
    if ns.log_chunks:
        log = asyncio.run(log_throughput(ns.log_chunks))
        print(f"log pane      {ns.log_chunks} text-delta chunks: {log['chunks_per_s']:,.0f} chunks/s")


if __name__ == "__main__":
    main()
