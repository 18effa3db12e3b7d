"""Shell command lines as the simple commands bash would run: one ``ShellSegment`` each.

A tool that runs a command line is one tool name with everything in one argument, so a
rule on the name or a prefix test on the text (``ls && rm -rf /``) means nothing. This
module parses the text with tree-sitter-bash (a real bash grammar, in C: it chose
itself against bashlex by measurement, see ``bench/shell_parsers.py`` and
docs/policy.md) and lists every simple command inside it, whatever compound form holds
it: ``;``, ``&&``, ``||``, ``|``, ``&``, newlines, subshells, ``{ }``, ``if``/``for``/
``while``/``case`` bodies, ``$(...)`` and backticks, process substitutions, function
bodies. Each segment's argv has quotes and escapes removed as bash would, its program
reduced to its base name, and leading assignments dropped. Wrappers (``sudo``, ``env``,
``xargs``, ``find -exec``, ``bash -c STRING``, ``eval 'STRING'``, ...) give a segment
of their own *and* one for the command they run.

What cannot be seen statically is marked, never guessed: a segment whose ``unseen`` is
set (a variable as the program, ``eval`` of a non-literal, ``source``, a shell reading
its script from stdin or a file, an output redirection to a file, text that does not
parse, a bound exceeded) can never be allowed by a rule. Parsing is bounded in size and
nesting and uses no recursion (an explicit stack), so hostile text cannot exhaust the
Python stack; ``bash -c`` strings are parsed on the same work list.
"""

from __future__ import annotations

import functools
import re
import shlex
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "MAX_COMMAND_BYTES",
    "MAX_NESTING",
    "WRAPPER_PROGRAMS",
    "Redirect",
    "ShellSegment",
    "parse_shell",
]

#: the longest command line parsed (UTF-8 bytes); a longer one is one unseen segment.
MAX_COMMAND_BYTES = 64 * 1024
#: compound nesting (subshells, braces, substitutions, bodies, ``bash -c``) beyond which the text is unseen.
MAX_NESTING = 48
#: the most segments one command line yields; past that the line is unseen.
MAX_SEGMENTS = 512
_MAX_SHELL_C_DEPTH = 8  # ``bash -c "bash -c '...'"`` levels

#: programs that run their (static) string arguments as shell code: seen through.
_SHELLS_C = frozenset({"bash", "sh", "zsh", "dash", "ksh", "ash", "mksh", "busybox-sh"})
#: builtins that run code nobody can see here.
_UNSEEN_PROGRAMS = {
    "source": "source runs a file's commands unseen",
    ".": ". (source) runs a file's commands unseen",
    "alias": "an alias changes what later commands run",
    "enable": "enable loads or swaps builtins",
    "fc": "fc re-runs commands from the history",
    "let": "let evaluates arithmetic, which can run code",
}
#: variables whose value changes which program runs or what it loads.
_DANGEROUS_ASSIGNMENT = re.compile(
    r"^(PATH|LD_[A-Z_]*|DYLD_[A-Z_]*|BASH_ENV|ENV|IFS|SHELLOPTS|BASHOPTS|PS4|PROMPT_COMMAND|BASH_FUNC_.*"
    r"|GIT_[A-Z_]*|PAGER|EDITOR|VISUAL|SSH_ASKPASS|PYTHONPATH|PYTHONSTARTUP|PYTHONHOME|NODE_OPTIONS"
    r"|PERL5OPT|PERL5LIB|RUBYOPT|RUBYLIB|LESSOPEN|LESSCLOSE|MANPAGER|SUDO_ASKPASS|TERMINFO|HISTFILE)$"
)
#: directories whose programs are the system's own: a program named by any other path is unseen.
_SYSTEM_DIRS = frozenset(
    {"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin", "/opt/homebrew/bin"}
)
_ASSIGNMENT_HOLDERS = frozenset({"command", "declaration_command"})
_OUTPUT_OPS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
_STRUCTURAL = frozenset(
    {
        "subshell",
        "compound_statement",
        "command_substitution",
        "process_substitution",
        "if_statement",
        "elif_clause",
        "else_clause",
        "while_statement",
        "for_statement",
        "c_style_for_statement",
        "case_statement",
        "case_item",
        "do_group",
        "function_definition",
        "negated_command",
        "heredoc_body",
        "string",
        "expansion",
        "arithmetic_expansion",
    }
)


@dataclass(frozen=True)
class Redirect:
    """One redirection of a segment: its operator and target (``None`` when the target is not static)."""

    op: str
    target: str | None

    def cel(self) -> dict[str, Any]:
        return {"op": self.op, "target": self.target}


