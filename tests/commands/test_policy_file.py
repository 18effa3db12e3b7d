"""The `[commands]` table in policy files: loading, refusals, versions, self-tests, Python use,
`warden policy explain` per command, and the ready coding-agent policy of docs/policy.md."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from agent_core import Policy, PolicyInvalid, PolicyRule
from agent_core.policy_commands import CommandTable

ROOT = Path(__file__).resolve().parents[2]
CODING = ROOT / "docs" / "policies" / "coding-agent.toml"


def warden(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "warden_cli", *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def test_the_docs_policy_is_the_file_and_its_self_tests_pass() -> None:
    doc = (ROOT / "docs" / "policy.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- coding-agent.toml -->\n```toml\n(.*?)```", doc, re.S)
    assert block is not None, "docs/policy.md shows docs/policies/coding-agent.toml"
    assert block.group(1) == CODING.read_text(encoding="utf-8")
    policy = Policy.load(CODING)
    assert policy.check() == []
    assert set(policy.commands.shell) == {"bash", "Bash", "run_shell"}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"commands": {"shell": {"bash": 1}}}, "map tool names to argument names"),
        ({"commands": {"shel": {}}}, "unknown key(s) in [commands]: shel"),
        ({"commands": {"shell": {"x": "c"}, "sql": {"x": "q"}}}, "declared both shell and sql"),
        ({"commands": {"sql": {"q": "q"}, "sql_dialect": "klingon"}}, "sql_dialect 'klingon'"),
        ({"commands": [1]}, "'commands' must be a table"),
        ({"rules": [{"id": "r", "decision": "allow", "commands": [["ls"]]}]}, "needs a shell tool in [commands]"),
        ({"rules": [{"id": "r", "decision": "allow", "statements": ["select"]}]}, "needs a SQL tool in [commands]"),
        (
            {"commands": {"shell": {"b": "c"}}, "rules": [{"id": "r", "decision": "allow", "commands": "ls"}]},
            "rule 'r': 'commands' must be a list of argv prefixes",
        ),
        (
            {"commands": {"shell": {"b": "c"}}, "rules": [{"id": "r", "decision": "allow", "commands": [[]]}]},
            "each prefix is a list of 1 to 32 non-empty strings",
        ),
        (
            {"commands": {"sql": {"q": "q"}}, "rules": [{"id": "r", "decision": "deny", "statements": ["selekt"]}]},
            "unknown statement kind(s)",
        ),
        (
            {
                "commands": {"shell": {"b": "c"}},
                "rules": [{"id": "r", "decision": "ask", "when": "segment.program == 'x'"}],
            },
            "'segment' is bound only for rules with 'commands' or 'statements'",
        ),
    ],
)
def test_bad_command_policies_are_refused_naming_the_problem(data: dict, message: str) -> None:
    with pytest.raises(PolicyInvalid) as err:
        Policy.from_dict(data)
    assert message in err.value.message


def test_a_rule_with_both_commands_and_statements_is_refused() -> None:
    with pytest.raises(PolicyInvalid, match="not both"):
        Policy(
            rules=[PolicyRule(id="r", decision="deny", commands=[["rm"]], statements=["drop"])],
            commands={"shell": {"b": "c"}, "sql": {"q": "q"}},
        )


def test_versions_of_policies_without_commands_are_unchanged() -> None:
    """A stored run's policy hashes to the version it was stored under: no new key in old bodies."""
    old = Policy.from_dict({"rules": [{"id": "r", "tools": ["x"], "decision": "ask"}]})
    assert "commands" not in old.body() and "commands" not in old.body()["rules"][0]
    assert (
        old.version
        == "sha256:"
        + __import__("hashlib")
        .sha256(__import__("rfc8785").dumps({"default": "allow", "rules": [old.rules[0]._call_body()]}))
        .hexdigest()
    )
    with_table = Policy.from_dict({"commands": {"shell": {"bash": "command"}}, "rules": old.to_dict()["rules"]})
    assert with_table.version != old.version  # the table changes decisions, so it is part of the version
    again = Policy.from_dict(with_table.body())
    assert again.version == with_table.version and again.commands == with_table.commands


def test_the_table_is_usable_from_python() -> None:
    policy = Policy(
        rules=[PolicyRule(id="git", decision="allow", commands=[["git", "status"]])],
        default="ask",
        commands=CommandTable(shell={"Bash": "command"}),
    )
    assert policy.evaluate("Bash", {"command": "git status; git status -s"}).decision == "allow"
    assert policy.evaluate("Bash", {"command": "git status; git push"}).decision == "ask"
    assert policy.evaluate("Other", {"command": "git push"}).segments == ()


def test_self_tests_of_command_rules_match_any_segment() -> None:
    policy = Policy.from_dict(
        {
            "commands": {"shell": {"bash": "command"}},
            "rules": [
                {
                    "id": "no-rm",
                    "commands": [["rm"]],
                    "decision": "deny",
                    "match": [{"tool": "bash", "args": {"command": "ls && rm x"}}],
                    "not_match": [
                        {"tool": "bash", "args": {"command": "ls"}},
                        {"tool": "other", "args": {"command": "rm"}},
                    ],
                },
                {
                    "id": "wrong",
                    "commands": [["rm"]],
                    "decision": "deny",
                    "match": [{"tool": "bash", "args": {"command": "ls"}}],
                    "not_match": [{"tool": "bash", "args": {"command": "sudo rm x"}}],
                },
            ],
        }
    )
    failures = policy.check()
    assert len(failures) == 2 and all(f.startswith("rule 'wrong'") for f in failures), failures


def test_explain_prints_every_segment(tmp_path: Path) -> None:
    line = "git status && sudo rm -rf /tmp/x; echo $(id) > out"
    done = warden("policy", "explain", str(CODING), "--tool", "bash", "--args", json.dumps({"command": line}))
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert out[0] == "deny: rule privilege: no root, no raw disks"
    assert "  5 command(s) in bash's argument:" in out
    assert "    allow  git status  (rule reads: reading the work tree)" in out
    assert "    deny   rm -rf /tmp/x  (rule recursive-rm: recursive deletes are never run by the agent)" in out
    assert any(
        o.startswith("    ask    echo $(id) > out  (default: never allowed unseen: an output redirection") for o in out
    )
    assert "    allow  id  (rule reads: reading the work tree)" not in out  # `id` is not a read here
    done = warden(
        "policy", "explain", str(CODING), "--tool", "bash", "--args", '{"command": "ls\\u001b[31m"}', "--json"
    )
    seg = json.loads(done.stdout)["segments"]
    assert seg[0]["argv"] == ["ls\x1b[31m"] and seg[0]["decision"] == "ask"
    done = warden("policy", "explain", str(CODING), "--tool", "bash", "--args", '{"command": "ls\\u001b[31m"}')
    assert "\x1b" not in done.stdout  # a control character is shown escaped


def test_check_runs_command_self_tests() -> None:
    done = warden("policy", "check", str(CODING))
    assert done.returncode == 0 and "ok, 6 rules, 14 self-tests pass" in done.stdout
