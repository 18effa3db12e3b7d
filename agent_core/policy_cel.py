"""The CEL engine behind a policy rule's ``when``: one small interface, two implementations.

The Rust-backed ``common-expression-language`` (module ``cel``) is the dependency: it
evaluated a two-clause rule about twenty times faster than the pure-Python ``cel-python``
(module ``celpy``) in ``bench/policy_eval.py``. ``celpy`` stays possible
(``WARDEN_CEL_ENGINE=python``) for platforms without a wheel of the Rust binding.

Everything an engine raises becomes ``CelError``: the Rust binding raises a
``BaseException`` panic on some inputs (a 100 KB rule), so the size bound is checked
first and panics are caught too. CEL itself has no I/O: a rule sees only the
variables it is given.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

#: the largest rule text accepted (UTF-8 bytes): bounds compile time and keeps the engine's parser safe.
MAX_RULE_BYTES = 4096


class Compiled(Protocol):
    """A compiled expression: an activation (``Engine.prepare``) in, its value out (raises ``CelError``)."""

    #: the variables it references (None: unknown, so every variable is bound).
    names: frozenset[str] | None

    def __call__(self, activation: Any) -> Any: ...


class CelError(Exception):
    """An expression failed to compile or to evaluate (the engine's own error, as text)."""


class Engine(Protocol):
    name: str

    def compile(self, text: str) -> Compiled: ...

    def prepare(self, variables: dict[str, Any], names: frozenset[str] | None) -> Any:
        """The engine's activation of ``variables`` (only ``names``, when known), built once per call:
        converting Python values is most of an evaluation's cost."""
        ...


@dataclass
class _Program:
    run: Callable[[Any], Any]
    names: frozenset[str] | None

    def __call__(self, activation: Any) -> Any:
        return self.run(activation)


def _guarded(exc: BaseException) -> CelError:
    """Any engine failure as ``CelError``; interpreter-level exits are never swallowed."""
    if isinstance(exc, KeyboardInterrupt | SystemExit | asyncio.CancelledError | GeneratorExit):
        raise exc
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return CelError(f"{type(exc).__name__}: {message[:300]}")


class RustEngine:
    """``common-expression-language`` (PyPI), imported as ``cel``."""

    name = "common-expression-language"

    def compile(self, text: str) -> Compiled:
        import cel

        try:
            program = cel.compile(text)
            names = frozenset(program.variables())
        except BaseException as exc:
            raise _guarded(exc) from None

        def run(activation: Any) -> Any:
            try:
                return program.execute(activation)
            except BaseException as exc:
                raise _guarded(exc) from None

        return _Program(run, names)

    def prepare(self, variables: dict[str, Any], names: frozenset[str] | None) -> Any:
        import cel

        bound = variables if names is None else {k: variables[k] for k in names if k in variables}
        try:
            return cel.Context(bound)
        except BaseException as exc:
            raise _guarded(exc) from None


class PythonEngine:
    """``cel-python`` (PyPI), imported as ``celpy``: pure Python, slower."""

    name = "cel-python"

    def compile(self, text: str) -> Compiled:
        import celpy

        env = celpy.Environment()
        try:
            program = env.program(env.compile(text))
        except BaseException as exc:
            raise _guarded(exc) from None

        def run(activation: Any) -> Any:
            try:
                value = program.evaluate(activation)
            except BaseException as exc:
                raise _guarded(exc) from None
            if isinstance(value, Exception):  # celpy returns some errors as values
                raise _guarded(value)
            return _plain(value)

        return _Program(run, None)

    def prepare(self, variables: dict[str, Any], names: frozenset[str] | None) -> Any:
        import celpy

        try:
            return {k: celpy.json_to_cel(v) for k, v in variables.items()}
        except BaseException as exc:
            raise _guarded(exc) from None


def _plain(value: Any) -> Any:
    """celpy's typed values as Python ones (``BoolType`` is an int subclass, so check it first)."""
    import celpy.celtypes as t

    if isinstance(value, t.BoolType):
        return bool(value)
    return value


ENGINES: dict[str, Callable[[], Engine]] = {"rust": RustEngine, "python": PythonEngine}


def engine(name: str | None = None) -> Engine:
    """The engine named ``name`` (``rust`` | ``python``), else ``WARDEN_CEL_ENGINE``, else rust."""
    key = name or os.environ.get("WARDEN_CEL_ENGINE") or "rust"
    factory = ENGINES.get(key)
    if factory is None:
        raise CelError(f"unknown CEL engine {key!r} (known: {', '.join(ENGINES)})")
    return factory()


def compile_bounded(text: str, eng: Engine) -> Compiled:
    """Compile ``text`` after checking its size; every failure is a ``CelError``."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_RULE_BYTES:
        raise CelError(f"the expression is {size} bytes; at most {MAX_RULE_BYTES} are allowed")
    return eng.compile(text)
