"""Policy as data: approval rules that can be stored with a run and evaluated in any process.

A request-level *function* cannot be stored, so a run resumed elsewhere used to treat
it as "approval required". A ``Policy`` is the serializable form: rules with tool
globs, an optional CEL condition and a decision (``allow | ask | deny``). Its
``version`` is the hash of its canonical form, so the same rules give the same
version everywhere. Combining: every matching rule counts, deny > ask > allow; the
reported rule is the first matching one of the winning kind; no match gives the
default. A rule that fails to evaluate counts as ``ask`` (fail closed).
"""

from __future__ import annotations

import hashlib
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Literal, cast

from agent_core.errors import PolicyInvalid
from agent_core.policy_cel import CelError, Compiled, Engine, compile_bounded, engine
from agent_core.policy_commands import (
    CommandsInvalid,
    CommandTable,
    Segment,
    SegmentDecision,
    SegmentIndex,
    check_prefixes,
    check_statements,
    segment_matches,
)
from agent_core.shell_segments import ShellSegment
from agent_core.sql_statements import SqlStatement
from storage.canonical import canonical

__all__ = ["DECISIONS", "Policy", "PolicyDecision", "PolicyRule", "combine"]

PolicyDecisionKind = Literal["allow", "ask", "deny"]
DECISIONS: tuple[PolicyDecisionKind, ...] = ("allow", "ask", "deny")
_RANK = {"allow": 0, "ask": 1, "deny": 2}
_RULE_KEYS = {"id", "tools", "when", "decision", "approvers", "reason", "match", "not_match", "commands", "statements"}
_EXAMPLE_KEYS = {"tool", "args", "agent", "agent_path", "thread", "resource", "context"}
_MAX_RULES = 1000
_MAX_TEXT = 1024  # ids, globs and reasons


@dataclass(frozen=True)
class PolicyRule:
    """One rule. ``tools``: globs over the tool's name (None: every tool); ``approvers``: ask only."""

    id: str
    decision: str
    tools: Sequence[str] | None = None
    when: str | None = None
    approvers: int = 1
    reason: str | None = None
    match: Sequence[Mapping[str, Any]] = field(default_factory=tuple)
    not_match: Sequence[Mapping[str, Any]] = field(default_factory=tuple)
    #: argv prefixes (exact tokens) matched against each shell segment (DESIGN.md "Commands, not tool names").
    commands: Sequence[Sequence[str]] | None = None
    #: statement kinds matched against each SQL statement.
    statements: Sequence[str] | None = None

    @property
    def per_segment(self) -> bool:
        """A rule with ``commands`` or ``statements`` matches segments, not the call."""
        return self.commands is not None or self.statements is not None

    def body(self) -> dict[str, Any]:
        """The rule with every default filled in (what the version hashes and the run stores).
        ``commands`` / ``statements`` appear only when set, so older policies keep their version."""
        out = self._call_body()
        if self.commands is not None:
            out["commands"] = [list(p) for p in self.commands]
        if self.statements is not None:
            out["statements"] = list(self.statements)
        return out

    def _call_body(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "tools": list(self.tools) if self.tools is not None else ["*"],
            "when": self.when,
            "decision": self.decision,
            "approvers": self.approvers,
            "reason": self.reason,
            "match": [dict(e) for e in self.match],
            "not_match": [dict(e) for e in self.not_match],
        }


@dataclass(frozen=True)
class PolicyDecision:
    """What a policy (or several, combined) says about one call.

    ``rule_id`` is None when no rule matched (the default applied); ``approvers`` is the
    largest among the matching ``ask`` rules; ``version`` names the policy that won;
    ``error`` is set when a rule failed to evaluate (and so counted as ``ask``).
    """

    decision: PolicyDecisionKind
    rule_id: str | None
    approvers: int = 1
    reason: str | None = None
    version: str | None = None
    error: str | None = None
    #: one entry per command segment of a tool declared in ``[commands]`` (empty for other tools).
    segments: tuple[SegmentDecision, ...] = ()


@dataclass(frozen=True)
class _Candidate:
    kind: PolicyDecisionKind
    rule: PolicyRule | None
    version: str
    approvers: int
    error: str | None = None
    reason: str | None = None  # a segment's, when no rule is reported (never allowed unseen)


