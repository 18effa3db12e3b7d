"""The corpus (tests/commands/corpus.py): every shell line and SQL text gets the decision it must.

Under the deny-list policy (default allow) a hidden ``rm`` is still denied and whatever is
not fully seen still asks; nothing is allowed that should not be."""

from __future__ import annotations

import time

import pytest

from agent_core import Policy
from tests.commands import corpus

ALLOWLIST = Policy.from_dict(corpus.ALLOWLIST)
DENYLIST = Policy.from_dict(corpus.DENYLIST)
SQL = Policy.from_dict(corpus.SQL_POLICY)

FAMILIES = {c.family for c in corpus.SHELL}


def test_the_corpus_is_large_enough_and_covers_every_family() -> None:
    assert len(corpus.SHELL) >= 80 and len(corpus.SQL) >= 30
    assert {"compound", "pipe", "quoting", "wrapper", "shell -c", "eval", "source", "heredoc", "redirect"} <= FAMILIES
    wrapped = " ".join(c.command for c in corpus.SHELL if c.family == "wrapper")
    for wrapper in ("env", "command", "builtin", "exec", "nohup", "nice", "time", "timeout", "stdbuf", "sudo",
                    "doas", "xargs", "-exec", "-execdir", "-ok"):  # fmt: skip
        assert wrapper in wrapped, wrapper


@pytest.mark.parametrize("case", corpus.SHELL, ids=lambda c: f"{c.family}:{c.command[:40]!r}")
def test_shell_case(case: corpus.ShellCase) -> None:
    got_allow = ALLOWLIST.evaluate("bash", {"command": case.command})
    got_deny = DENYLIST.evaluate("bash", {"command": case.command})
    assert (got_allow.decision, got_deny.decision) == (case.allowlist, case.denylist), (
        [s.describe() for s in got_allow.segments],
        [s.describe() for s in got_deny.segments],
    )
    # every segment is listed, and the call is allowed only when every segment is
    assert got_deny.segments
    assert (got_deny.decision == "allow") == all(s.decision == "allow" for s in got_deny.segments)


@pytest.mark.parametrize("case", corpus.SQL, ids=lambda c: c.query[:50])
def test_sql_case(case: corpus.SqlCase) -> None:
    got = SQL.evaluate("run_sql", {"query": case.query})
    assert tuple(s.kind for s in got.segments) == case.kinds
    assert got.decision == case.decision, [s.describe() for s in got.segments]


def test_a_denied_segment_names_its_rule() -> None:
    d = ALLOWLIST.evaluate("bash", {"command": "git status && sudo rm -rf /tmp/x"})
    assert (d.decision, d.rule_id, d.reason) == ("deny", "no-rm", "rm is not allowed")
    assert [(s.argv, s.decision, s.rule_id) for s in d.segments] == [
        (("git", "status"), "allow", "reads"),
        (("sudo", "rm", "-rf", "/tmp/x"), "ask", None),
        (("rm", "-rf", "/tmp/x"), "deny", "no-rm"),
    ]


def test_bounds_answer_quickly_enough_to_run_in_a_test() -> None:
    """Not a timing assertion: the bounded texts parse at all (no recursion error, no hang)."""
    started = time.monotonic()
    for text in (corpus.HUGE, corpus.DEEP, corpus.DEEP_SUBST, corpus.LONG_CHAIN):
        assert DENYLIST.evaluate("bash", {"command": text}).decision == "ask"
    assert time.monotonic() - started < 60  # a hang would be the failure, not slowness


def test_a_missing_or_non_string_command_is_never_allowed() -> None:
    for args in ({}, {"command": 5}, {"command": ["ls"]}, {"command": None}):
        d = DENYLIST.evaluate("bash", args)
        assert d.decision == "ask", args
        assert "never allowed unseen" in (d.reason or "")
