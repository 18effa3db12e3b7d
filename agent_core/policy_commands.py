"""Rules that see every command inside a shell line or SQL text (DESIGN.md "Commands, not tool names").

A policy's ``[commands]`` table (``CommandTable``) names the argument of each tool that
holds a shell command line (``shell``) or SQL text (``sql``). That argument is cut into
segments (``agent_core.shell_segments``, ``agent_core.sql_statements``); a rule with
``commands = [[argv prefix], ...]`` or ``statements = [kinds]`` matches each segment, and
the segments combine per call: ``deny`` if any segment is denied, else ``ask`` if any
asks, ``allow`` only when every segment is allowed. A segment that cannot be seen
statically is never allowed (``ask`` at least).

``CommandGrant`` is the matching half of a grant ("always allow ``git status``"): it covers
a call only when every segment of its command starts with a granted prefix (or has a
granted statement kind) and nothing in it is unseen.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from agent_core.shell_segments import WRAPPER_PROGRAMS, ShellSegment, parse_shell
from agent_core.sql_statements import KINDS, SqlStatement, check_dialect, parse_sql

__all__ = [
    "CommandGrant",
    "CommandTable",
    "CommandsInvalid",
    "Segment",
    "SegmentDecision",
    "command_grant_covers",
    "segment_prefix",
]

Language = Literal["shell", "sql"]
Segment = ShellSegment | SqlStatement
STATEMENT_KINDS: tuple[str, ...] = (*KINDS, "unknown")
_MAX_PREFIX_TOKENS = 32
_MAX_TOKEN = 1024
_MAX_PREFIXES = 256


class CommandsInvalid(ValueError):
    """A ``[commands]`` table, a rule's ``commands``/``statements`` or a command grant that cannot be used."""


@dataclass(frozen=True)
class CommandTable:
    """Which argument of which tool holds a command: ``shell`` and ``sql`` map tool name -> argument."""

    shell: Mapping[str, str] = field(default_factory=dict)
    sql: Mapping[str, str] = field(default_factory=dict)
    sql_dialect: str = "postgres"

    @classmethod
    def from_mapping(cls, data: Any) -> CommandTable:
        """The TOML ``[commands]`` table's shape; ``CommandsInvalid`` for anything else."""
        if not isinstance(data, Mapping):
            raise CommandsInvalid(f"'commands' must be a table, not {type(data).__name__}")
        unknown = set(data) - {"shell", "sql", "sql_dialect"}
        if unknown:
            raise CommandsInvalid(
                f"unknown key(s) in [commands]: {', '.join(sorted(map(str, unknown)))} (known: shell, sql, sql_dialect)"
            )
        tables: dict[str, dict[str, str]] = {}
        for key in ("shell", "sql"):
            raw = data.get(key, {})
            if not isinstance(raw, Mapping) or not all(
                isinstance(k, str) and k and isinstance(v, str) and v and len(k) <= _MAX_TOKEN and len(v) <= _MAX_TOKEN
                for k, v in raw.items()
            ):
                raise CommandsInvalid(
                    f'[commands].{key} must map tool names to argument names, like {{ bash = "command" }}'
                )
            tables[key] = dict(raw)
        both = set(tables["shell"]) & set(tables["sql"])
        if both:
            raise CommandsInvalid(f"tool(s) {', '.join(sorted(both))} are declared both shell and sql in [commands]")
        dialect = data.get("sql_dialect", "postgres")
        if not isinstance(dialect, str) or not dialect:
            raise CommandsInvalid('[commands].sql_dialect must be a sqlglot dialect name, like "postgres"')
        problem = check_dialect(dialect)
        if problem:
            raise CommandsInvalid(f"[commands].sql_dialect {dialect!r}: {problem}")
        return cls(tables["shell"], tables["sql"], dialect)

    def __bool__(self) -> bool:
        return bool(self.shell or self.sql)

    def body(self) -> dict[str, Any]:
        """The table with its default filled in (hashed into the policy's version when not empty)."""
        return {"shell": dict(self.shell), "sql": dict(self.sql), "sql_dialect": self.sql_dialect}

    def declared(self, tool: str) -> tuple[Language, str] | None:
        """``(language, argument)`` when ``tool`` holds a command, else None."""
        if tool in self.shell:
            return "shell", self.shell[tool]
        if tool in self.sql:
            return "sql", self.sql[tool]
        return None

    def segments(self, tool: str, args: Mapping[str, Any]) -> tuple[Language, tuple[Segment, ...]] | None:
        """The segments of ``tool``'s command argument in ``args`` (None: not a command tool). A missing
        or non-string argument is one segment that can never be allowed."""
        found = self.declared(tool)
        if found is None:
            return None
        language, argument = found
        return language, split(
            language, args.get(argument) if isinstance(args, Mapping) else None, self.sql_dialect, argument
        )