@dataclass
class _Verdict:
    """One policy's candidates for a call and, for a command tool, its segments' decisions."""

    candidates: list[_Candidate]
    segments: list[SegmentDecision] | None = None
    key: tuple[str, str] | None = None  # which parse the segments come from (language, text)


class Policy:
    """Rules as data. ``Policy.load(path)``, ``Policy.from_dict(d)`` or ``Policy(rules=[...], default="allow")``."""

    def __init__(
        self,
        rules: Iterable[PolicyRule | Mapping[str, Any]] = (),
        default: str = "allow",
        *,
        label: str | None = None,
        engine_name: str | None = None,
        commands: CommandTable | Mapping[str, Any] | None = None,
    ) -> None:
        if default not in DECISIONS:
            raise PolicyInvalid(f"policy default must be one of allow, ask, deny, not {default!r}")
        if label is not None and not isinstance(label, str):
            raise PolicyInvalid(f"policy label must be a string, not {type(label).__name__}")
        self.default: PolicyDecisionKind = default
        self.label = label
        self.engine: Engine = _engine(engine_name)
        built: list[PolicyRule] = []
        for i, raw in enumerate(rules):
            built.append(raw if isinstance(raw, PolicyRule) else _rule_from_mapping(raw, i))
        if len(built) > _MAX_RULES:
            raise PolicyInvalid(f"a policy has at most {_MAX_RULES} rules, this one {len(built)}")
        seen: set[str] = set()
        self._when: dict[str, Compiled | None] = {}
        self._globs: dict[str, list[str]] = {}
        for rule in built:
            _check_rule(rule)
            if rule.id in seen:
                raise PolicyInvalid(f"rule {rule.id!r}: the id is used by two rules (ids are unique)")
            seen.add(rule.id)
            self._when[rule.id] = self._compile(rule)
            self._globs[rule.id] = list(rule.tools) if rule.tools is not None else ["*"]
        self.rules: tuple[PolicyRule, ...] = tuple(built)
        self.commands: CommandTable = _command_table(commands)
        self._check_command_rules()
        self._segment_rules = SegmentIndex(self.rules)
        #: every variable some ``when`` references (None: an engine that cannot tell): what gets bound.
        self._names: frozenset[str] | None = frozenset()
        for compiled in self._when.values():
            if compiled is not None:
                self._names = None if compiled.names is None or self._names is None else self._names | compiled.names
        try:
            form = canonical(self.body())
        except Exception as exc:  # rfc8785 refuses what JSON cannot hold (TOML dates, NaN)
            raise PolicyInvalid(f"the policy holds a value JSON cannot represent (a TOML date?): {exc}") from None
        self.version = "sha256:" + hashlib.sha256(form).hexdigest()

    # -- building ---------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, engine_name: str | None = None) -> Policy:
        """From the TOML document's shape: ``label``, ``default``, ``rules`` (a list of tables)."""
        if not isinstance(data, Mapping):
            raise PolicyInvalid(f"a policy is a table (mapping), not {type(data).__name__}")
        unknown = set(data) - {"label", "default", "rules", "commands"}
        if unknown:
            raise PolicyInvalid(
                f"unknown policy key(s): {', '.join(sorted(unknown))} (known: label, default, rules, commands)"
            )
        rules = data.get("rules", [])
        if not isinstance(rules, list):
            raise PolicyInvalid("policy 'rules' must be a list of tables ([[rules]] in TOML)")
        return cls(
            rules,
            data.get("default", "allow"),
            label=data.get("label"),
            engine_name=engine_name,
            commands=data.get("commands"),
        )

    @classmethod
    def load(cls, path: str | Path, *, engine_name: str | None = None) -> Policy:
        """Read a TOML policy file; a missing, unreadable or invalid file raises ``PolicyInvalid``."""
        try:
            text = Path(path).read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise PolicyInvalid(f"cannot read policy file {str(path)!r}: {exc}") from exc
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise PolicyInvalid(f"policy file {str(path)!r} is not valid TOML: {exc}") from exc
        try:
            return cls.from_dict(data, engine_name=engine_name)
        except PolicyInvalid as exc:
            raise PolicyInvalid(f"policy file {str(path)!r}: {exc.message}") from exc

    def body(self) -> dict[str, Any]:
        """``{default, rules}`` with every default filled in: hashed for ``version``, stored with runs.
        A non-empty ``[commands]`` table is part of it (``commands``)."""
        out: dict[str, Any] = {"default": self.default, "rules": [r.body() for r in self.rules]}
        if self.commands:
            out["commands"] = self.commands.body()
        return out

    def to_dict(self) -> dict[str, Any]:
        out = self.body()
        if self.label is not None:
            out["label"] = self.label
        return out

    def __repr__(self) -> str:
        label = f" {self.label!r}" if self.label else ""
        return f"<Policy{label} {self.version[:19]}… {len(self.rules)} rules, default {self.default}>"

    def _check_command_rules(self) -> None:
        """A rule with ``commands`` needs a shell tool in ``[commands]`` (``statements``: a SQL one);
        ``segment`` is bound only for such rules, so another rule naming it is refused."""
        for rule in self.rules:
            name = f"rule {rule.id!r}"
            if rule.commands is not None and not self.commands.shell:
                raise PolicyInvalid(
                    f"{name}: 'commands' needs a shell tool in [commands] (shell = {{ bash = \"command\" }})"
                )
            if rule.statements is not None and not self.commands.sql:
                raise PolicyInvalid(
                    f"{name}: 'statements' needs a SQL tool in [commands] (sql = {{ run_sql = \"query\" }})"
                )
            compiled = self._when[rule.id]
            if not rule.per_segment and compiled is not None and compiled.names and "segment" in compiled.names:
                raise PolicyInvalid(f"{name}: 'segment' is bound only for rules with 'commands' or 'statements'")

    def _compile(self, rule: PolicyRule) -> Compiled | None:
        if rule.when is None:
            return None
        try:
            return compile_bounded(rule.when, self.engine)
        except CelError as exc:
            raise PolicyInvalid(f"rule {rule.id!r}: its 'when' does not compile: {exc}") from None

    # -- evaluating -------------------------------------------------------------------------
    def holds(self, rule: PolicyRule, variables: Mapping[str, Any], _bound: list[Any] | None = None) -> bool:
        """Whether ``rule``'s tools and ``when`` hold for these CEL variables (raises ``CelError``).

        ``_bound``: a one-slot cache of the engine's activation, shared by the rules of one evaluation."""
        tool = variables.get("tool")
        if not isinstance(tool, str) or not any(fnmatchcase(tool, g) for g in self._globs[rule.id]):
            return False
        compiled = self._when[rule.id]
        if compiled is None:
            return True
        if _bound is None:
            _bound = []
        if not _bound:
            _bound.append(self.engine.prepare(dict(variables), self._names))
        value = compiled(_bound[0])
        if not isinstance(value, bool):
            raise CelError(f"'when' evaluated to {type(value).__name__} {value!r:.60}, not a bool")
        return value

    def rule_holds(self, rule: PolicyRule, variables: Mapping[str, Any]) -> bool:
        """Whether ``rule`` matches this call: for a rule with ``commands``/``statements``, whether
        it matches at least one of the call's segments (what a self-test checks)."""
        if not rule.per_segment:
            return self.holds(rule, variables)
        tool = variables.get("tool")
        found = self.commands.segments(tool, variables.get("args") or {}) if isinstance(tool, str) else None
        if found is None:
            return False
        for seg in found[1]:
            if segment_matches(seg, rule.commands, rule.statements):
                if self.holds(rule, {**variables, "segment": seg.cel()}):
                    return True
        return False

    def _candidates(self, variables: Mapping[str, Any]) -> list[_Candidate]:
        return self._verdict(variables).candidates

    def _verdict(self, variables: Mapping[str, Any]) -> _Verdict:
        out: list[_Candidate] = []
        bound: list[Any] = []
        for rule in self.rules:
            if not rule.per_segment:
                candidate = self._rule_candidate(rule, variables, bound)
                if candidate is not None:
                    out.append(candidate)
        tool = variables.get("tool")
        found = self.commands.segments(tool, variables.get("args") or {}) if isinstance(tool, str) else None
        if found is None:
            return _Verdict(out or [_Candidate(self.default, None, self.version, 1)])
        language, segments = found
        decided = [self._segment(seg, variables) for seg in segments]
        out.append(_aggregate(decided, self.version))
        argument = self.commands.declared(cast(str, tool))
        text = (variables.get("args") or {}).get(argument[1]) if argument else None
        return _Verdict(out, [d for d, _ in decided], (language, text if isinstance(text, str) else repr(text)))

    def _rule_candidate(self, rule: PolicyRule, variables: Mapping[str, Any], bound: list[Any]) -> _Candidate | None:
        """What ``rule`` says when it holds (None when it does not); an evaluation error is ``ask``."""
        try:
            if not self.holds(rule, variables, bound):
                return None
        except CelError as exc:
            return _Candidate("ask", rule, self.version, rule.approvers, f"rule {rule.id!r}: {exc}")
        kind = cast(PolicyDecisionKind, rule.decision)
        return _Candidate(kind, rule, self.version, rule.approvers if kind == "ask" else 1)

    def _segment(self, seg: Segment, variables: Mapping[str, Any]) -> tuple[SegmentDecision, _Candidate]:
        """One segment under this policy's segment rules: deny > ask > allow, else the default;
        a segment that is not fully seen is never allowed."""
        found: list[_Candidate] = []
        with_segment: dict[str, Any] | None = None
        bound: list[Any] = []
        for index in self._segment_rules.matching(seg):
            if with_segment is None:
                with_segment = {**variables, "segment": seg.cel()}
            candidate = self._rule_candidate(self.rules[index], with_segment, bound)
            if candidate is not None:
                found.append(candidate)
        if not found:
            found = [_Candidate(self.default, None, self.version, 1)]
        top = max(_RANK[c.kind] for c in found)
        chosen: _Candidate = next(c for c in found if _RANK[c.kind] == top)
        approvers = max([c.approvers for c in found if c.kind == "ask"] or [1])
        errors = "; ".join(c.error for c in found if c.error) or None
        if seg.unseen is not None and (chosen.kind == "allow" or (chosen.kind == "ask" and chosen.rule is None)):
            chosen = _Candidate("ask", None, self.version, approvers, errors, f"never allowed unseen: {seg.unseen}")
        elif chosen.kind != "ask":
            approvers = 1
        else:
            chosen = _Candidate("ask", chosen.rule, self.version, approvers, errors, chosen.reason)
        if errors and chosen.error is None:
            chosen = _Candidate(chosen.kind, chosen.rule, self.version, chosen.approvers, errors, chosen.reason)
        rule = chosen.rule
        entry = SegmentDecision(
            text=seg.text,
            decision=chosen.kind,
            rule_id=rule.id if rule is not None else None,
            argv=seg.argv if isinstance(seg, ShellSegment) else None,
            kind=seg.kind if isinstance(seg, SqlStatement) else None,
            reason=(rule.reason if rule is not None else None) or chosen.reason or chosen.error,
            unseen=seg.unseen,
        )
        return entry, chosen

    def evaluate(
        self,
        tool: str,
        args: Mapping[str, Any] | None = None,
        *,
        agent_id: str | None = None,
        agent_path: Sequence[str] | None = None,
        thread_id: str | None = None,
        resource_id: str | None = None,
        request_context: Mapping[str, Any] | None = None,
    ) -> PolicyDecision:
        """What this policy decides for one call (see the module docstring for the combining rule)."""
        variables = cel_variables(
            tool,
            args,
            agent_id=agent_id,
            agent_path=agent_path,
            thread_id=thread_id,
            resource_id=resource_id,
            request_context=request_context,
        )
        return combine([self], variables)

    def check(self) -> list[str]:
        """The failing self-tests (``match`` / ``not_match``), one line each; empty when all hold."""
        failures: list[str] = []
        for rule in self.rules:
            for want, examples in ((True, rule.match), (False, rule.not_match)):
                for i, example in enumerate(examples):
                    label = f"rule {rule.id!r} {'match' if want else 'not_match'}[{i}]"
                    try:
                        got = self.rule_holds(rule, _example_variables(example))
                    except CelError as exc:
                        failures.append(f"{label}: evaluation failed: {exc}")
                        continue
                    if got != want:
                        expectation = "should match but does not" if want else "should not match but does"
                        failures.append(f"{label}: {expectation} ({_describe(example)})")
        return failures


