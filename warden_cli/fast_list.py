"""``warden runs list`` on a SQLite file, answered before typer, asyncio or agent_core are imported.

Listing is the command people run in loops and scripts, so it must start about as fast
as Python itself (bench/cli_startup.py). The entry point (``warden_cli.main.main``) tries this
first: plain options only (``--db``, ``--json``, the filters, ``--page``, ``--per-page``),
read synchronously with ``SqliteStore.list_suspended_now`` (the store's own query), rows
shaped by ``warden_cli.headless``. Anything else (``--app``, ``--server`` or ``$WARDEN_SERVER``, a
PostgreSQL URL, ``--help``, a value out of range, a schema to migrate, a four-eyes call whose
votes are to be read) returns False and
the typer command runs, which prints the same table (``render_list`` is shared).
"""

from __future__ import annotations

import os
import sys
from typing import Any

#: how each kind of pending call is shown (``interrupted``: its tool started, no result was stored).
KIND_SHOWN = {"approval": "approval", "suspend": "input", "interrupted": "interrupted"}

_VALUED = {"--db": "db", "--thread": "thread", "--resource": "resource", "--agent": "agent"}
_INTS = {"--page": "page", "--per-page": "per_page"}


def clean(value: Any) -> str:
    """Untrusted text for one terminal line; printable ASCII needs no escaping (and no ``regex``)."""
    text = str(value)
    if text.isascii() and text.isprintable():
        return text
    from tui.untrusted import escape_unsafe

    return escape_unsafe(text, multiline=False)


def page_count(total: int, per_page: int) -> int:
    return max(1, -(-total // per_page))


def page_line(shown: int, total: int, page: int, per_page: int) -> str:
    """``(50 of 2000 runs, page 1 of 40)``: pages numbered from 1, as in the console."""
    return f"({shown} of {total} runs, page {page} of {page_count(total, per_page)})"


def _expires(when: str | None, now: Any) -> str:
    """``in 9m`` / ``overdue 2m`` / ``-``."""
    from datetime import datetime

    from tui.formatting import format_age

    if not when:
        return "-"
    left = (datetime.fromisoformat(when) - now).total_seconds()
    return f"in {format_age(left)}" if left >= 0 else f"overdue {format_age(-left)}"


def render_list(runs: list[dict[str, Any]], total: int, *, page: int, per_page: int, as_json: bool) -> str:
    """The output of ``warden runs list`` (``page`` from 1), without its final newline."""
    if as_json:
        import json

        data = {
            "total": total,
            "page": page,
            "pages": page_count(total, per_page),
            "per_page": per_page,
            "runs": runs,
        }
        return json.dumps(data, ensure_ascii=True, indent=2)
    if not runs:
        return (
            "no pending runs" if total == 0 else f"no pending runs on this page {page_line(0, total, page, per_page)}"
        )
    from datetime import UTC, datetime

    from tui.formatting import format_age

    now = datetime.now(UTC)
    ruled = any(c.get("policy_rule") or c.get("approvers_required", 1) > 1 for r in runs for c in r["tool_calls"])
    header = ("RUN", "AGENT", "THREAD", "TOOL", "KIND", "AGE", "EXPIRES", "FINGERPRINT", "TOOL CALL")
    rows: list[tuple[str, ...]] = [(*header, "POLICY") if ruled else header]
    for run in runs:
        age = format_age((now - datetime.fromisoformat(run["suspended_at"])).total_seconds())
        for call in run["tool_calls"]:
            rows.append(
                (
                    clean(run["run_id"]),
                    clean(run["agent_id"]),
                    clean(run["thread_id"] or "-"),
                    clean(call["tool_name"]),
                    KIND_SHOWN.get(call.get("kind", ""), "approval"),
                    age,
                    _expires(call.get("expires_at"), now),
                    clean(call["fingerprint"].removeprefix("sha256:")[:12]),
                    clean(call["tool_call_id"]),
                )
                + ((_policy(call),) if ruled else ())
            )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    if total > per_page or page > 1:
        lines.append(page_line(len(runs), total, page, per_page))
    return "\n".join(lines)


def _policy(call: dict[str, Any]) -> str:
    """``big-refunds 1/2`` (the rule that gated the call; votes of a four-eyes call), or ``-``."""
    rule = clean(call["policy_rule"]) if call.get("policy_rule") else "-"
    required = call.get("approvers_required", 1)
    return f"{rule} {len(call.get('approvals') or [])}/{required}" if required > 1 else rule


def _parse(args: list[str]) -> dict[str, Any] | None:
    """The plain options of ``runs list``; None for anything else (typer then parses it)."""
    opts: dict[str, Any] = {"as_json": False, "page": 1, "per_page": 50}
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, value = arg.partition("=")
        if arg == "--json":
            opts["as_json"] = True
            i += 1
            continue
        if name not in _VALUED and name not in _INTS:
            return None
        if not eq:
            if i + 1 >= len(args):
                return None
            value = args[i + 1]
            i += 1
        i += 1
        if name in _VALUED:
            opts[_VALUED[name]] = value
            continue
        try:
            opts[_INTS[name]] = int(value)
        except ValueError:
            return None
    if not 1 <= opts["per_page"] <= 1000:
        return None
    return opts


def fast_runs_list(argv: list[str]) -> bool:
    """Answer ``warden runs list [plain options]`` on a SQLite file; False to let typer handle it."""
    if argv[:2] != ["runs", "list"]:
        return False
    opts = _parse(argv[2:])
    if opts is None or (opts.get("db") is None and os.environ.get("WARDEN_SERVER")):
        return False
    if opts["page"] < 1:
        sys.stderr.write(f"warden: --page {opts['page']}: pages are numbered from 1 (page 1 is the newest)\n")
        sys.exit(2)
    db = opts.get("db") or os.environ.get("WARDEN_DB")
    if db is None:
        from platformdirs import user_data_dir  # as warden_demo.runtime_choice.default_db_path, without its dataclass

        db = os.path.join(user_data_dir("warden", appauthor=False), "warden.db")
    if db.lower().startswith(("postgresql://", "postgres://", "sqlite:", "memory:")):
        return False
    path = os.path.expanduser(db)
    page, per_page = opts["page"], opts["per_page"]
    if not os.path.exists(path):
        runs: list[dict[str, Any]] = []
        total = 0
    else:
        from storage.errors import WardenError
        from storage.sqlite import SqliteStore

        try:
            listed = SqliteStore(path).list_suspended_now(
                agent_id=opts.get("agent"),
                thread_id=opts.get("thread"),
                resource_id=opts.get("resource"),
                page=page - 1,
                per_page=per_page,
            )
        except WardenError as error:
            sys.stderr.write(f"warden: {error.code}: {error}\n")
            sys.exit(1)
        if listed is None:
            return False  # a schema to migrate: the store does it
        from warden_cli.headless import run_row_to_json

        rows, total = listed
        if any(c.approvers_required > 1 for r in rows for c in r.calls):
            return False  # a four-eyes call: its votes are in the audit log, which the store reads
        runs = [run_row_to_json(r) for r in rows]
    sys.stdout.write(render_list(runs, total, page=page, per_page=per_page, as_json=opts["as_json"]) + "\n")
    sys.stdout.flush()
    return True
