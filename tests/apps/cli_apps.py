"""``--app`` targets for the CLI tests: a working zero-argument factory, and each kind of mistake."""

from __future__ import annotations

import os

from agent_core import Runtime


def demo() -> Runtime:
    """A zero-argument factory: the demo agents on ``$WARDEN_DB``."""
    from warden_demo.agents import build_demo_runtime

    return build_demo_runtime(os.environ["WARDEN_DB"])


def broken() -> Runtime:
    raise RuntimeError("no API key configured for this app")


def needs_config(config: dict) -> Runtime:
    raise AssertionError("never called without its argument")


async def async_factory() -> Runtime:
    raise AssertionError("never awaited")


not_a_runtime = 42
