"""What a ``warden`` process runs on: its settings (``--db``, ``--app``, ``--model``, ``--server``, ``--policy``),
the store they name, and the runtime they load (your ``--app``, else the demo agents).

The console's start (``tui.console_start``) and the CLI (``warden_cli``) both need this and must
not import each other, so it lives here, with the demo it falls back to; no typer, no textual."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def resolve_actor(actor: str | None) -> str:
    """``--actor``, else ``$WARDEN_ACTOR``, else the OS user name."""
    if actor:
        return actor
    env = os.environ.get("WARDEN_ACTOR")
    if env:
        return env
    import getpass

    try:
        return getpass.getuser()
    except Exception:  # no user name in this environment (a container without passwd entry)
        return f"uid:{os.getuid()}" if hasattr(os, "getuid") else "unknown"


class CliError(Exception):
    """A usage problem reported as one line (exit code 2)."""


@dataclass
class Settings:
    #: a SQLite path or a ``postgresql://`` URL (``storage.open_store`` opens either)
    db: str | Path | None = None
    app: str | None = None
    model: str | None = None
    #: a Warden server's URL: the headless commands go through the client SDK (``warden_cli.remote``)
    server: str | None = None
    token: str | None = None
    #: policy files (checked by the CLI) the loaded runtime enforces / audits; None: ``$WARDEN_POLICY`` /
    #: ``$WARDEN_SHADOW_POLICY`` (``agent_core.policy_env``)
    policy: str | None = None
    shadow_policy: str | None = None


def default_db_path() -> Path:
    env = os.environ.get("WARDEN_DB")
    if env:
        return Path(env).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir("warden", appauthor=False)) / "warden.db"


def db_location(settings: Settings) -> str:
    """The store to open: ``--db``, else ``$WARDEN_DB``, else the data dir; a URL as given, a path expanded."""
    from storage.urls import is_postgres_url

    db = str(settings.db) if settings.db else os.environ.get("WARDEN_DB") or str(default_db_path())
    return db if is_postgres_url(db) else str(Path(db).expanduser())


def runtime_and_store_label(settings: Settings) -> tuple[Any, str]:
    """The runtime the settings ask for (``--app``, loaded now; else the demo agents on ``--db``)
    and a label of its store (for the status bar). Not ``agent_core.app_loader.load_runtime``,
    which imports a ``module:attribute`` and is one of the two ways here."""
    if settings.app:
        from agent_core.app_loader import AppLoadError
        from agent_core.app_loader import load_runtime as load_app

        try:
            runtime = load_app(settings.app, policy=settings.policy, shadow_policy=settings.shadow_policy)
        except AppLoadError as error:
            raise CliError(error.message) from error
        telemetry_from_env()  # after the app is imported: a provider it sets itself is kept
        store = runtime.store
        return runtime, str(getattr(store, "path", None) or getattr(store, "name", type(store).__name__))
    build = demo_runtime_builder(settings)
    return build()


def telemetry_from_env() -> None:
    """The OpenTelemetry SDK, when ``OTEL_*`` variables ask for it and no provider is set yet
    (``pip install 'warden[otel]'``; docs/operations.md); a mistake in them is one line.
    No ``OTEL_*`` variable asks for nothing: the console's first frame does not import the setup."""
    if not any(name.startswith("OTEL_") for name in os.environ):
        return
    from agent_core.telemetry_setup import TelemetrySetupError, configure_from_env

    try:
        configure_from_env()
    except TelemetrySetupError as error:
        raise CliError(f"{error.code}: {error.message}") from error


def demo_runtime_builder(settings: Settings) -> Callable[[], tuple[Any, str]]:
    """The demo agents on ``--db``'s store, built when called (the console calls it after its
    first frame). ``--model`` is resolved now: a mistake in it is an error before any UI."""
    telemetry_from_env()
    model = None
    if settings.model:
        from agent_core.providers import resolve_model

        model = resolve_model(settings.model)

    def build() -> tuple[Any, str]:
        from agent_core.policy_env import apply_policy_env
        from storage.urls import describe
        from warden_demo.agents import build_demo_runtime

        db = db_location(settings)
        # WARDEN_DEMO_FRAMEWORKS=1 (``make demo``): also the agents of other frameworks (warden_demo/frameworks.py)
        frameworks = os.environ.get("WARDEN_DEMO_FRAMEWORKS", "") == "1"
        runtime = build_demo_runtime(db, model=model, frameworks=frameworks)
        return apply_policy_env(runtime, settings.policy, settings.shadow_policy), describe(db)

    return build
