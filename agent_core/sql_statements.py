"""SQL text as the statements it runs, each with the most dangerous kind anywhere in its tree.

A ``run_sql(query=...)`` tool is one tool name with everything in one argument; a test on
the text's first word is bypassed by ``SELECT 1; DROP TABLE t`` or a data-modifying CTE.
sqlglot splits the text into statements and parses each; a statement's ``kind`` is the
most dangerous operation found anywhere in it (``KINDS`` is the order): ``WITH d AS
(DELETE ...) SELECT`` is a delete, ``SELECT ... INTO t`` creates a table, ``EXPLAIN
ANALYZE <write>`` runs the write, ``COPY`` is what it does (``FROM STDIN`` inserts, ``TO
STDOUT`` reads, a server file or program is ``other``), a function known for side effects
(``pg_terminate_backend``, ``lo_export``, ...) is ``other``. Text that does not parse (or
exceeds a bound) is kind ``unknown``, which no rule can allow.
"""

from __future__ import annotations

import functools
import logging
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["KINDS", "MAX_SQL_BYTES", "SqlStatement", "check_dialect", "parse_sql"]

#: statement kinds from the least to the most dangerous; ``unknown`` (did not parse) stands apart.
KINDS: tuple[str, ...] = (
    "select",
    "insert",
    "update",
    "delete",
    "create",
    "alter",
    "drop",
    "truncate",
    "grant",
    "other",
)
_RANK = {k: i for i, k in enumerate(KINDS)}
#: the longest SQL text parsed (UTF-8 bytes); a longer one is one ``unknown`` statement.
MAX_SQL_BYTES = 64 * 1024
_MAX_STATEMENTS = 256
_MAX_PARENS = 64  # nesting beyond which the parser (recursive) is not trusted with the text
#: functions whose call changes something (or reads the server's files): a SELECT of one is ``other``.
SIDE_EFFECT_FUNCTIONS = frozenset(
    {
        # PostgreSQL
        "pg_terminate_backend", "pg_cancel_backend", "pg_reload_conf", "pg_rotate_logfile", "pg_promote",
        "pg_switch_wal", "pg_create_restore_point", "pg_read_file", "pg_read_binary_file", "pg_ls_dir",
        "pg_stat_file", "pg_file_write", "lo_import", "lo_export", "lo_unlink", "lo_create", "lo_put",
        "set_config", "nextval", "setval", "dblink", "dblink_exec", "pg_sleep", "pg_advisory_lock",
        "pg_advisory_xact_lock", "pg_logical_emit_message", "pg_drop_replication_slot",
        "pg_create_logical_replication_slot", "pg_create_physical_replication_slot", "query_to_xml",
        # MySQL
        "load_file", "sleep", "benchmark", "get_lock", "sys_exec", "sys_eval",
        # SQLite
        "load_extension", "writefile", "readfile", "edit", "fts3_tokenizer",
    }
)  # fmt: skip
_EXPLAIN_OPTIONS = re.compile(r"^\s*(\((?P<list>[^()]*)\)|(?P<words>(?:(?:ANALYZE|ANALYSE|VERBOSE)\s+)*))", re.I)


class _QuietFallback(logging.Filter):
    """sqlglot logs a warning each time it falls back to a ``Command``: untrusted text, many times."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "Falling back to parsing as a 'Command'" not in record.getMessage()


logging.getLogger("sqlglot").addFilter(_QuietFallback())


@dataclass(frozen=True)
class SqlStatement:
    """One statement of a SQL text. ``kind``: one of ``KINDS`` or ``unknown``; ``tables``: the tables
    it names (CTE names left out); ``has_where``: every UPDATE/DELETE in it has a WHERE (for other
    kinds: the statement has one); ``unseen``: why it can never be allowed (``unknown`` only)."""

    text: str
    kind: str
    tables: tuple[str, ...] = ()
    has_where: bool = False
    unseen: str | None = None

    def cel(self) -> dict[str, Any]:
        """``segment`` as a rule's ``when`` sees it: ``{kind, tables, has_where, text}``."""
        return {"kind": self.kind, "tables": list(self.tables), "has_where": self.has_where, "text": self.text}


_CACHE_MAX_TEXT = 4096  # texts up to this length are cached (the last 256)


def check_dialect(name: str) -> str | None:
    """None when sqlglot knows the dialect ``name``, else the problem in words."""
    from sqlglot.dialects.dialect import Dialect

    try:
        Dialect.get_or_raise(name)
    except Exception as exc:
        return str(exc).splitlines()[0][:200]
    return None


def parse_sql(text: str, dialect: str = "postgres") -> tuple[SqlStatement, ...]:
    """The statements of ``text`` in order; never raises (what does not parse is ``unknown``).
    Results of short texts are cached (statements are immutable)."""
    if isinstance(text, str) and len(text) <= _CACHE_MAX_TEXT:
        return _parse_cached(text, dialect)
    return _parse_uncached(text, dialect)


def _unknown(text: str, why: str) -> SqlStatement:
    shown = text if len(text) <= 1000 else text[:999] + "…"
    return SqlStatement(shown, "unknown", unseen=why)


def _parse_uncached(text: str, dialect: str) -> tuple[SqlStatement, ...]:
    if not isinstance(text, str):
        return (_unknown(type(text).__name__, "the query is not a string"),)
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        return (_unknown(text, "the query holds text that is not valid Unicode"),)
    if size > MAX_SQL_BYTES:
        return (_unknown(text, f"the query is {size} bytes; at most {MAX_SQL_BYTES} are parsed"),)
    from sqlglot.dialects.dialect import Dialect

    try:
        tokens = Dialect.get_or_raise(dialect).tokenize(text)
    except Exception as exc:
        return (_unknown(text, f"the query does not tokenize: {_first_line(exc)}"),)
    pieces = _split(text, tokens)
    if isinstance(pieces, str):
        return (_unknown(text, pieces),)
    if len(pieces) > _MAX_STATEMENTS:
        return (_unknown(text, f"the query has more than {_MAX_STATEMENTS} statements"),)
    out = [_statement(piece, dialect) for piece in pieces]
    if not out:  # only comments or semicolons: nothing to see, so nothing to allow
        return (_unknown(text.strip(), "the query holds no statement"),)
    return tuple(out)


