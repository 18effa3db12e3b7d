"""A user's ``Runtime`` for ``warden --app tests.console.app_fixture:runtime`` (store in $WARDEN_DB)."""

from __future__ import annotations

import os

from warden_demo.agents import build_demo_runtime
from warden_demo.model import DemoModel

runtime = build_demo_runtime(os.environ.get("WARDEN_DB", "warden-fixture.db"), model=DemoModel(delay=0))