def split(language: Language, value: Any, dialect: str, argument: str = "command") -> tuple[Segment, ...]:
    """``value`` cut into segments of ``language``."""
    if not isinstance(value, str):
        why = f"the argument {argument!r} is {'missing' if value is None else 'not a string'}"
        if language == "shell":
            return (ShellSegment("", (), unseen=why),)
        return (SqlStatement("", "unknown", unseen=why),)
    if language == "shell":
        return parse_shell(value)
    return parse_sql(value, dialect)


def check_prefixes(raw: Any, where: str) -> tuple[tuple[str, ...], ...]:
    """A rule's ``commands`` (or a grant's ``prefixes``): a list of non-empty lists of exact tokens."""
    if not isinstance(raw, Sequence) or isinstance(raw, str) or not raw or len(raw) > _MAX_PREFIXES:
        raise CommandsInvalid(f'{where} must be a list of argv prefixes, like [["git", "status"], ["ls"]]')
    out: list[tuple[str, ...]] = []
    for prefix in raw:
        if (
            isinstance(prefix, str)
            or not isinstance(prefix, Sequence)
            or not 0 < len(prefix) <= _MAX_PREFIX_TOKENS
            or not all(isinstance(t, str) and 0 < len(t) <= _MAX_TOKEN for t in prefix)
        ):
            raise CommandsInvalid(
                f"{where}: each prefix is a list of 1 to {_MAX_PREFIX_TOKENS} non-empty strings, not {prefix!r:.80}"
            )
        out.append(tuple(prefix))
    return tuple(out)


def check_statements(raw: Any, where: str) -> tuple[str, ...]:
    """A rule's ``statements`` (or a grant's): a list of kinds from ``STATEMENT_KINDS``."""
    if not isinstance(raw, Sequence) or isinstance(raw, str) or not raw:
        raise CommandsInvalid(f'{where} must be a list of statement kinds, like ["select"]')
    bad = [k for k in raw if k not in STATEMENT_KINDS]
    if bad:
        raise CommandsInvalid(f"{where}: unknown statement kind(s) {bad!r:.80} (known: {', '.join(STATEMENT_KINDS)})")
    return tuple(raw)


def segment_matches(segment: Segment, prefixes: Sequence[Sequence[str]] | None, kinds: Sequence[str] | None) -> bool:
    """Whether a rule's ``commands`` (shell) or ``statements`` (SQL) covers this segment."""
    if isinstance(segment, ShellSegment):
        return prefixes is not None and any(segment.starts_with(p) for p in prefixes)
    return kinds is not None and segment.kind in kinds


class SegmentIndex:
    """The segment rules of a policy indexed by program (shell) and kind (SQL): a segment is compared
    only with the prefixes that start with its program, whatever the number of rules."""

    def __init__(self, rules: Sequence[Any]) -> None:
        self._programs: dict[str, list[tuple[int, tuple[str, ...]]]] = {}
        self._kinds: dict[str, list[int]] = {}
        for i, rule in enumerate(rules):
            for prefix in rule.commands or ():
                self._programs.setdefault(prefix[0], []).append((i, tuple(prefix)))
            for kind in rule.statements or ():
                self._kinds.setdefault(kind, []).append(i)

    def matching(self, segment: Segment) -> list[int]:
        """The indexes (in rule order) of the rules whose ``commands``/``statements`` cover ``segment``."""
        if isinstance(segment, SqlStatement):
            return self._kinds.get(segment.kind, [])
        argv = segment.argv
        if not argv:
            return []
        found = {i for i, p in self._programs.get(argv[0], ()) if argv[: len(p)] == p}
        return sorted(found)


@dataclass(frozen=True)
class SegmentDecision:
    """One entry of ``PolicyDecision.segments``: what the policy said about one segment.

    ``argv`` for a shell segment, ``kind`` for a SQL statement; ``rule_id`` None when the
    default applied (or the segment was unseen); ``reason``: the rule's reason, or why the
    segment can never be allowed."""

    text: str
    decision: str
    rule_id: str | None
    argv: tuple[str, ...] | None = None
    kind: str | None = None
    reason: str | None = None
    unseen: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"text": self.text, "decision": self.decision, "rule_id": self.rule_id}
        if self.argv is not None:
            out["argv"] = list(self.argv)
        if self.kind is not None:
            out["kind"] = self.kind
        if self.reason is not None:
            out["reason"] = self.reason
        if self.unseen is not None:
            out["unseen"] = self.unseen
        return out

    def describe(self) -> str:
        """``allow  git status  (rule git-read)``: one line of ``warden policy explain``."""
        what = f"[{self.kind}] {self.text}" if self.kind else (self.text or shlex.join(self.argv or ()))
        rule = f"rule {self.rule_id}" if self.rule_id else "default"
        why = f": {self.reason}" if self.reason else ""
        return f"{self.decision:<5}  {what or '(empty)'}  ({rule}{why})"


