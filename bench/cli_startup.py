"""``warden runs list`` start-up against ``python -c pass``, measured side by side in one run.

Goal (issue 14, kept by issue 28): ``warden runs list`` within 2.5x of ``python -c pass``. Each
command runs ``--repeat`` times in turns (after 2 warm-ups); the median and the best wall time of
each and their ratios are printed. ``--root DIR`` (repeatable) measures other source trees too
(e.g. a ``git worktree`` of an older commit: before/after in one run, in turns), each through the
installed ``warden`` script with ``PYTHONPATH=DIR``. The project's modules are byte-compiled
first, as an install does (with ``PYTHONDONTWRITEBYTECODE`` set and no ``__pycache__``, every start
would compile them again).

    .venv/bin/python bench/cli_startup.py [--pending 5] [--repeat 10] [--root DIR ...]
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
BARE = "python -c pass"


def fill(db: Path, count: int, root: Path) -> None:
    """``count`` pending runs of ``root``'s demo agents (one real run, its rows copied under new ids;
    each tree its own file: an older tree refuses a newer schema)."""
    from bench.console_stream import bulk_pending

    bulk_pending(db, root, count)


def measure(commands: dict[str, tuple[list[str], dict[str, str]]], repeat: int) -> dict[str, list[float]]:
    """Wall times of each command, run in turns so load changes hit all of them alike."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    for i in range(repeat + 2):
        for name, (cmd, env) in commands.items():
            t = time.perf_counter()
            subprocess.run(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            if i >= 2:
                times[name].append(time.perf_counter() - t)
    return times


def report(title: str, times: dict[str, list[float]]) -> None:
    medians = {name: statistics.median(ts) for name, ts in times.items()}
    bests = {name: min(ts) for name, ts in times.items()}
    print(title)
    print(f"  {'':<44} {'median':>9} {'ratio':>7}   {'best':>8} {'ratio':>7}")
    for name in times:
        ratios = (
            ("", "") if name == BARE else (f"{medians[name] / medians[BARE]:.2f}x", f"{bests[name] / bests[BARE]:.2f}x")
        )
        print(
            f"  {name:<44} {medians[name] * 1000:6.1f} ms {ratios[0]:>7}   {bests[name] * 1000:5.1f} ms {ratios[1]:>7}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pending", type=int, default=5, help="pending runs in the store (default 5)")
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--root", type=Path, action="append", default=[], help="another source tree to measure")
    ns = parser.parse_args()
    warden = str(Path(sys.executable).parent / "warden")
    roots = [ROOT, *(r.resolve() for r in ns.root)]
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "WARDEN_SERVER")}
        commands: dict[str, tuple[list[str], dict[str, str]]] = {BARE: ([sys.executable, "-c", "pass"], env)}
        for root in roots:
            label = "" if len(roots) == 1 else f" [{root.name}]"
            db = Path(tmp) / f"warden-{len(commands)}.db"
            fill(db, ns.pending, root)
            tree_env = (
                {**env, "WARDEN_DB": str(db)}
                if root == ROOT
                else {**env, "WARDEN_DB": str(db), "PYTHONPATH": str(root)}
            )
            commands[f"warden runs list{label}"] = ([warden, "runs", "list"], tree_env)
            commands[f"warden runs list --json{label}"] = ([warden, "runs", "list", "--json"], tree_env)
            for package in PACKAGES:
                compileall.compile_dir(str(root / package), quiet=1)
        print(
            f"{ns.pending} pending runs, {ns.repeat} runs each in turns, {os.cpu_count()} CPUs, "
            f"load {os.getloadavg()[0]:.2f}"
        )
        report("bytecode cached (as after an install):", measure(commands, ns.repeat))


if __name__ == "__main__":
    main()
