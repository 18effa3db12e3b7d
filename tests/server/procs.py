"""Real server processes on loopback: ``python -m warden_server --app tests.server.warden_test_app:runtime``."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

from tests.server.helpers import TOKEN

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
READY_PREFIX = "Warden server listening on "
# A safety net against a server that never starts (not an assertion about speed).
START_GUARD_SECONDS = 120


class ServerProc:
    """One ``python -m warden_server`` child process; ``url`` is set once it accepts connections."""

    def __init__(
        self,
        db: Path,
        counter_db: Path,
        log_dir: Path,
        name: str,
        token: str | None = TOKEN,
        extra_args: tuple[str, ...] = (),
    ) -> None:
        self.db, self.counter_db, self.name, self.token = db, counter_db, name, token
        self.extra_args = extra_args
        self.log_path = log_dir / f"server-{name}.log"
        self.proc: subprocess.Popen[str] | None = None
        self.url = ""

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        env["WARDEN_TEST_DB"] = str(self.db)
        env["WARDEN_TEST_COUNTER_DB"] = str(self.counter_db)
        env.pop("WARDEN_API_TOKEN", None)
        return env

    def start(self) -> ServerProc:
        args = [
            sys.executable,
            "-m",
            "warden_server",
            "--app",
            "tests.server.warden_test_app:runtime",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--log-level",
            "warning",
            *self.extra_args,
        ]
        if self.token:
            args += ["--token", self.token]
        log = open(self.log_path, "a")
        self._log = log
        self.proc = subprocess.Popen(
            args, cwd=REPO, env=self.env(), stdout=subprocess.PIPE, stderr=log, text=True, bufsize=1
        )
        guard = threading.Timer(START_GUARD_SECONDS, self.proc.kill)
        guard.start()
        try:
            assert self.proc.stdout is not None
            for line in self.proc.stdout:
                if line.startswith(READY_PREFIX):
                    self.url = line[len(READY_PREFIX) :].strip()
                    break
        finally:
            guard.cancel()
        if not self.url:
            self.proc.wait()
            raise RuntimeError(f"server {self.name} did not start (exit {self.proc.returncode}):\n{self.log()}")
        # Keep draining stdout so the child never blocks on a full pipe.
        threading.Thread(target=self._drain, daemon=True).start()
        return self

    def _drain(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for _ in self.proc.stdout:
            pass

    def log(self) -> str:
        try:
            return self.log_path.read_text()
        except OSError:
            return ""

    def stop(self) -> int | None:
        """Graceful stop (SIGTERM): the server lets accepted runs finish, then exits."""
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        self.proc.terminate()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._log.close()
        return self.proc.returncode

    def crash(self) -> None:
        """kill -9: no shutdown code runs."""
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait()
        self._log.close()


class ServerFactory:
    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.db = tmp_path / "warden.db"
        self.counter_db = tmp_path / "executions.db"
        self.servers: list[ServerProc] = []

    def start(self, name: str = "a", token: str | None = TOKEN, extra_args: tuple[str, ...] = ()) -> ServerProc:
        s = ServerProc(self.db, self.counter_db, self.tmp_path, f"{name}{len(self.servers)}", token, extra_args)
        self.servers.append(s)
        return s.start()

    def executions(self, tool: str | None = None) -> list[tuple[str, str, str, int]]:
        if not self.counter_db.exists():
            return []
        con = sqlite3.connect(self.counter_db, timeout=60)
        try:
            if not con.execute("SELECT name FROM sqlite_master WHERE name='executions'").fetchone():
                return []
            rows = con.execute("SELECT tool, tool_call_id, args, pid FROM executions").fetchall()
        finally:
            con.close()
        return [r for r in rows if tool is None or r[0] == tool]

    def stop_all(self) -> None:
        for s in self.servers:
            s.stop()