_parse_cached = functools.lru_cache(maxsize=256)(_parse_uncached)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:200]


def _split(text: str, tokens: list[Any]) -> list[str] | str:
    """The statements' texts (split at top-level semicolons), or why the text is refused."""
    from sqlglot.tokens import TokenType

    pieces: list[str] = []
    start: int | None = None
    end = 0
    depth = 0
    for tok in tokens:
        if tok.token_type == TokenType.SEMICOLON:
            if start is not None:
                pieces.append(text[start : end + 1])
            start = None
            continue
        if tok.token_type == TokenType.L_PAREN:
            depth += 1
            if depth > _MAX_PARENS:
                return f"the query nests more than {_MAX_PARENS} parentheses deep"
        elif tok.token_type == TokenType.R_PAREN:
            depth = max(0, depth - 1)
        if start is None:
            start = tok.start
        end = tok.end
    if start is not None:
        pieces.append(text[start : end + 1])
    return pieces


def _statement(piece: str, dialect: str) -> SqlStatement:
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(piece, read=dialect)
    except RecursionError:
        return _unknown(piece, "the statement nests too deeply to parse")
    except Exception as exc:
        return _unknown(piece, f"the statement does not parse: {_first_line(exc)}")
    if tree is None:
        return _unknown(piece, "the statement is empty")
    if isinstance(tree, exp.Command) and str(tree.this).upper() == "EXPLAIN":
        return _explain(piece, tree, dialect)
    kind = _kind(tree)
    return SqlStatement(piece, kind, _tables(tree), _has_where(tree, kind))


def _explain(piece: str, tree: Any, dialect: str) -> SqlStatement:
    """``EXPLAIN`` plans without running (a read); with ``ANALYZE`` it runs the statement: its kind."""
    rest = tree.expression.this if tree.expression is not None else ""
    m = _EXPLAIN_OPTIONS.match(rest)
    options = (m.group("list") or m.group("words") or "") if m else ""
    inner_text = rest[m.end() :] if m else rest
    inner = _statement(inner_text, dialect)
    if inner.kind == "unknown":
        return SqlStatement(piece, "unknown", inner.tables, inner.has_where, inner.unseen)
    analyze = re.search(r"\bANALY[SZ]E\b(?!\s*(=\s*)?(false|off|0)\b)", options, re.I) is not None
    return SqlStatement(piece, inner.kind if analyze else "select", inner.tables, inner.has_where)


def _kind(tree: Any) -> str:
    from sqlglot import exp

    best = 0
    for node in tree.walk():
        rank = _RANK[_node_kind(node, exp)]
        if rank > best:
            best = rank
            if best == len(KINDS) - 1:
                break
    return KINDS[best]


def _node_kind(node: Any, exp: Any) -> str:
    if isinstance(node, exp.Insert):
        conflict = node.args.get("conflict")
        return (
            "update" if conflict is not None and "UPDATE" in str(conflict.args.get("action", "")).upper() else "insert"
        )
    if isinstance(node, exp.Update):
        return "update"
    if isinstance(node, exp.Merge):
        return "delete" if "DELETE" in node.sql().upper() else "update"
    if isinstance(node, exp.Delete):
        return "delete"
    if isinstance(node, exp.Select):
        if node.args.get("into") is not None:
            return "create"
        if any(lock.args.get("update") for lock in node.args.get("locks") or ()):
            return "update"
        return "select"
    if isinstance(node, exp.Create):
        return "create"
    if isinstance(node, exp.Alter):
        return "alter"
    if isinstance(node, exp.Drop):
        return "drop"
    if isinstance(node, exp.TruncateTable):
        return "truncate"
    if isinstance(node, exp.Grant) or type(node).__name__ == "Revoke":
        return "grant"
    if isinstance(node, exp.Copy):
        files = [str(getattr(f, "this", f)).upper() for f in node.args.get("files") or ()]
        if node.args.get("kind"):  # COPY ... FROM
            return "insert" if files == ["STDIN"] else "other"
        return "select" if files == ["STDOUT"] else "other"
    if isinstance(node, exp.Func):
        name = (node.name if isinstance(node, exp.Anonymous) else node.sql_name()).lower()
        return "other" if name in SIDE_EFFECT_FUNCTIONS else "select"
    if isinstance(node, exp.Command | exp.Transaction | exp.Commit | exp.Rollback | exp.Set | exp.Use | exp.Pragma):
        return "other"
    if node.parent is None and not isinstance(node, exp.Query | exp.Values | exp.Describe | exp.Show):
        return "other"  # a statement of a shape not named above
    return "select"


def _tables(tree: Any) -> tuple[str, ...]:
    from sqlglot import exp

    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    seen: list[str] = []
    for t in tree.find_all(exp.Table):
        parts = [p for p in (t.catalog, t.db, t.name) if p]
        name = ".".join(parts)
        if not name or (len(parts) == 1 and name.lower() in ctes) or name in seen:
            continue
        seen.append(name)
    return tuple(seen)


def _has_where(tree: Any, kind: str) -> bool:
    from sqlglot import exp

    writes = [n for n in tree.find_all(exp.Update, exp.Delete)]
    if writes:
        return all(n.args.get("where") is not None for n in writes)
    return tree.args.get("where") is not None