@dataclass(frozen=True)
class ShellSegment:
    """One simple command a shell line runs.

    ``argv``: the words with quotes and escapes removed, the program (``argv[0]``) reduced to
    its base name; a word that is not static keeps its source text (``$CMD``). ``unseen``:
    why this segment can never be allowed by a rule (None: fully seen). ``via``: the wrapper
    whose command this is (``sudo``, ``bash -c``, ...), None at the top level.
    """

    text: str
    argv: tuple[str, ...]
    redirects: tuple[Redirect, ...] = ()
    unseen: str | None = None
    via: str | None = None

    @property
    def program(self) -> str:
        return self.argv[0] if self.argv else ""

    def cel(self) -> dict[str, Any]:
        """``segment`` as a rule's ``when`` sees it: ``{argv, program, redirects}``."""
        return {"argv": list(self.argv), "program": self.program, "redirects": [r.cel() for r in self.redirects]}

    def starts_with(self, prefix: Sequence[str]) -> bool:
        """Whether ``argv`` begins with these exact tokens."""
        return len(prefix) <= len(self.argv) and all(a == b for a, b in zip(self.argv, prefix, strict=False))


@dataclass
class _Word:
    value: str  # the unquoted value, or the source text when not static
    static: bool
    unquoted_glob: bool = False  # an unquoted * ? [ (a pattern bash expands)
    brace: bool = False  # an unquoted {a,b} / {1..3} (bash expands it into several words)
    newline: bool = False  # an unquoted newline inside the word: bash would have split there


@dataclass
class _Acc:
    """The segments of one parse, in order, with a running bound."""

    out: list[ShellSegment] = field(default_factory=list)
    over: bool = False

    def add(self, seg: ShellSegment) -> None:
        if len(self.out) >= MAX_SEGMENTS:
            self.over = True
            return
        self.out.append(seg)


_PARSER: Any = None
_CACHE_MAX_TEXT = 4096  # texts up to this length are cached (the last 256)


def _parser() -> Any:
    global _PARSER
    if _PARSER is None:
        import tree_sitter_bash
        from tree_sitter import Language, Parser

        _PARSER = Parser(Language(tree_sitter_bash.language()))
    return _PARSER


def parse_shell(text: str) -> tuple[ShellSegment, ...]:
    """Every simple command ``text`` runs, in source order (wrappers before what they wrap).

    Never raises on any string: text that does not parse, or exceeds a bound, is one segment
    with ``unseen`` set. Results of short texts are cached (segments are immutable)."""
    if isinstance(text, str) and len(text) <= _CACHE_MAX_TEXT:
        return _parse_cached(text)
    return _parse_uncached(text)


def _parse_uncached(text: str) -> tuple[ShellSegment, ...]:
    if not isinstance(text, str):
        return (ShellSegment(str(type(text).__name__), (), unseen="the command is not a string"),)
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        return (_whole(text, "the command holds text that is not valid Unicode"),)
    if size > MAX_COMMAND_BYTES:
        return (_whole(text, f"the command is {size} bytes; at most {MAX_COMMAND_BYTES} are parsed"),)
    if "\x00" in text:
        return (_whole(text, "the command holds a NUL character"),)
    acc = _Acc()
    # the work list: (source text, depth of bash -c nesting, wrapper name, redirects inherited)
    pending: list[tuple[str, int, str | None, tuple[Redirect, ...]]] = [(text, 0, None, ())]
    while pending and not acc.over:
        source, depth, via, inherited = pending.pop(0)
        problem = _walk(source, depth, via, inherited, acc, pending)
        if problem is not None:
            acc.add(_whole(source, problem, via))
    if acc.over:
        return (_whole(text, f"the command has more than {MAX_SEGMENTS} simple commands"),)
    if not acc.out:  # nothing runs (empty, comments): one empty segment, decided by the default
        return (ShellSegment(text.strip(), ()),)
    return tuple(acc.out)


_parse_cached = functools.lru_cache(maxsize=256)(_parse_uncached)


def _whole(text: str, why: str, via: str | None = None) -> ShellSegment:
    return ShellSegment(_shorten(text), (), unseen=why, via=via)


