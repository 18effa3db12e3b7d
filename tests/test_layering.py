"""The layering: the domain core never pays for the UI, and the import contracts of ``.importlinter`` hold."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("modules", ["agent_core", "storage", "agent_core.models, agent_core.providers"])
def test_core_packages_do_not_import_textual_or_rich(modules):
    code = f"import sys, {modules}; print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'tui')))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_storage_does_not_import_agent_core():
    code = "import sys, storage; print(sorted(m for m in sys.modules if m.startswith('agent_core')))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_import_linter_contracts_hold():
    lint = Path(sys.executable).parent / "lint-imports"
    out = subprocess.run(
        [str(lint), "--config", str(ROOT / ".importlinter")], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stdout + out.stderr
    contracts = (ROOT / ".importlinter").read_text().count("[importlinter:contract:")
    assert f"{contracts} kept, 0 broken" in out.stdout
    assert "The client SDK never imports a store module" in out.stdout
    assert "agent_core is a one-way stack" in out.stdout
    kept = " ".join(out.stdout.split())  # the report wraps long contract names
    for contract in (
        "The server never imports the console nor the CLI",
        "The console never imports typer, the CLI nor the server",
        "The CLI never imports textual, except its one launch of the console KEPT (1 ignored import)",
        "The demo imports neither the console, the CLI nor the server",
        "Only agent_core.adapters imports the agent frameworks (optional extras)",
    ):
        assert contract in kept, contract


def test_the_cli_reaches_textual_only_through_its_launch_of_the_console(tmp_path):
    """Without its one ignored import (``warden_cli.console -> tui.launch``) the CLI's contract
    breaks: that import is how the console is launched, and the only way to textual."""
    config = (ROOT / ".importlinter").read_text()
    assert "    warden_cli.console -> tui.launch\n" in config
    unignored = tmp_path / "importlinter.ini"
    unignored.write_text(config.replace("ignore_imports =\n    warden_cli.console -> tui.launch\n", ""))
    lint = Path(sys.executable).parent / "lint-imports"
    out = subprocess.run([str(lint), str(unignored)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    report = " ".join(out.stdout.split())
    assert out.returncode == 1, report
    assert "The CLI never imports textual, except its one launch of the console BROKEN" in report
    assert " 1 broken" in report  # that contract alone
    assert "- warden_cli.console -> tui.launch" in report
