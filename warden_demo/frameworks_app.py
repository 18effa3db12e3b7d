"""``--app warden_demo.frameworks_app:runtime``: the demo's agents and the other frameworks' on the
demo's store, for a decision taken in another process (``warden runs approve … --app …``).
Apart from ``warden_demo.frameworks`` so that the agents never import back the module that loads them."""

from __future__ import annotations

from pathlib import Path

from agent_core import Runtime
from storage.urls import is_postgres_url


def runtime() -> Runtime:
    """``--app warden_demo.frameworks_app:runtime``: the demo agents and these, on the demo's store."""
    from warden_demo.agents import build_demo_runtime
    from warden_demo.runtime_choice import Settings, db_location

    db = db_location(Settings())
    if not is_postgres_url(db):
        Path(db).parent.mkdir(parents=True, exist_ok=True)
    return build_demo_runtime(db, frameworks=True)