def _shorten(text: str, limit: int = 1000) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- the walk over one parse tree ------------------------------------------------------------------
def _walk(
    source: str,
    depth: int,
    via: str | None,
    inherited: tuple[Redirect, ...],
    acc: _Acc,
    pending: list[tuple[str, int, str | None, tuple[Redirect, ...]]],
) -> str | None:
    """Add the segments of ``source``; a reason when the whole text is unseen (does not parse, too deep)."""
    data = source.encode("utf-8")
    tree = _parser().parse(data)
    root = tree.root_node
    if root.has_error:
        return "the command does not parse as bash"
    ctx = _Ctx(data, depth, via, acc, pending)
    # (node, nesting, redirects that apply to every command below, why they make it unseen)
    stack: list[tuple[Any, int, tuple[Redirect, ...], str | None]] = [(root, depth, inherited, None)]
    while stack:
        node, nesting, redirects, problem = stack.pop()
        if nesting > MAX_NESTING:
            return f"the command nests more than {MAX_NESTING} levels deep"
        kind = node.type
        if kind == "command":
            ctx.command(node, redirects, problem)
        elif kind == "redirected_statement":
            own, own_problem = ctx.redirects_of(node)
            below, below_problem = redirects + own, problem or own_problem
            body = node.child_by_field_name("body")
            if body is None:  # `> file` alone still truncates it
                acc.add(ShellSegment(_shorten(ctx.text(node)), (), below, unseen=below_problem, via=via))
            for child in reversed(node.children):
                if child.type == "heredoc_redirect":
                    # the here-document's node also holds what follows it on the line (`cat <<E | sh`):
                    # those commands do not read it, so they get only the outer redirects
                    for sub in reversed(child.children):
                        if sub.is_named and sub.type not in ("heredoc_start", "heredoc_end", "file_redirect"):
                            stack.append((sub, nesting + 1, redirects, problem))
                elif child.type not in ("file_redirect", "herestring_redirect") and child.is_named:
                    stack.append((child, nesting + (child != body), below, below_problem))
            continue
        elif kind in ("declaration_command", "unset_command"):
            ctx.declaration(node, redirects, problem)
        elif kind == "variable_assignment" and node.parent is not None and node.parent.type not in _ASSIGNMENT_HOLDERS:
            ctx.bare_assignment(node)
        elif kind == "test_command" or (kind == "compound_statement" and _is_arith(node)):
            ctx.arithmetic(node, redirects, problem)
        elif kind == "c_style_for_statement" and _has_variables(node):
            acc.add(
                ShellSegment(_shorten(ctx.text(node)), ("for",), unseen="arithmetic on variables can run code", via=via)
            )
        step = 1 if kind in _STRUCTURAL else 0
        if kind in ("command_substitution", "process_substitution"):
            redirects, problem = (), None  # its output goes to the word, not to the outer redirection
        for child in reversed(node.children):
            if child.is_named:
                stack.append((child, nesting + step, redirects, problem))
    return None


def _is_arith(node: Any) -> bool:
    first = node.children[0] if node.children else None
    return first is not None and first.type == "(("


def _has_variables(node: Any) -> bool:
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type in ("variable_name", "simple_expansion", "expansion", "command_substitution", "word"):
            return True
        stack.extend(n.children)
    return False


