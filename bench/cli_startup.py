"""``warden runs list`` start-up against ``python -c pass``, measured side by side in one run.

Goal (issue 14): ``warden runs list`` within 2.5x of ``python -c pass``. Each command runs
10 times in turns (after 2 warm-ups); the median wall time of each and their ratio are printed.
The project's modules are byte-compiled first, as an install does (with ``PYTHONDONTWRITEBYTECODE``
set and no ``__pycache__``, every start would compile them again).

    .venv/bin/python bench/cli_startup.py [--pending 5] [--repeat 10]
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PACKAGES = ("agent_core", "storage", "tui", "warden_cli", "warden_demo", "warden_client", "warden_server", "warden_mcp")


def fill(db: Path, count: int) -> None:
    """``count`` pending runs of the demo agents (one real run, its rows copied under new ids)."""
    from bench.console_stream import bulk_pending

    bulk_pending(db, ROOT, count)


def measure(commands: dict[str, list[str]], env: dict[str, str], repeat: int) -> dict[str, float]:
    """Median wall time of each command, run in turns so load changes hit all of them alike."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    for i in range(repeat + 2):
        for name, cmd in commands.items():
            t = time.perf_counter()
            subprocess.run(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            if i >= 2:
                times[name].append(time.perf_counter() - t)
    return {name: statistics.median(ts) for name, ts in times.items()}


def report(title: str, medians: dict[str, float]) -> None:
    base = medians["python -c pass"]
    print(title)
    for name, value in medians.items():
        ratio = "" if name == "python -c pass" else f"   {value / base:.2f}x python -c pass"
        print(f"  {name:<24} {value * 1000:7.1f} ms{ratio}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pending", type=int, default=5, help="pending runs in the store (default 5)")
    parser.add_argument("--repeat", type=int, default=10)
    ns = parser.parse_args()
    warden = str(Path(sys.executable).parent / "warden")
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "warden.db"
        fill(db, ns.pending)
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "warden runs list": [warden, "runs", "list"],
            "warden runs list --json": [warden, "runs", "list", "--json"],
        }
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "WARDEN_SERVER")}
        env["WARDEN_DB"] = str(db)
        print(f"{ns.pending} pending runs, median of {ns.repeat} runs each, {os.cpu_count()} CPUs")
        for package in PACKAGES:
            compileall.compile_dir(str(ROOT / package), quiet=1)
        report("bytecode cached (as after an install):", measure(commands, env, ns.repeat))


if __name__ == "__main__":
    main()
