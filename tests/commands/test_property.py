"""Random compositions of allowed and denied commands: a denied one anywhere is always denied,
and a line is allowed only when every command in it is seen and allowed (hypothesis)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_core import Policy
from tests.commands import corpus

ALLOWLIST = Policy.from_dict(corpus.ALLOWLIST)
DENYLIST = Policy.from_dict(corpus.DENYLIST)

ALLOWED = ["ls", "ls -la", "git status", "git diff --stat", "echo hi", "cat README.md", "grep -n x f", "pwd"]
DENIED = ["rm -rf /", "rm x", "/bin/rm -r y", "r''m z", "\\rm q", '"rm" -f w', "$'\\x72m' v"]


@dataclass(frozen=True)
class Line:
    text: str
    denied: bool  # holds a denied command
    clean: bool  # only allowed commands joined by plain operators (so the allow list allows it)
    simple: bool  # one simple command (a wrapper can take it)


leaves = st.one_of(
    st.sampled_from(ALLOWED).map(lambda t: Line(t, False, True, True)),
    st.sampled_from(DENIED).map(lambda t: Line(t, True, False, True)),
)

JOINERS = [" && ", " || ", "; ", " | ", " & ", "\n", " |& "]
WRAPPERS = ["nice ", "env X=1 ", "timeout 5 ", "command ", "nohup ", "time ", "sudo ", "stdbuf -oL ", "xargs "]


def _extend(children: st.SearchStrategy[Line]) -> st.SearchStrategy[Line]:
    pair = st.tuples(children, st.sampled_from(JOINERS), children).map(
        lambda t: Line(f"{t[0].text}{t[1]}{t[2].text}", t[0].denied or t[2].denied, t[0].clean and t[2].clean, False)
    )
    group = st.tuples(
        st.sampled_from(["( {} )", "{{ {}; }}", "if true; then {}; fi", "until true; do {}; done", "f() {{ {}; }}"]),
        children,
    ).map(lambda t: Line(t[0].format(t[1].text), t[1].denied, t[1].clean, False))
    opaque = st.tuples(
        st.sampled_from(["echo $( {} )", "echo `{}`", "bash -c {q}", "sh -c {q}", "eval {q}", "cat <( {} )"]),
        children,
    ).map(lambda t: Line(_opaque(t[0], t[1].text), t[1].denied, False, False))
    wrapped = st.tuples(st.sampled_from(WRAPPERS), children.filter(lambda c: c.simple)).map(
        lambda t: Line(t[0] + t[1].text, t[1].denied, False, True)
    )
    return st.one_of(pair, group, opaque, wrapped)


def _opaque(template: str, inner: str) -> str:
    if "`" in template and "`" in inner:  # backticks do not nest unescaped
        template = "echo $( {} )"
    return template.format(inner, q=shlex.quote(inner))


lines = st.recursive(leaves, _extend, max_leaves=8)


@settings(max_examples=400, deadline=None)
@given(lines)
def test_a_denied_command_anywhere_is_denied(line: Line) -> None:
    for policy in (ALLOWLIST, DENYLIST):
        d = policy.evaluate("bash", {"command": line.text})
        if line.denied:
            assert d.decision == "deny", (line.text, [s.describe() for s in d.segments])
        else:
            assert d.decision != "deny", (line.text, [s.describe() for s in d.segments])


@settings(max_examples=400, deadline=None)
@given(lines)
def test_allowed_only_when_every_command_is_seen_and_allowed(line: Line) -> None:
    d = ALLOWLIST.evaluate("bash", {"command": line.text})
    assert (d.decision == "allow") == (line.clean and not line.denied), (
        line.text,
        [s.describe() for s in d.segments],
    )