class _Ctx:
    """What one walk needs: the source bytes, the nesting of ``bash -c``, the wrapper it runs under."""

    def __init__(
        self,
        data: bytes,
        depth: int,
        via: str | None,
        acc: _Acc,
        pending: list[tuple[str, int, str | None, tuple[Redirect, ...]]],
    ) -> None:
        self.data = data
        self.depth = depth
        self.via = via
        self.acc = acc
        self.pending = pending

    def text(self, node: Any) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "replace")

    # -- redirections -------------------------------------------------------------------------
    def redirects_of(self, node: Any) -> tuple[tuple[Redirect, ...], str | None]:
        """The redirections written on ``node`` (a redirected statement or a command), and the reason
        they make it unseen (an output to a file, a target that is not static), if any."""
        out: list[Redirect] = []
        problem: str | None = None
        for child in _redirect_nodes(node):
            if child.type == "herestring_redirect":
                out.append(Redirect("<<<", None))
                continue
            if child.type == "heredoc_redirect":
                out.append(Redirect("<<", None))
                problem = problem or self._heredoc_problem(child)
                continue
            op = ""
            target: _Word | None = None
            for part in child.children:
                if part.type == "file_descriptor":
                    continue
                if not part.is_named:
                    op += part.type
                elif target is None:
                    target = self.word(part)
            shown = None if target is None or not target.static else target.value
            out.append(Redirect(op, shown))
            writes = op in _OUTPUT_OPS or (op == ">&" and not (shown or "").isdigit() and shown != "-")
            if writes and target is not None and (not target.static or target.value != "/dev/null"):
                problem = problem or (
                    f"an output redirection ({op}) to {target.value!r} writes a file"
                    if target.static
                    else f"an output redirection ({op}) to a target that is not static"
                )
        return tuple(out), problem

    def _heredoc_problem(self, node: Any) -> str | None:
        start = next((c for c in node.children if c.type == "heredoc_start"), None)
        quoted = start is not None and any(ch in self.text(start) for ch in "'\"\\")
        if quoted:
            return None
        for c in node.children:
            if c.type == "heredoc_body":
                stack = [c]
                while stack:
                    n = stack.pop()
                    if n.child_count == 0 and n.type in ("heredoc_content", "heredoc_body"):
                        if "`" in self.text(n) or "$(" in self.text(n):
                            return "a here-document with a command substitution bash runs"
                    stack.extend(n.children)
        return None

    # -- words --------------------------------------------------------------------------------
    def word(self, node: Any) -> _Word:
        """A word's value as bash would pass it (quote removal); non-static words keep their text."""
        if node.type == "word" or node.type == "number":
            raw = self.text(node)
            if "\\" not in raw:  # the common case: plain text, nothing to remove
                return _Word(
                    raw,
                    True,
                    unquoted_glob="*" in raw or "?" in raw or "[" in raw,
                    brace="{" in raw and _brace_expands(raw),
                    newline="\n" in raw,
                )
        parts: list[tuple[str, bool]] = []  # (chars, quoted)
        static = True
        stack = [node]
        while stack:
            n = stack.pop()
            t = n.type
            if t == "concatenation":
                stack.extend(reversed(n.children))
            elif t in ("word", "number", "extglob_pattern"):
                parts.extend(_unescape_unquoted(self.text(n)))
            elif t == "raw_string":
                parts.append((self.text(n)[1:-1], True))
            elif t == "string":
                for c in n.children:
                    if c.type == "string_content":
                        parts.append((_unescape_double(self.text(c)), True))
                    elif c.type != '"':
                        static = False
            elif t == "ansi_c_string":
                value = _ansi_c(self.text(n)[2:-1])
                if value is None:
                    static = False
                else:
                    parts.append((value, True))
            else:  # expansions, substitutions, `$"..."`, anything else: not static
                static = False
        if not static:
            return _Word(self.text(node), False)
        value = "".join(p for p, _ in parts)
        unquoted = "".join(p if not q else "\x01" * len(p) for p, q in parts)
        return _Word(
            value,
            True,
            unquoted_glob=any(ch in unquoted for ch in "*?["),
            brace=_brace_expands(unquoted),
            newline="\n" in unquoted,
        )

    # -- commands -----------------------------------------------------------------------------
    def command(self, node: Any, inherited: tuple[Redirect, ...], problem: str | None) -> None:
        words: list[_Word] = []
        assignments: list[Any] = []
        previous = None
        split_at: int | None = None
        own, redirect_problem = self.redirects_of(node)
        for child in node.children:
            if previous is not None and self.data[previous.end_byte : child.start_byte] == b"\\\n":
                problem = problem or "a line continuation inside a word"
            previous = child
            t = child.type
            if t == "variable_assignment":
                if not words:
                    assignments.append(child)
                else:  # `ls A=1`: an ordinary word
                    words.append(_Word(self.text(child), True))
            elif t == "command_name":
                words.append(self.word(child.children[0]) if child.children else _Word("", False))
            elif t in ("file_redirect", "herestring_redirect", "heredoc_redirect"):
                continue
            elif t == "$":  # `$"..."` (a translated string) splits into `$` and a string
                problem = problem or 'a translated string ($"...")'
            elif child.is_named and t != "comment":
                words.append(self.word(child))
            elif not child.is_named and t not in ("(", ")"):
                problem = problem or f"unexpected {t!r} in a command"
            if words and words[-1].newline and split_at is None:
                split_at = child.start_byte + child.text.index(b"\n")
        if split_at is not None:
            # the grammar kept a line that bash starts anew (`ls` NEWLINE `\rm x`) inside one word: the rest
            # of the command is parsed again on its own, so a rule on what follows still applies
            rest = self.data[split_at : node.end_byte].decode("utf-8", "replace")
            self.pending.append((rest, self.depth + 1, self.via, inherited))
        for a in assignments:
            problem = problem or _assignment_problem(self.text(a))
        redirects = inherited + own
        problem = problem or redirect_problem
        parent = node.parent
        shown = parent if parent is not None and parent.type == "redirected_statement" else node
        self.emit(words, redirects, problem, _shorten(self.text(shown)), self.via, 0)

    def declaration(self, node: Any, inherited: tuple[Redirect, ...], problem: str | None) -> None:
        """``export`` / ``declare`` / ``local`` / ``readonly`` / ``typeset`` / ``unset`` as a segment."""
        keyword = next((c.type for c in node.children if not c.is_named), "declare")
        argv = [keyword]
        for c in node.children:
            if not c.is_named:
                continue
            if c.type == "variable_assignment":
                problem = problem or _assignment_problem(self.text(c))
                argv.append(self.text(c))
            else:
                w = self.word(c)
                argv.append(w.value)
                if not w.static:
                    problem = problem or f"{keyword} with an argument that is not static"
        own, redirect_problem = self.redirects_of(node)
        self.acc.add(
            ShellSegment(
                _shorten(self.text(node)),
                tuple(argv),
                inherited + own,
                unseen=problem or redirect_problem,
                via=self.via,
            )
        )

    def bare_assignment(self, node: Any) -> None:
        problem = _assignment_problem(self.text(node))
        if problem:
            self.acc.add(ShellSegment(_shorten(self.text(node)), (), unseen=problem, via=self.via))

    def arithmetic(self, node: Any, inherited: tuple[Redirect, ...], problem: str | None) -> None:
        """``[[ ... ]]`` and ``(( ... ))``: a segment named by the bracket; variables in arithmetic
        can run code (``a[$(cmd)]`` in a value), so any use of one is unseen."""
        opener = node.children[0].type if node.children else "[["
        if _arith_variables(node, opener):
            problem = problem or "arithmetic on variables can run code"
        self.acc.add(ShellSegment(_shorten(self.text(node)), (opener,), inherited, unseen=problem, via=self.via))

    def emit(
        self,
        words: list[_Word],
        redirects: tuple[Redirect, ...],
        problem: str | None,
        text: str,
        via: str | None,
        hops: int,
    ) -> None:
        """Add the segment of ``words`` and, for a wrapper, the segments of what it runs (a loop:
        ``sudo env nice rm`` is four segments without recursion)."""
        while True:
            if not words:
                if problem or redirects:
                    self.acc.add(ShellSegment(text, (), redirects, unseen=problem, via=via))
                return
            argv = [w.value for w in words]
            program = words[0]
            problem = problem or _word_problem(words)
            if program.static and "/" in program.value:
                head, _, base = program.value.rpartition("/")
                if base and (head or "/") not in _SYSTEM_DIRS:
                    problem = problem or f"runs {program.value!r}, a program outside the system directories"
                argv[0] = base or program.value
            name = argv[0]
            if program.static and name in _UNSEEN_PROGRAMS:
                problem = problem or _UNSEEN_PROGRAMS[name]
            if program.static and name == "hash" and "-p" in argv[1:]:
                problem = problem or "hash -p changes what a name runs"
            if program.static and name in ("mapfile", "readarray") and any(a.startswith("-C") for a in argv[1:]):
                problem = problem or f"{name} -C runs a callback"
            inner, inner_problem, label, strings = _unwrap(name, words) if program.static else (None, None, None, None)
            problem = problem or inner_problem
            self.acc.add(ShellSegment(text, tuple(argv), redirects, unseen=problem, via=via))
            if inner_problem is not None:
                return
            for s in strings or ():  # bash -c STRING, eval STRING, trap STRING: parsed as shell
                if self.depth + 1 > _MAX_SHELL_C_DEPTH:
                    why = f"more than {_MAX_SHELL_C_DEPTH} levels of shell strings"
                    self.acc.add(ShellSegment(_shorten(s), (), unseen=why, via=label))
                else:
                    self.pending.append((s, self.depth + 1, label, redirects))
            if len(inner or ()) > 1:  # find with several -exec: each one a segment of its own
                for each in inner or ():
                    self.emit(each, redirects, None, _join(each), label, hops + 1)
                return
            if not inner:
                return
            words, problem, text, via, hops = inner[0], None, _join(inner[0]), label, hops + 1
            if hops > 64:
                self.acc.add(ShellSegment(text, (), unseen="too many wrappers", via=via))
                return


