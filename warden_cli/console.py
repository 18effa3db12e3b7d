"""Opening the console from the CLI: the one place ``warden_cli`` imports the console package
(``tui.launch``), and only when a console is asked for (``.importlinter``: "the CLI never
imports textual" allows this import and no other)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from warden_demo.runtime_choice import Settings


def open_local_console(settings: Settings, *, actor: str | None = None) -> None:
    """The console on a local runtime; it checks ``--app``/``--model`` and exits with one line on a mistake."""
    from tui.launch import open_local

    open_local(settings, actor=actor)


def open_remote_console(url: str, token: str | None) -> None:
    """The console against a Warden server (``token``: ``--token``, else ``$WARDEN_API_TOKEN``); an
    unreachable server or a refused token is one line on stderr."""
    import os

    from tui.launch import open_remote
    from warden_cli.common import TOKEN_ENV

    open_remote(url, token or os.environ.get(TOKEN_ENV))
