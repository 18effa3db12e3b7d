"""Generate ``warden_client/_sync.py`` (the blocking client) from ``warden_client/_async.py``.

    .venv/bin/python scripts/gen_sync_client.py           # rewrite _sync.py
    .venv/bin/python scripts/gen_sync_client.py --check   # exit 1 if _sync.py is not current

``unasync`` drops ``async``/``await`` and renames tokens (``AsyncIterator`` -> ``Iterator``,
``__aenter__`` -> ``__enter__``, plus the replacements below); ruff then sorts the imports and
lays the result out as the rest of the tree. ``tests/server/test_sync_client_generated.py`` runs the
same generation in memory and compares.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import tokenize_rt
import unasync

REPO = Path(__file__).resolve().parents[1]
ASYNC = REPO / "warden_client" / "_async.py"
SYNC = REPO / "warden_client" / "_sync.py"

REPLACEMENTS = {
    # the client's own names
    "WardenClient": "SyncWardenClient",
    "RemoteAgent": "SyncRemoteAgent",
    "RemoteAgentStream": "SyncAgentStream",
    # httpx / httpx-sse / asyncio
    "AsyncClient": "Client",
    "AsyncBaseTransport": "BaseTransport",
    "aiter_sse": "iter_sse",
    "aread": "read",
    "aclose": "close",
    "asyncio": "threading",  # only asyncio.Lock is used: threading.Lock
    "asleep": "sleep",  # warden_client._common has both
}

HEADER = '''"""``SyncWardenClient``: the blocking client (scripts, notebooks, threads).

GENERATED from ``_async.py`` by ``scripts/gen_sync_client.py`` (unasync): do not edit by hand.
"""
'''


def _ruff() -> str:
    exe = Path(sys.executable).with_name("ruff")
    return str(exe) if exe.exists() else "ruff"


def generate(source: str | None = None) -> str:
    """The text ``_sync.py`` must have for ``source`` (default: the current ``_async.py``)."""
    if source is None:
        source = ASYNC.read_text(encoding="utf-8")
    rule = unasync.Rule("/_async/", "/_sync/", additional_replacements=REPLACEMENTS)
    tokens = rule._unasync_tokens(tokenize_rt.src_to_tokens(source))
    text = tokenize_rt.tokens_to_src(tokens)
    # The module docstring says which client this is.
    assert text.startswith('"""'), "_async.py must start with its docstring"
    end = text.index('"""', 3) + 3
    text = HEADER + text[end:].lstrip("\n").join(["\n", ""])
    for args in (["check", "--select", "I", "--fix-only", "--quiet"], ["format"]):  # sort imports, then lay out
        text = subprocess.run(
            [_ruff(), *args, "--stdin-filename", str(SYNC), "-"],
            input=text,
            capture_output=True,
            text=True,
            cwd=REPO,
            check=True,
        ).stdout
    return text


def main(argv: list[str]) -> int:
    text = generate()
    if "--check" in argv:
        if SYNC.read_text(encoding="utf-8") != text:
            print(f"{SYNC.relative_to(REPO)} is not current: run scripts/gen_sync_client.py", file=sys.stderr)
            return 1
        return 0
    SYNC.write_text(text, encoding="utf-8")
    print(f"wrote {SYNC.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