def _redirect_nodes(node: Any) -> Iterator[Any]:
    for c in node.children:
        if c.type in ("file_redirect", "herestring_redirect", "heredoc_redirect"):
            yield c
            if c.type == "heredoc_redirect":  # `cat <<E > f`: the file redirect sits inside
                for sub in c.children:
                    if sub.type == "file_redirect":
                        yield sub


def _arith_variables(node: Any, opener: str) -> bool:
    if opener == "((":
        return _has_variables_below(node)
    # [[ ]]: the arithmetic comparisons evaluate their operands
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "binary_expression":
            ops = [c for c in n.children if c.type == "test_operator" or not c.is_named]
            if any(o.text in (b"-eq", b"-ne", b"-lt", b"-le", b"-gt", b"-ge") for o in ops):
                if any(_has_expansion(c) for c in n.children if c.is_named and c.type != "test_operator"):
                    return True
        stack.extend(n.children)
    return False


def _has_variables_below(node: Any) -> bool:
    return any(_has_variables(c) for c in node.children if c.is_named)


def _has_expansion(node: Any) -> bool:
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type in ("simple_expansion", "expansion", "command_substitution", "arithmetic_expansion"):
            return True
        if n.type == "word" and not n.text.lstrip(b"-").isdigit():
            return True  # a bare name is a variable in arithmetic
        stack.extend(n.children)
    return False


