"""The console's two doors for the ``warden`` command (``warden_cli.console`` imports this module
and nothing else of ``tui``): on a local runtime, its first frame before the runtime
(``tui.console_start``), or on a Warden server over HTTP (``RemoteBackend``)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from warden_demo.runtime_choice import Settings


def open_local(settings: Settings, *, actor: str | None = None) -> None:
    from tui.console_start import open_console

    open_console(settings, actor=actor)


def open_remote(url: str, token: str | None) -> None:
    """Pending runs, decisions and streams over HTTP; a server that cannot be reached (or that
    refuses the token) is one line on stderr and exit status 1, before any UI."""
    from agent_core.errors import WardenError
    from tui.backend import RemoteBackend

    try:
        backend = RemoteBackend.open(url, token)
    except WardenError as error:
        _exit(f"{error.code}: {error.message or error}")
    except Exception as error:  # connection refused, bad URL: one line, not a traceback
        _exit(f"cannot reach Warden server at {url}: {type(error).__name__}: {error}")
    from tui.app import WardenApp

    WardenApp(backend).run()


def _exit(message: str) -> NoReturn:
    print(f"warden: {message}", file=sys.stderr)
    sys.exit(1)
