"""Which bash parser the policy uses: tree-sitter-bash (C) vs bashlex (pure Python), measured.

Usage: python bench/shell_parsers.py [parses]

For every shell line of the command corpus (tests/commands/corpus.py) it asks ``bash -n``
whether bash accepts the line, then whether each parser agrees (parses what bash accepts,
refuses what bash refuses) and how often a parser fails on a line bash accepts; then the
cost of one parse of a 3-segment command, of the corpus, and of the bounded texts (100 KB,
200-deep nesting). Only parsing is timed here; ``bench/policy_eval.py`` times a whole
evaluation. The machine is shared: wall-clock figures are noisy, the agreement counts are not.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable

import _common  # noqa: F401  (puts the project on sys.path)
from _common import per_call_us

from tests.commands import corpus

THREE = "git status --short && ls -la src | grep -c py"


def bash_accepts(text: str) -> bool:
    if "\x00" in text:
        return False
    done = subprocess.run(["bash", "-n"], input=text.encode(), capture_output=True, timeout=30)
    return done.returncode == 0


def tree_sitter() -> Callable[[str], bool]:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    parser = Parser(Language(tree_sitter_bash.language()))

    def parse(text: str) -> bool:
        return not parser.parse(text.encode()).root_node.has_error

    return parse


def bashlex_parser() -> Callable[[str], bool]:
    import bashlex

    def parse(text: str) -> bool:
        bashlex.parse(text)
        return True

    return parse


def main(n: int) -> None:
    lines = [c.command for c in corpus.SHELL]
    truth = {t: bash_accepts(t) for t in lines}
    print(f"{len(lines)} corpus lines, bash -n accepts {sum(truth.values())}")
    for name, make in (("tree-sitter-bash", tree_sitter), ("bashlex", bashlex_parser)):
        parse = make()
        agree = fails = crashes = 0
        missed: list[str] = []
        for text in lines:
            try:
                ok = parse(text)
            except RecursionError:
                ok, crashes = False, crashes + 1
            except Exception:
                ok = False
            if ok == truth[text]:
                agree += 1
            elif truth[text]:
                fails += 1
                missed.append(text)
            else:
                missed.append(text)
        print(f"  {name:<17} agrees with bash on {agree}/{len(lines)}; fails {fails} lines bash accepts; "
              f"recursion errors {crashes}")  # fmt: skip
        for text in missed[:8]:
            print(f"      {'fails' if truth[text] else 'accepts what bash refuses'}: {text[:60]!r}")
        us = per_call_us(lambda p=parse: p(THREE), n)
        t0 = time.perf_counter()
        for text in lines:
            try:
                parse(text)
            except Exception:
                pass
        corpus_ms = (time.perf_counter() - t0) * 1000
        bounded = []
        for label, text in (("100 KB", corpus.HUGE), ("200 deep", corpus.DEEP), ("200 deep $()", corpus.DEEP_SUBST)):
            t0 = time.perf_counter()
            try:
                parse(text)
                outcome = "parsed"
            except RecursionError:
                outcome = "RecursionError"
            except Exception as exc:
                outcome = type(exc).__name__
            bounded.append(f"{label} {(time.perf_counter() - t0) * 1000:.1f} ms ({outcome})")
        print(f"      3-segment parse {us:.1f} µs; whole corpus {corpus_ms:.1f} ms; " + "; ".join(bounded))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