def _assignment_problem(text: str) -> str | None:
    name = text.split("=", 1)[0].rstrip("+").split("[", 1)[0]
    if _DANGEROUS_ASSIGNMENT.match(name):
        return f"an assignment to {name} changes what runs"
    return None


def _word_problem(words: list[_Word]) -> str | None:
    program = words[0]
    if not program.static:
        return "the program is not static (a variable or a substitution)"
    if program.unquoted_glob:
        return "the program is a pattern bash expands"
    if program.value.startswith("-"):
        return f"the program {program.value[:60]!r} looks like an option (a wrapper read differently?)"
    for w in words:
        if not w.static:
            return f"the argument {w.value[:60]!r} is not static"
        if w.brace:
            return f"{w.value[:60]!r} is a brace expansion (several words)"
        if w.newline:
            return "a word holds an unquoted newline (the grammar and bash would read it differently)"
    return None


def _join(words: list[_Word]) -> str:
    return _shorten(shlex.join(w.value for w in words))


# -- quote removal ---------------------------------------------------------------------------------
def _unescape_unquoted(text: str) -> list[tuple[str, bool]]:
    """An unquoted word: a backslash quotes the next character; backslash-newline disappears."""
    if "\\" not in text:
        return [(text, False)]
    out: list[tuple[str, bool]] = []
    i = 0
    plain: list[str] = []
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            if plain:
                out.append(("".join(plain), False))
                plain = []
            if text[i + 1] != "\n":
                out.append((text[i + 1], True))
            i += 2
            continue
        plain.append(ch)
        i += 1
    if plain:
        out.append(("".join(plain), False))
    return out


_DOUBLE_ESCAPES = re.compile(r"\\([$`\"\\\n])")


def _unescape_double(text: str) -> str:
    """Inside double quotes a backslash escapes only ``$ ` " \\`` and a newline (which it removes)."""
    return _DOUBLE_ESCAPES.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), text)


_ANSI_SIMPLE = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


def _ansi_c(body: str) -> str | None:
    """``$'...'``'s escapes as bash decodes them (None for an escape this does not know: not static).
    A NUL ends the string, as in bash."""
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        if i + 1 >= len(body):
            out.append("\\")
            break
        nxt = body[i + 1]
        if nxt in _ANSI_SIMPLE:
            out.append(_ANSI_SIMPLE[nxt])
            i += 2
            continue
        if nxt in "01234567":
            octal = re.match(r"[0-7]{1,3}", body[i + 1 :])
            assert octal is not None  # nxt is an octal digit
            code, used = int(octal.group(0), 8) & 0xFF, len(octal.group(0))
        elif nxt == "x":
            m = re.match(r"[0-9a-fA-F]{1,2}", body[i + 2 :])
            if m is None:
                return None
            code, used = int(m.group(0), 16), 1 + len(m.group(0))
        elif nxt in "uU":
            m = re.match(r"[0-9a-fA-F]{1,4}" if nxt == "u" else r"[0-9a-fA-F]{1,8}", body[i + 2 :])
            if m is None:
                return None
            code, used = int(m.group(0), 16), 1 + len(m.group(0))
            if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
                return None
        else:
            return None  # \c and unknown escapes: not guessed
        if code == 0:
            break
        if nxt in "01234567x" and code > 0x7F:
            return None  # a raw byte, not a character
        out.append(chr(code))
        i += 1 + used
    return "".join(out)


def _brace_expands(unquoted: str) -> bool:
    """An unquoted ``{a,b}`` or ``{1..3}`` (quoted characters are masked out of ``unquoted``)."""
    depth_start = unquoted.find("{")
    while depth_start != -1:
        end = unquoted.find("}", depth_start)
        if end == -1:
            return False
        inner = unquoted[depth_start + 1 : end]
        if "," in inner or ".." in inner:
            return True
        depth_start = unquoted.find("{", depth_start + 1)
    return False


