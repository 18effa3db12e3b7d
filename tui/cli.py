"""``warden``: the entry point. It answers ``warden runs list`` on a SQLite file and opens the
console from plain arguments before importing typer (``tui.fast_list``, ``_fast_console``);
everything else goes to the typer app in ``tui.cli_app``.

Importing this module is cheap on purpose: ``warden runs list`` must start within 2.5x of
``python -c pass`` (bench/cli_startup.py). The typer app's names (``app``, ``Settings``,
``load_runtime``, ...) are still importable from here, loaded on first use.
"""

from __future__ import annotations

import os
import sys
from typing import Any

#: exit status when the reader of our output went away (``warden runs list | head``): 128 + SIGPIPE, as coreutils.
EXIT_BROKEN_PIPE = 141


def __getattr__(name: str) -> Any:
    # ``from tui.cli import app, Settings, load_runtime``: the typer app, imported when asked for
    # (not for the import system's probes: ``__path__``, ``__spec__``...)
    if name.startswith("__"):
        raise AttributeError(f"module 'tui.cli' has no attribute {name!r}")
    import tui.cli_app

    try:
        return getattr(tui.cli_app, name)
    except AttributeError:
        raise AttributeError(f"module 'tui.cli' has no attribute {name!r}") from None


def _fast_console(argv: list[str]) -> bool:
    """``warden [--db P] [--app M:A] [--model S]``: open the console without typer's start-up cost."""
    import argparse

    if any(not a.startswith("--") for a in argv[::2]) or any(a in ("--help", "--version") for a in argv):
        return False
    parser = argparse.ArgumentParser(add_help=False, exit_on_error=False, allow_abbrev=False)
    parser.add_argument("--db")
    parser.add_argument("--app", dest="app_spec")
    parser.add_argument("--model")
    try:
        ns, rest = parser.parse_known_args(argv)
    except (argparse.ArgumentError, SystemExit):
        return False
    if rest:
        return False
    from tui.console_start import open_console
    from tui.settings import Settings

    open_console(Settings(db=ns.db, app=ns.app_spec, model=ns.model))
    return True


def _quiet_broken_pipe() -> None:
    """The reader closed the pipe (``| head``): end quietly. Point stdout at /dev/null so the
    interpreter's final flush does not raise a second time."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    sys.exit(EXIT_BROKEN_PIPE)


def main() -> None:
    argv = sys.argv[1:]
    try:
        from tui.fast_list import fast_runs_list

        if fast_runs_list(argv) or _fast_console(argv):
            return
        from tui.cli_app import app

        app(prog_name="warden")
    except BrokenPipeError:
        _quiet_broken_pipe()


if __name__ == "__main__":
    main()