def combine(policies: Sequence[Policy], variables: Mapping[str, Any]) -> PolicyDecision:
    """Every matching rule of every policy counts: deny > ask > allow (a policy with no match: its default).
    A command tool's segments count as one candidate per policy (see ``agent_core.policy_commands``)."""
    verdicts = [p._verdict(variables) for p in policies]
    candidates = [c for v in verdicts for c in v.candidates]
    top = max(_RANK[c.kind] for c in candidates)
    winners = [c for c in candidates if _RANK[c.kind] == top]
    chosen = next((c for c in winners if c.rule is not None), winners[0])
    errors = [c.error for c in candidates if c.error]
    approvers = max([c.approvers for c in candidates if c.kind == "ask"] or [1])
    rule = chosen.rule
    return PolicyDecision(
        decision=chosen.kind,
        rule_id=rule.id if rule is not None else None,
        approvers=approvers if chosen.kind == "ask" else 1,
        reason=(rule.reason if rule is not None else chosen.reason) or chosen.error,
        version=chosen.version,
        error="; ".join(errors) or None,
        segments=_merged_segments(verdicts),
    )


def _aggregate(decided: Sequence[tuple[SegmentDecision, _Candidate]], version: str) -> _Candidate:
    """Per call: deny if any segment is denied, else ask if any asks, allow only if every one is allowed.
    The reported segment is the first of the winning kind; approvers: the largest asked."""
    top = max(_RANK[c.kind] for _, c in decided)
    chosen = next(c for _, c in decided if _RANK[c.kind] == top)
    errors = "; ".join(dict.fromkeys(c.error for _, c in decided if c.error)) or None
    approvers = max([c.approvers for _, c in decided if c.kind == "ask"] or [1]) if chosen.kind == "ask" else 1
    return _Candidate(chosen.kind, chosen.rule, version, approvers, errors, chosen.reason)