# -- wrappers --------------------------------------------------------------------------------------
# Each wrapper: options without a value, options taking the next word, and what follows.
_WRAPPERS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "env": (
        frozenset({"-i", "-0", "-v", "--ignore-environment", "--null", "--debug", "-"}),
        frozenset({"-u", "--unset", "-C", "--chdir"}),
    ),
    "command": (frozenset({"-p"}), frozenset()),
    "builtin": (frozenset(), frozenset()),
    "exec": (frozenset({"-c", "-l"}), frozenset({"-a"})),
    "nohup": (frozenset(), frozenset()),
    "nice": (frozenset(), frozenset({"-n", "--adjustment"})),
    "time": (
        frozenset({"-p", "-a", "-v", "-q", "--append", "--verbose", "--quiet", "--portability"}),
        frozenset({"-f", "--format"}),
    ),
    "timeout": (
        frozenset({"--preserve-status", "--foreground", "-v", "--verbose"}),
        frozenset({"-s", "--signal", "-k", "--kill-after"}),
    ),
    "stdbuf": (frozenset(), frozenset({"-i", "-o", "-e", "--input", "--output", "--error"})),
    "sudo": (
        frozenset(
            {
                "-A",
                "-b",
                "-E",
                "-H",
                "-k",
                "-n",
                "-P",
                "-S",
                "--askpass",
                "--background",
                "--preserve-env",
                "--set-home",
                "--reset-timestamp",
                "--non-interactive",
                "--preserve-groups",
                "--stdin",
            }
        ),
        frozenset(
            {
                "-C",
                "-D",
                "-g",
                "-h",
                "-p",
                "-R",
                "-r",
                "-t",
                "-T",
                "-U",
                "-u",
                "--close-from",
                "--chdir",
                "--group",
                "--host",
                "--prompt",
                "--chroot",
                "--role",
                "--type",
                "--command-timeout",
                "--other-user",
                "--user",
            }
        ),
    ),
    "doas": (frozenset({"-n"}), frozenset({"-u"})),
    "coproc": (frozenset(), frozenset()),
    "xargs": (
        frozenset(
            {
                "-0",
                "-o",
                "-p",
                "-r",
                "-t",
                "-x",
                "--null",
                "--open-tty",
                "--interactive",
                "--no-run-if-empty",
                "--verbose",
                "--exit",
            }
        ),
        frozenset(
            {
                "-a",
                "-d",
                "-E",
                "-I",
                "-L",
                "-n",
                "-P",
                "-s",
                "--arg-file",
                "--delimiter",
                "--max-lines",
                "--max-args",
                "--max-procs",
                "--max-chars",
                "--process-slot-var",
                "--replace",
                "--eof",
            }
        ),
    ),
}
#: options whose attached value is optional (``-i``, ``-iREPL``, ``-l5``, ``-e``, ``-eEOF``).
_ATTACHED_OPTIONAL = {"xargs": ("-i", "-l", "-e"), "nice": (), "stdbuf": ("-i", "-o", "-e")}
#: options that mean something this module does not follow: never allowed.
_REFUSED_OPTIONS = {
    "env": {"-S": "env -S splits a string into a command", "--split-string": "env -S splits a string into a command"},
    "sudo": {
        "-s": "sudo -s runs a shell reading stdin",
        "--shell": "sudo -s runs a shell reading stdin",
        "-i": "sudo -i runs a login shell",
        "--login": "sudo -i runs a login shell",
        "-e": "sudo -e edits files",
        "--edit": "sudo -e edits files",
    },
    "doas": {"-s": "doas -s runs a shell reading stdin", "-C": "doas -C reads a config file"},
    "time": {"-o": "time -o writes a file", "--output": "time -o writes a file"},
}


#: every program this module sees through (its own segment, and one for what it runs).
WRAPPER_PROGRAMS = frozenset({*_WRAPPERS, *_SHELLS_C, "eval", "trap", "find"})


