"""What a light import pulls in: the console's first frame and the headless commands import
``agent_core.untrusted_text`` / ``agent_core.errors`` / ``agent_core.telemetry_setup``, and
must not pay for fingerprints (hashlib, json, the canonical JSON) or the runtime through
``agent_core/__init__`` (bench/console_stream.py). Each check runs in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

HEAVY = ("hashlib", "json", "agent_core.fingerprint", "storage.canonical", "agent_core.runtime", "pydantic")


def loaded_after(code: str) -> set[str]:
    probe = f"import sys\n{code}\nprint(' '.join(sorted(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return set(result.stdout.split())


@pytest.mark.parametrize(
    "module", ["agent_core.untrusted_text", "tui.untrusted", "agent_core.errors", "agent_core.telemetry_setup"]
)
def test_light_modules_do_not_load_fingerprints_or_the_runtime(module):
    assert not set(HEAVY) & loaded_after(f"import {module}")


def test_the_console_app_module_loads_no_fingerprint_machinery():
    assert not set(HEAVY) & loaded_after("import tui.app, tui.console_start")


def test_untrusted_text_still_writes_json_when_asked():
    code = "from agent_core.untrusted_text import to_json; print(to_json({'a': 'é'}, indent=None))"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == '{"a": "é"}'


@pytest.mark.parametrize(
    "first",
    [
        "",  # the package alone
        "import agent_core.fingerprint",  # the submodule first: the import system sets the attribute
        "from agent_core.fingerprint import fingerprint as f",
        "import agent_core.engine",  # a module that imports the submodule
    ],
)
def test_fingerprint_is_the_function_however_it_is_reached(first):
    code = (
        f"{first}\nimport types, agent_core\nfrom agent_core import fingerprint\n"
        "assert isinstance(fingerprint, types.FunctionType), fingerprint\n"
        "assert agent_core.fingerprint is fingerprint\n"
        "print(fingerprint('t', {'b': 1, 'a': [1.0, 'x']}))"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    # RFC 8785 canonical JSON of {"args": {"a": [1, "x"], "b": 1}, "tool": "t"}, hashed
    import hashlib

    expected = hashlib.sha256(b'{"args":{"a":[1,"x"],"b":1},"tool":"t"}').hexdigest()
    assert result.stdout.strip() == f"sha256:{expected}"


def test_every_public_name_is_importable_from_the_package():
    code = (
        "import agent_core\n"
        "missing = [n for n in agent_core.__all__ if getattr(agent_core, n, None) is None]\n"
        "assert not missing, missing\n"
        "assert set(agent_core.__all__) <= set(dir(agent_core))\n"
        "from agent_core import *\n"
        "print(len(agent_core.__all__))"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert int(result.stdout) >= 40


def test_a_wrong_name_is_an_attribute_error():
    code = "import agent_core\ntry:\n    agent_core.NoSuchThing\nexcept AttributeError as e:\n    print(e)"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert "no attribute 'NoSuchThing'" in result.stdout


def test_without_otel_variables_the_console_start_does_not_load_the_telemetry_setup():
    code = (
        "import os\n"
        "for k in [k for k in os.environ if k.startswith('OTEL_')]: del os.environ[k]\n"
        "from warden_demo.runtime_choice import Settings, demo_runtime_builder\n"
        "demo_runtime_builder(Settings(db='unused.db'))"
    )
    loaded = loaded_after(code)
    assert "agent_core.telemetry_setup" not in loaded and "agent_core.errors" not in loaded


def test_with_an_otel_variable_a_mistake_in_it_is_still_one_error():
    code = (
        "import os\nos.environ['OTEL_TRACES_EXPORTER'] = 'nope'\n"
        "from warden_demo.runtime_choice import CliError, Settings, demo_runtime_builder\n"
        "try:\n    demo_runtime_builder(Settings(db='unused.db'))\nexcept CliError as e:\n    print('ERR', e)"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.stdout.startswith("ERR TELEMETRY_SETUP_FAILED") and "'nope'" in result.stdout
