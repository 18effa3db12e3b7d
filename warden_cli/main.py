"""``warden``: the entry point. It answers ``warden runs list`` on a SQLite file and opens the
console from plain arguments before importing typer (``warden_cli.fast_list``, ``_fast_console``);
everything else goes to the typer app in ``warden_cli.app``.

Importing this module is cheap on purpose: ``warden runs list`` must start within 2.5x of
``python -c pass`` (bench/cli_startup.py).
"""

from __future__ import annotations

import os
import sys

#: exit status when the reader of our output went away (``warden runs list | head``): 128 + SIGPIPE, as coreutils.
EXIT_BROKEN_PIPE = 141


#: the options a bare ``warden`` takes, and the ``Settings`` field each fills
_CONSOLE_OPTIONS = {"--db": "db", "--app": "app", "--model": "model"}


def _console_options(argv: list[str]) -> dict[str, str] | None:
    """``--db P``, ``--app=M:A``...: the console's own options, each once (None: anything else,
    for the typer app to answer, with its help and errors). Parsed by hand: ``argparse`` and its
    ``gettext`` are a measurable share of the console's start-up."""
    found: dict[str, str] = {}
    rest = iter(argv)
    for arg in rest:
        name, eq, value = arg.partition("=")
        field = _CONSOLE_OPTIONS.get(name)
        if field is None or field in found:
            return None
        if not eq:
            value = next(rest, None)  # type: ignore[assignment]
            if value is None or value.startswith("--"):
                return None
        found[field] = value
    return found


def _fast_console(argv: list[str]) -> bool:
    """``warden [--db P] [--app M:A] [--model S]``: open the console without typer's start-up cost."""
    options = _console_options(argv)
    if options is None:
        return False
    from warden_cli.console import open_local_console
    from warden_demo.runtime_choice import Settings

    open_local_console(Settings(**options))
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
        if _fast_console(argv):
            return
        if argv[:2] == ["runs", "list"]:
            from warden_cli.fast_list import fast_runs_list

            if fast_runs_list(argv):
                return
        from warden_cli.app import app

        app(prog_name="warden")
    except BrokenPipeError:
        _quiet_broken_pipe()


if __name__ == "__main__":
    main()