def _unwrap(name: str, words: list[_Word]) -> tuple[list[list[_Word]] | None, str | None, str | None, list[str] | None]:
    """What a wrapper runs: (inner commands, a reason it is unseen, the wrapper's label, shell strings).

    ``(None, None, None, None)``: not a wrapper (or a wrapper that runs nothing)."""
    if name in _SHELLS_C:
        return _shell_c(name, words)
    if name in ("eval", "trap"):
        args = words[1:]
        if name == "trap":
            if not args or args[0].value.startswith("-"):
                return None, None, None, None  # `trap`, `trap -l`, `trap -p`: lists
            args = args[:1]
            if args[0].static and args[0].value in ("", "-"):
                return None, None, None, None
        if any(not w.static for w in args):
            return None, f"{name} of text that is not static", name, None
        return None, None, name, [" ".join(w.value for w in args)] if args else None
    if name == "find":
        return _find(words)
    if name == "command" and any(w.value in ("-v", "-V") for w in words[1:2]):
        return None, None, None, None  # describes the name, runs nothing
    spec = _WRAPPERS.get(name)
    if spec is None:
        return None, None, None, None
    flags, valued = spec
    refused = _REFUSED_OPTIONS.get(name, {})
    rest = words[1:]
    i = 0
    while i < len(rest):
        w = rest[i]
        v = w.value
        if not w.static:
            return None, f"{name} with an option that is not static", name, None
        if v == "--":
            i += 1
            break
        if not v.startswith("-") or (v == "-" and name != "env"):
            break
        key = v.split("=", 1)[0] if v.startswith("--") else v
        if key in refused or (not v.startswith("--") and v[:2] in refused):
            return None, refused.get(key) or refused[v[:2]], name, None
        if key in flags or (name == "nice" and v[1:].isdigit()):  # nice -10
            i += 1
            continue
        if key in valued:
            i += 1 if "=" in v else 2
            continue
        if not v.startswith("--") and len(v) > 2:
            head = v[:2]
            if head in valued or head in _ATTACHED_OPTIONAL.get(name, ()):
                i += 1  # -n10, -oL, -iREPL: the value is attached
                continue
            if all(f"-{c}" in flags for c in v[1:]):
                i += 1  # -EH: bundled flags
                continue
        if key in _ATTACHED_OPTIONAL.get(name, ()):
            i += 1
            continue
        return None, f"{name} with an option this policy does not follow ({v[:40]!r})", name, None
    rest = rest[i:]
    if name in ("env", "sudo"):
        while rest and "=" in rest[0].value and not rest[0].value.startswith("="):
            problem = _assignment_problem(rest[0].value)
            if problem:
                return None, problem, name, None
            rest = rest[1:]
    if name == "timeout":
        rest = rest[1:]  # the duration
    if not rest:
        if name == "xargs":  # xargs with no command runs echo
            return [[_Word("echo", True)]], None, name, None
        return None, None, None, None
    return [rest], None, name, None


def _shell_c(name: str, words: list[_Word]) -> tuple[None, str | None, str | None, list[str] | None]:
    """``bash [options] -c STRING [name [args]]``: STRING is parsed as shell. Without ``-c`` the shell
    reads a script from a file or stdin: unseen."""
    rest = words[1:]
    i = 0
    command = False
    while i < len(rest):
        w = rest[i]
        if not w.static:
            return None, f"{name} with an argument that is not static", f"{name} -c", None
        v = w.value
        if v in ("--", "-"):
            i += 1
            break
        if v.startswith("--"):
            if v in ("--rcfile", "--init-file"):
                return None, f"{name} {v} reads a startup file", f"{name} -c", None
            i += 1
            continue
        if v[:1] in "-+" and len(v) > 1:
            letters = v[1:]
            takes = sum(1 for c in letters if c in "oO")
            if "c" in letters and v[0] == "-":
                command = True
            if "s" in letters and v[0] == "-":
                return None, f"{name} -s reads commands from stdin", f"{name} -c", None
            i += 1 + takes
            continue
        break
    rest = rest[i:]
    if not command:
        if rest:
            return None, f"{name} runs the script file {rest[0].value[:60]!r} unseen", f"{name} -c", None
        return None, f"{name} reads its commands from stdin (a pipe or here-document) unseen", f"{name} -c", None
    if not rest:
        return None, f"{name} -c without a command string", f"{name} -c", None
    return None, None, f"{name} -c", [rest[0].value]


def _find(words: list[_Word]) -> tuple[list[list[_Word]] | None, str | None, str | None, list[str] | None]:
    """``find ... -exec|-execdir|-ok|-okdir CMD ... ;|+``: each CMD is a segment."""
    inner: list[list[_Word]] = []
    i = 1
    while i < len(words):
        if words[i].static and words[i].value in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            while j < len(words) and not (words[j].static and words[j].value in (";", "+")):
                j += 1
            if j >= len(words):
                return None, f"find {words[i].value} without its closing ; or +", "find -exec", None
            if j == i + 1:
                return None, f"find {words[i].value} without a command", "find -exec", None
            inner.append(words[i + 1 : j])
            i = j + 1
            continue
        i += 1
    if not inner:
        return None, None, None, None
    return inner, None, "find -exec", None
