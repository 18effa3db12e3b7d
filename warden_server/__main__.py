"""``python -m warden_server --app module:runtime [--host H] [--port P] [--token T]``."""

from __future__ import annotations

import argparse
import sys

from warden_server.app import DEFAULT_BODY_TIMEOUT_SECONDS, DEFAULT_MAX_BODY_BYTES
from warden_server.cli import TOKEN_ENV, ServeError, serve


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m warden_server", description="Serve a Warden Runtime over HTTP.")
    p.add_argument("--app", required=True, help="the Runtime to serve, as module:attribute")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=4111, help="port (default 4111; 0 picks a free one)")
    p.add_argument("--token", default=None, help=f"bearer token clients must send (default: ${TOKEN_ENV})")
    p.add_argument(
        "--max-body-bytes",
        type=int,
        default=DEFAULT_MAX_BODY_BYTES,
        help="largest accepted request body (default 1 MiB)",
    )
    p.add_argument(
        "--body-timeout",
        type=float,
        default=DEFAULT_BODY_TIMEOUT_SECONDS,
        metavar="SECONDS",
        help=f"a request body must arrive whole within this time, else 408 (default {DEFAULT_BODY_TIMEOUT_SECONDS:g})",
    )
    p.add_argument(
        "--cors-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="a browser origin allowed to call the API with credentials, e.g. http://localhost:3000 (repeatable)",
    )
    p.add_argument("--tokens-file", default=None, help="named tokens with roles (warden tokens add)")
    p.add_argument("--webhook", action="append", default=[], metavar="URL", help="POST when a call waits (repeatable)")
    p.add_argument("--webhook-secret", default=None, help="HMAC-SHA256 key (default: $WARDEN_WEBHOOK_SECRET)")
    p.add_argument("--webhook-unsigned", action="store_true", help="send webhooks without a secret (refused otherwise)")
    p.add_argument("--public-url", default=None, metavar="URL", help="where browsers reach this server: approval links")
    p.add_argument("--link-actor", default=None, metavar="NAME", help="the actor of link decisions (approval-link)")
    p.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])
    args = p.parse_args(argv)
    try:
        serve(
            args.app,
            args.host,
            args.port,
            args.token,
            max_body_bytes=args.max_body_bytes,
            body_timeout=args.body_timeout,
            log_level=args.log_level,
            cors_origins=args.cors_origin or None,
            tokens_file=args.tokens_file,
            webhooks=args.webhook or None,
            webhook_secret=args.webhook_secret,
            webhook_unsigned=args.webhook_unsigned,
            public_url=args.public_url,
            link_actor=args.link_actor,
        )
    except ServeError as exc:
        print(f"warden serve: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
