"""Warden's HTTP server: Mastra-compatible agent routes over a ``Runtime`` (Starlette + uvicorn).

Never imports textual. ``create_app(runtime, token=None)`` builds the ASGI app;
``serve("module:runtime", host, port, token)`` runs it.
"""

from warden_server.app import create_app
from warden_server.cli import serve

__all__ = ["create_app", "serve"]
