"""``warden`` without a command: the console, its first frame before the runtime.

Importing the runtime and building its pydantic models costs more than Textual's own start,
and the first frame (prompt, log, panel) needs none of it: the demo agents on ``--db``'s store
are built by a ``DeferredBackend`` after that frame, off the event loop; the pending runs of a
SQLite file are listed (panel, picker) before it is loaded. What can be a user's
mistake is checked before the UI starts, as one line on stderr: ``--app`` (the user's
runtime, loaded now) and ``--model``. No typer here: this is the path of a bare ``warden``.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, NoReturn

from tui.console_settings import ConsoleSettings
from warden_demo.runtime_choice import (
    CliError,
    Settings,
    db_location,
    demo_runtime_builder,
    resolve_actor,
    runtime_and_store_label,
)

if TYPE_CHECKING:
    from tui.backend import ConsoleBackend, PendingPage

#: rows of a page of pending runs (the panel, the picker)
PER_PAGE = 50


def open_console(settings: Settings, *, actor: str | None = None) -> None:
    """Run the console on ``settings``' runtime until the operator quits."""
    import gc

    gc.disable()  # until the first frame is painted: see ``_settle_heap``
    from storage.errors import WardenError  # the runtime modules load after the first frame
    from tui.deferred_backend import DeferredBackend

    try:
        backend = console_backend(settings, actor=actor)
        first_page = _first_page(settings) if isinstance(backend, DeferredBackend) else None
    except CliError as error:
        _exit(str(error), 2)
    except WardenError as error:
        _exit(f"{error.code}: {error.message or error}", 1)
    from tui.app import WardenApp

    app = WardenApp(backend, ConsoleSettings(per_page=PER_PAGE), first_page=first_page, on_first_frame=gc.enable)
    _settle_heap()
    app.run()


def _settle_heap() -> None:
    """Everything imported so far lives as long as the process: move it out of the collector's
    reach, so that the full collection the imports have made due does not land in the first
    frame (≈ 20 ms of a ≈ 45 ms first layout, measured) nor in later ones. The collector is
    off from the console's start to its first frame (``on_first_frame``): start-up makes
    garbage-free objects, and a dozen young collections cost a few milliseconds of it."""
    import gc

    gc.freeze()


def _first_page(settings: Settings) -> PendingPage | None:
    """A SQLite file with pending runs: their first page, read now, so that the console opens on
    the picker (the queue is what the operator came for) without drawing the run screen first."""
    from tui.store_peek import SqlitePeek, sqlite_path

    path = sqlite_path(db_location(settings))
    peek = SqlitePeek(path) if path else None
    if peek is None or not peek.any_pending():
        return None
    from tui.backend import PendingQuery

    return peek.list_pending(page=0, per_page=PER_PAGE, query=PendingQuery(), with_counts=True)


def console_backend(settings: Settings, *, actor: str | None = None) -> ConsoleBackend:
    """``--app``: the user's runtime, loaded now; else the demo agents, loaded after the first
    frame, with the pending runs of a SQLite file listed before (``tui.store_peek``)."""
    from tui.deferred_backend import DeferredBackend
    from tui.store_peek import SqlitePeek, sqlite_path

    if settings.app:
        from tui.backend import LocalBackend

        runtime, label = runtime_and_store_label(settings)
        return LocalBackend(_with_actor(runtime, actor), store_label=label)
    build = demo_runtime_builder(settings)

    def load() -> ConsoleBackend:
        from tui.backend import LocalBackend  # with the runtime: its value types are not needed before

        runtime, label = build()
        return LocalBackend(_with_actor(runtime, actor), store_label=label)

    path = sqlite_path(db_location(settings))
    if path is None:  # a URL: labelled by the loaded runtime (a server's password redacted)
        return DeferredBackend(load, store_label="(loading)")
    # a file's label is its path, as the loaded runtime gives it: right from the first frame
    return DeferredBackend(load, store_label=str(path), peek=SqlitePeek(path).list_pending)


def _with_actor(runtime: Any, actor: str | None) -> Any:
    """Decisions taken in the console: ``--actor``, ``$WARDEN_ACTOR``, else the OS user (unless the app set one)."""
    if actor or runtime.actor is None:
        runtime.actor = resolve_actor(actor)
    return runtime


def _exit(message: str, code: int) -> NoReturn:
    print(f"warden: {message}", file=sys.stderr)
    sys.exit(code)
