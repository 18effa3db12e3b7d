"""The domain core never pays for the UI: agent_core and storage must not import textual."""

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
    assert "7 kept, 0 broken" in out.stdout
    assert "agent_core is a one-way stack" in out.stdout
    assert "Only agent_core.adapters imports the agent frameworks" in out.stdout