def _merged_segments(verdicts: Sequence[_Verdict]) -> tuple[SegmentDecision, ...]:
    """The segments as every policy that cut the same text saw them, merged per segment (deny > ask
    > allow, the first policy's rule on a tie); policies that cut another argument are not listed."""
    first = next((v for v in verdicts if v.segments is not None), None)
    if first is None or first.segments is None:
        return ()
    merged = list(first.segments)
    for other in verdicts:
        if other is first or other.segments is None or other.key != first.key or len(other.segments) != len(merged):
            continue
        for i, seg in enumerate(other.segments):
            if _RANK[seg.decision] > _RANK[merged[i].decision]:
                merged[i] = seg
    return tuple(merged)


def cel_variables(
    tool: str,
    args: Mapping[str, Any] | None,
    *,
    agent_id: str | None,
    agent_path: Sequence[str] | None = None,
    thread_id: str | None = None,
    resource_id: str | None = None,
    request_context: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The variables a rule's ``when`` sees (DESIGN.md "CEL variables")."""
    return {
        "tool": tool,
        "args": dict(args or {}),
        "agent": agent_id,
        "agent_path": list(agent_path) if agent_path is not None else ([agent_id] if agent_id else []),
        "thread": thread_id,
        "resource": resource_id,
        "context": dict(request_context or {}),
    }


def _command_table(raw: CommandTable | Mapping[str, Any] | None) -> CommandTable:
    if raw is None:
        return CommandTable()
    if isinstance(raw, CommandTable):
        raw = raw.body()
    try:
        return CommandTable.from_mapping(raw)
    except CommandsInvalid as exc:
        raise PolicyInvalid(str(exc)) from None


def _engine(name: str | None) -> Engine:
    try:
        return engine(name)
    except CelError as exc:
        raise PolicyInvalid(str(exc)) from None


def _rule_from_mapping(raw: Mapping[str, Any], index: int) -> PolicyRule:
    if not isinstance(raw, Mapping):
        raise PolicyInvalid(f"rules[{index}] must be a table, not {type(raw).__name__}")
    rid = raw.get("id")
    name = f"rule {rid!r}" if isinstance(rid, str) and rid else f"rules[{index}]"
    unknown = set(raw) - _RULE_KEYS
    if unknown:
        raise PolicyInvalid(
            f"{name}: unknown key(s) {', '.join(sorted(unknown))} (known: {', '.join(sorted(_RULE_KEYS))})"
        )
    if not isinstance(rid, str) or not rid:
        raise PolicyInvalid(f"{name}: 'id' is required (a non-empty string)")
    if "decision" not in raw:
        raise PolicyInvalid(f"{name}: 'decision' is required (allow, ask or deny)")
    for key in ("match", "not_match"):
        if not isinstance(raw.get(key, []), list):
            raise PolicyInvalid(f"{name}: '{key}' must be a list of examples")
    tools = raw.get("tools")
    if tools is not None and not isinstance(tools, list):
        raise PolicyInvalid(f"{name}: 'tools' must be a list of globs, not {type(tools).__name__}")
    segment_keys: dict[str, Any] = {}
    try:
        if "commands" in raw:
            segment_keys["commands"] = check_prefixes(raw["commands"], "'commands'")
        if "statements" in raw:
            segment_keys["statements"] = check_statements(raw["statements"], "'statements'")
    except CommandsInvalid as exc:
        raise PolicyInvalid(f"{name}: {exc}") from None
    return PolicyRule(
        id=rid,
        decision=raw["decision"],
        tools=tools,
        when=raw.get("when"),
        approvers=raw.get("approvers", 1),
        reason=raw.get("reason"),
        match=tuple(raw.get("match", [])),
        not_match=tuple(raw.get("not_match", [])),
        **segment_keys,
    )


def _check_rule(rule: PolicyRule) -> None:
    """Every way a rule can be wrong, as ``PolicyInvalid`` naming it (nothing is guessed)."""
    if not isinstance(rule.id, str) or not rule.id or len(rule.id) > 128 or not rule.id.isprintable():
        raise PolicyInvalid(f"rule id {rule.id!r:.140} must be a printable string of 1 to 128 characters")
    name = f"rule {rule.id!r}"
    if rule.decision not in DECISIONS:
        raise PolicyInvalid(f"{name}: unknown decision {rule.decision!r} (allow, ask or deny)")
    if rule.tools is not None:
        if isinstance(rule.tools, str) or not all(isinstance(g, str) and 0 < len(g) <= _MAX_TEXT for g in rule.tools):
            raise PolicyInvalid(f"{name}: 'tools' must be a list of non-empty glob strings")
    try:
        if rule.commands is not None:
            check_prefixes(rule.commands, "'commands'")
        if rule.statements is not None:
            check_statements(rule.statements, "'statements'")
    except CommandsInvalid as exc:
        raise PolicyInvalid(f"{name}: {exc}") from None
    if rule.commands is not None and rule.statements is not None:
        raise PolicyInvalid(f"{name}: a rule has 'commands' (shell) or 'statements' (SQL), not both")
    if rule.when is not None and not isinstance(rule.when, str):
        raise PolicyInvalid(f"{name}: 'when' must be a CEL expression (a string)")
    if not isinstance(rule.approvers, int) or isinstance(rule.approvers, bool) or not 1 <= rule.approvers <= 100:
        raise PolicyInvalid(f"{name}: 'approvers' must be an integer from 1 to 100, not {rule.approvers!r}")
    if rule.approvers != 1 and rule.decision != "ask":
        raise PolicyInvalid(f"{name}: 'approvers' applies to ask rules only (this one is {rule.decision})")
    if rule.reason is not None and (not isinstance(rule.reason, str) or len(rule.reason) > _MAX_TEXT):
        raise PolicyInvalid(f"{name}: 'reason' must be a string of at most {_MAX_TEXT} characters")
    for key, examples in (("match", rule.match), ("not_match", rule.not_match)):
        for i, example in enumerate(examples):
            problem = _example_problem(example)
            if problem:
                raise PolicyInvalid(f"{name}: {key}[{i}] {problem}")


def _example_problem(example: Any) -> str | None:
    if not isinstance(example, Mapping):
        return f"must be a table like {{ tool = ..., args = {{...}} }}, not {type(example).__name__}"
    unknown = set(example) - _EXAMPLE_KEYS
    if unknown:
        return f"has unknown key(s) {', '.join(sorted(unknown))} (known: {', '.join(sorted(_EXAMPLE_KEYS))})"
    if not isinstance(example.get("tool"), str):
        return "needs 'tool' (a string)"
    for key in ("args", "context"):
        if not isinstance(example.get(key, {}), Mapping):
            return f"'{key}' must be a table"
    if not isinstance(example.get("agent_path", []), list):
        return "'agent_path' must be a list"
    return None


def _example_variables(example: Mapping[str, Any]) -> dict[str, Any]:
    return cel_variables(
        example["tool"],
        example.get("args"),
        agent_id=example.get("agent"),
        agent_path=example.get("agent_path"),
        thread_id=example.get("thread"),
        resource_id=example.get("resource"),
        request_context=example.get("context"),
    )


def _describe(example: Mapping[str, Any]) -> str:
    parts = [f"tool={example['tool']!r}"]
    if example.get("args"):
        parts.append(f"args={dict(example['args'])!r}")
    if example.get("context"):
        parts.append(f"context={dict(example['context'])!r}")
    return ", ".join(parts)
