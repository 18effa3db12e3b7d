"""The blocking client is generated from the async one (``scripts/gen_sync_client.py``, unasync)."""

from __future__ import annotations

import importlib.util
import inspect

from tests.server.procs import REPO
from warden_client import (
    RemoteAgent,
    RemoteAgentStream,
    SyncAgentStream,
    SyncRemoteAgent,
    SyncWardenClient,
    WardenClient,
)


def _generator():
    spec = importlib.util.spec_from_file_location("gen_sync_client", REPO / "scripts" / "gen_sync_client.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_sync_client_is_current():
    gen = _generator()
    expected = gen.generate()
    assert gen.SYNC.read_text(encoding="utf-8") == expected, "run: .venv/bin/python scripts/gen_sync_client.py"


def _public(cls: type) -> dict[str, list[tuple[str, object, object]]]:
    out = {}
    for name, member in inspect.getmembers(cls):
        if name.startswith("_") and name not in ("__enter__", "__exit__", "__aenter__", "__aexit__"):
            continue
        if isinstance(inspect.getattr_static(cls, name), property):
            out[name] = []
        elif callable(member):
            params = list(inspect.signature(member).parameters.values())[1:]  # without self
            out[name] = [(p.name, p.kind, p.default) for p in params]
    return out


_TWIN = {"aclose": "close", "__aenter__": "__enter__", "__aexit__": "__exit__"}


def test_blocking_twins_expose_the_same_methods_and_signatures():
    for async_cls, sync_cls in [
        (WardenClient, SyncWardenClient),
        (RemoteAgent, SyncRemoteAgent),
        (RemoteAgentStream, SyncAgentStream),
    ]:
        a = {_TWIN.get(k, k): v for k, v in _public(async_cls).items()}
        assert a == _public(sync_cls), (async_cls.__name__, sync_cls.__name__)
        for name in a:
            twin = getattr(async_cls, {v: k for k, v in _TWIN.items()}.get(name, name))
            # a coroutine, or an async generator (``events``: the blocking twin is a plain generator)
            is_async = inspect.iscoroutinefunction(twin) or inspect.isasyncgenfunction(twin)
            assert not inspect.iscoroutinefunction(getattr(sync_cls, name)), name
            assert not inspect.isasyncgenfunction(getattr(sync_cls, name)), name
            if name not in ("agent",) and not isinstance(inspect.getattr_static(async_cls, name, None), property):
                assert is_async, (async_cls.__name__, name)
