"""``CommandGrant``: what a grant's ``command_match`` covers, for shell lines and SQL texts."""

from __future__ import annotations

import pytest

from agent_core.policy_commands import CommandGrant, CommandsInvalid, command_grant_covers

GIT = CommandGrant.from_json({"argument": "command", "prefixes": [["git", "status"], ["ls"]]})
READS = CommandGrant.from_json({"argument": "query", "statements": ["select"], "dialect": "postgres"})


@pytest.mark.parametrize(
    ("line", "covered"),
    [
        ("git status", True),
        ("git status --short && ls -la | ls", True),
        ("git status && rm -rf /", False),
        ("sudo git status", False),  # the wrapper is a command of its own
        ("git status > out", False),  # unseen
        ("git statusx", False),
        ("git push", False),
        ("$(git status)", False),
        ("", False),  # runs nothing: nothing to grant
        ("git status 'unterminated", False),
    ],
)
def test_shell_grant(line: str, covered: bool) -> None:
    assert GIT.covers({"command": line}) is covered


@pytest.mark.parametrize(
    ("query", "covered"),
    [
        ("SELECT 1", True),
        ("SELECT 1; SELECT * FROM t", True),
        ("SELECT 1; DELETE FROM t", False),
        ("WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d", False),
        ("EXPLAIN ANALYZE DELETE FROM t", False),
        ("select from where", False),
    ],
)
def test_sql_grant(query: str, covered: bool) -> None:
    assert READS.covers({"query": query}) is covered


def test_a_missing_argument_is_never_covered() -> None:
    assert not GIT.covers({}) and not GIT.covers({"command": 3}) and not READS.covers({"command": "SELECT 1"})


def test_words_and_json() -> None:
    assert GIT.describe() == "whose command runs only `git status …` or `ls …`"
    assert READS.describe() == "whose query runs only SELECT statements"
    assert CommandGrant.from_json(GIT.to_json()) == GIT and CommandGrant.from_json(READS.to_json()) == READS
    assert (
        command_grant_covers({"argument": "command"}, {"command": "ls"}) is False
    )  # a bad stored value covers nothing
    with pytest.raises(CommandsInvalid):
        CommandGrant.from_json({"argument": "command", "prefixes": [["ls"]], "dialect": "postgres"})
