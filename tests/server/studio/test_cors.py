"""CORS for Mastra Studio against a real ``python -m warden_server --cors-origin ...``."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.server.helpers import TOKEN, raw
from tests.server.procs import REPO
from warden_server.cors import InvalidCorsOrigin, check_origins

STUDIO = "http://localhost:3000"
# What Studio's preflight asks for (read from Chromium driving mastra studio 1.31).
STUDIO_HEADERS = "authorization, content-type, x-mastra-client-type, x-mastra-dev-playground"


def _preflight(origin: str, method: str = "POST") -> dict[str, str]:
    return {"Origin": origin, "Access-Control-Request-Method": method, "Access-Control-Request-Headers": STUDIO_HEADERS}


def test_studio_preflight_credentials_and_a_disallowed_origin(servers):
    server = servers.start("cors", extra_args=("--cors-origin", STUDIO, "--cors-origin", "https://ui.example"))
    with raw(server.url, token=None) as anon:
        r = anon.options("/api/agents/ops/stream", headers=_preflight(STUDIO))  # no token on a preflight
        assert r.status_code == 200
        assert r.headers["access-control-allow-origin"] == STUDIO  # the exact origin, never *
        assert r.headers["access-control-allow-credentials"] == "true"
        allowed = r.headers["access-control-allow-headers"].lower()
        for header in STUDIO_HEADERS.split(", "):
            assert header in allowed
        # the second --cors-origin is allowed too, and named alone
        r = anon.options("/", headers=_preflight("https://ui.example", "GET"))
        assert r.status_code == 200 and r.headers["access-control-allow-origin"] == "https://ui.example"
        # an origin not listed gets no CORS grant at all
        r = anon.options("/api/agents/ops/stream", headers=_preflight("http://evil.example"))
        assert r.status_code == 400
        assert "access-control-allow-origin" not in r.headers
        # Studio's first request, GET /, answers without a token (as Mastra's server does)
        r = anon.get("/", headers={"Origin": STUDIO})
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
        assert r.headers["access-control-allow-origin"] == STUDIO
        # the API still needs the token; the 401 is readable by the page (CORS headers on it)
        r = anon.get("/api/agents", headers={"Origin": STUDIO, "x-mastra-client-type": "studio"})
        assert r.status_code == 401 and r.headers["access-control-allow-origin"] == STUDIO
        assert r.json() == {"error": "missing bearer token", "code": "UNAUTHORIZED"}
    with raw(server.url) as c:
        r = c.get("/api/agents", headers={"Origin": STUDIO, "x-mastra-client-type": "studio"})
        assert r.status_code == 200 and "ops" in r.json()
        assert r.headers["access-control-allow-origin"] == STUDIO
        assert r.headers["access-control-allow-credentials"] == "true"
        r = c.get("/api/agents", headers={"Origin": "http://evil.example"})
        assert r.status_code == 200 and "access-control-allow-origin" not in r.headers


def test_without_cors_origin_no_cors_headers(server):
    with raw(server.url) as c:
        r = c.get("/api/agents", headers={"Origin": STUDIO})
        assert r.status_code == 200 and "access-control-allow-origin" not in r.headers


@pytest.mark.parametrize(
    "origin",
    [
        "*",
        "localhost:3000",
        "http://localhost:3000/studio",
        "ftp://x.example",
        "http://x.example?a=1",
        "http://user@x.example",
        "http://x.example:99999",
        " http://x.example",
        "http://x.example\n",
        "http://",
    ],
)
def test_bad_origins_are_refused(origin):
    with pytest.raises(InvalidCorsOrigin) as info:
        check_origins([origin])
    assert info.value.code == "SERVER_CORS_ORIGIN_INVALID"


def test_origins_are_kept_exact_and_deduplicated():
    assert check_origins(["http://localhost:3000/", "http://localhost:3000", "https://a.example:8443"]) == [
        "http://localhost:3000",
        "https://a.example:8443",
    ]


def test_serve_refuses_a_wildcard_origin_before_listening():
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "warden_server",
            "--app",
            "tests.server.warden_test_app:runtime",
            "--port",
            "0",
            "--token",
            TOKEN,
            "--cors-origin",
            "*",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2
    assert "--cors-origin '*' is refused" in r.stderr
    assert "listening" not in r.stdout