def segment_prefix(segment: ShellSegment) -> tuple[str, ...]:
    """The prefix the console offers to grant for a segment: the program and, for a tool with
    subcommands (``git status``, ``npm test``), its first word that is not an option."""
    argv = segment.argv
    if not argv:
        return ()
    if argv[0] in WRAPPER_PROGRAMS:  # `timeout 10 …`: the wrapper itself; what it runs is a segment of its own
        return argv[:1]
    if (
        len(argv) > 1
        and not argv[1].startswith("-")
        and "/" not in argv[1]
        and "." not in argv[1]
        and "=" not in argv[1]
    ):
        return argv[:2]
    return argv[:1]


@dataclass(frozen=True)
class CommandGrant:
    """What a grant for a command tool covers: the ``argument`` holding the command, and either
    argv ``prefixes`` (shell) or statement ``statements`` (SQL, parsed in ``dialect``).

    Stored with the grant (``command_match``), so it holds in every process whatever policy a
    run has. A policy ``deny`` still wins: a grant only ever covers a call that was gated."""

    argument: str
    prefixes: tuple[tuple[str, ...], ...] = ()
    statements: tuple[str, ...] = ()
    dialect: str = "postgres"

    @property
    def language(self) -> Language:
        return "sql" if self.statements else "shell"

    @classmethod
    def from_json(cls, data: Any) -> CommandGrant:
        """``{"argument": "command", "prefixes": [["git", "status"]]}`` or ``{"argument": "query",
        "statements": ["select"], "dialect": "postgres"}``; ``CommandsInvalid`` otherwise."""
        if not isinstance(data, Mapping):
            raise CommandsInvalid("command_match must be an object with 'argument' and 'prefixes' or 'statements'")
        unknown = set(data) - {"argument", "prefixes", "statements", "dialect"}
        if unknown:
            raise CommandsInvalid(f"command_match: unknown key(s) {', '.join(sorted(map(str, unknown)))}")
        argument = data.get("argument")
        if not isinstance(argument, str) or not argument or len(argument) > _MAX_TOKEN:
            raise CommandsInvalid("command_match needs 'argument': the name of the argument holding the command")
        if ("prefixes" in data) == ("statements" in data):
            raise CommandsInvalid("command_match has either 'prefixes' (a shell command) or 'statements' (SQL)")
        if "prefixes" in data:
            if "dialect" in data:
                raise CommandsInvalid("command_match: 'dialect' goes with 'statements' (SQL) only")
            return cls(argument, prefixes=check_prefixes(data["prefixes"], "command_match.prefixes"))
        kinds = check_statements(data["statements"], "command_match.statements")
        if "unknown" in kinds:
            raise CommandsInvalid("command_match.statements: 'unknown' (text that does not parse) is never granted")
        dialect = data.get("dialect", "postgres")
        problem = check_dialect(dialect) if isinstance(dialect, str) and dialect else "not a dialect name"
        if problem:
            raise CommandsInvalid(f"command_match.dialect {dialect!r}: {problem}")
        return cls(argument, statements=kinds, dialect=dialect)

    def to_json(self) -> dict[str, Any]:
        if self.statements:
            return {"argument": self.argument, "statements": list(self.statements), "dialect": self.dialect}
        return {"argument": self.argument, "prefixes": [list(p) for p in self.prefixes]}

    def covers(self, args: Mapping[str, Any]) -> bool:
        """True only when every segment of the command is granted and none is unseen."""
        segments = split(self.language, args.get(self.argument), self.dialect, self.argument)
        for seg in segments:
            if seg.unseen is not None:
                return False
            if isinstance(seg, ShellSegment):
                if not any(seg.starts_with(p) for p in self.prefixes):
                    return False
            elif seg.kind not in self.statements:
                return False
        return bool(segments)

    def describe(self) -> str:
        """In words: "whose command is only `git status …` or `ls …`"."""
        if self.statements:
            return f"whose {self.argument} runs only {' or '.join(s.upper() for s in self.statements)} statements"
        shown = " or ".join(f"`{shlex.join(p)} …`" for p in self.prefixes)
        return f"whose {self.argument} runs only {shown}"


def command_grant_covers(command_match: Mapping[str, Any], args: Mapping[str, Any]) -> bool:
    """Whether a stored grant's ``command_match`` covers a call's validated ``args`` (an invalid
    stored value covers nothing)."""
    try:
        grant = CommandGrant.from_json(command_match)
    except CommandsInvalid:
        return False
    return grant.covers(args)
