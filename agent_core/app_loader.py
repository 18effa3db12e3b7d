"""Load a user's ``Runtime`` from ``module:attribute`` (``--app``).

One loader for the console, ``warden serve`` and ``warden runs``, so the same
spec means the same thing everywhere and every mistake is one clear line.
The attribute may be a ``Runtime`` or a zero-argument function returning one.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from typing import TYPE_CHECKING

from agent_core.errors import WardenError

if TYPE_CHECKING:
    from agent_core.runtime import Runtime


class AppLoadError(WardenError):
    """``--app`` does not name a ``Runtime`` (or a factory of one) that can be imported."""

    code = "APP_LOAD_ERROR"


def load_runtime(spec: str, *, policy: str | None = None, shadow_policy: str | None = None) -> Runtime:
    """``"package.module:attr"`` -> the ``Runtime`` it names; a zero-argument factory is called.
    ``policy`` / ``shadow_policy``: policy files to enforce / audit (else ``$WARDEN_POLICY`` /
    ``$WARDEN_SHADOW_POLICY``; ``agent_core.policy_env``)."""
    from agent_core.runtime import Runtime

    module_name, _, attr = spec.partition(":")
    attr = attr or "runtime"
    if not module_name:
        raise AppLoadError(f"--app must look like 'module:attribute' (or 'module' for module:runtime), got {spec!r}")
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise AppLoadError(f"--app {spec!r}: cannot import {module_name!r}: {exc}") from exc
    except Exception as exc:  # the module itself fails (SyntaxError, a NameError at import): one line
        raise AppLoadError(f"--app {spec!r}: importing {module_name!r} failed: {type(exc).__name__}: {exc}") from exc
    obj: object = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError as exc:
            raise AppLoadError(f"--app {spec!r}: module {module_name!r} has no attribute {attr!r}") from exc
    if not isinstance(obj, Runtime) and callable(obj):
        try:
            obj = obj()
        except TypeError as exc:
            raise AppLoadError(f"--app {spec!r}: calling {attr}() failed: {exc}") from exc
        except Exception as exc:  # the factory's own error: one line, not a traceback
            raise AppLoadError(f"--app {spec!r}: calling {attr}() failed: {type(exc).__name__}: {exc}") from exc
        if inspect.isawaitable(obj):
            close = getattr(obj, "close", None)
            if close is not None:
                close()  # no "coroutine was never awaited" warning
            raise AppLoadError(f"--app {spec!r} is an async factory; give a Runtime or a plain function returning one")
    if not isinstance(obj, Runtime):
        raise AppLoadError(f"--app {spec!r} is a {type(obj).__name__}, not an agent_core.Runtime")
    from agent_core.policy_env import apply_policy_env

    try:
        return apply_policy_env(obj, policy, shadow_policy)
    except WardenError as exc:  # a bad --policy file: one line, like a bad --app
        raise AppLoadError(exc.message) from exc
