"""nginx on loopback in front of server instances: the load benchmark's and the multi-instance test's.

Round robin over the upstreams, HTTP/1.1 keep-alive to them, no buffering (SSE).
``.ci/run`` installs nginx (Debian's ``nginx-light``) when it is missing.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import httpx

CONF = """
{user}
worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/nginx-error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    upstream warden {{ {upstreams} keepalive 64; }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://warden;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering off;
            proxy_read_timeout 3600s;
        }}
    }}
}}
"""


class NginxUnavailable(RuntimeError):
    """nginx is not installed, or did not start (the message says which, with its error output)."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(upstreams: list[str], workdir: Path) -> tuple[subprocess.Popen[str], str]:
    """Start nginx in front of ``upstreams`` (``http://host:port`` each); the process and the proxy's URL."""
    exe = shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx", "/sbin/nginx") if Path(p).exists()), None)
    if exe is None:
        raise NginxUnavailable("nginx is not installed: run .ci/run (it installs it) or `apt-get install nginx-light`")
    port = free_port()
    ups = " ".join(f"server {u.removeprefix('http://')};" for u in upstreams)
    conf = workdir / "nginx.conf"
    user = "user root;" if os.geteuid() == 0 else ""
    conf.write_text(CONF.format(user=user, dir=workdir, upstreams=ups, port=port))
    proc = subprocess.Popen(
        [exe, "-c", str(conf), "-p", str(workdir), "-g", "daemon off;"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise NginxUnavailable(f"nginx did not start: {proc.stderr.read() if proc.stderr else ''}")
        time.sleep(0.05)
