"""Test helpers: a real platform-cloud (from source, through tsx, like the TypeScript tests) on a free port
in a fresh data dir, and its admin channel (the path the admin CLI takes while the server runs)."""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
MAIN = os.path.join(ROOT, "cloud", "server", "main.ts")
NODE = shutil.which("node") or "node"


def cloud_command(*args: str) -> List[str]:
    return [NODE, "--import", "tsx", MAIN, *args]


@dataclass
class Cloud:
    address: str
    data_dir: str
    process: subprocess.Popen

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.data_dir, ignore_errors=True)

    def admin(self, action: str, **args: Any) -> Dict[str, Any]:
        conn = _UnixHTTPConnection(os.path.join(self.data_dir, "admin.sock"))
        try:
            conn.request("POST", f"/actions/{action}", body=json.dumps(args), headers={"content-type": "application/json"})
            reply = json.loads(conn.getresponse().read())
        finally:
            conn.close()
        if "error" in reply:
            raise RuntimeError(f"admin {action}: {reply['error']}")
        return reply["result"]


class _UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path: str) -> None:
        super().__init__("localhost")
        self._path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(self._path)


def self_signed_certificate(directory: str) -> Tuple[str, str]:
    """A self-signed certificate for localhost and 127.0.0.1 and its key (PEM files): (cert, key)."""
    cert, key = os.path.join(directory, "cloud.crt"), os.path.join(directory, "cloud.key")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "2",
         "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
        check=True, capture_output=True,
    )
    return cert, key


def start_cloud(env: Optional[Dict[str, str]] = None, tls: Optional[Tuple[str, str]] = None) -> Cloud:
    """tls: (certificate file, key file) to serve with `serve --tls-cert --tls-key`."""
    # A short path: the admin socket lives in the data dir and unix socket paths are limited to ~107 bytes.
    data_dir = tempfile.mkdtemp(prefix="pysdk-cloud-")
    process_env = {
        **os.environ,
        "PLATFORM_QUERY_PG_PORT": "0",  # never the shared machine's 5432
        "PLATFORM_TRAINING_EPOCHS": "1",
        **(env or {}),
    }
    process = subprocess.Popen(
        cloud_command("serve", "--data-dir", data_dir, "--port", "0", *(["--tls-cert", tls[0], "--tls-key", tls[1]] if tls else [])),
        cwd=ROOT,
        env=process_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    stderr: List[str] = []
    # Drain stderr (pino logs) so that the cloud never blocks on a full pipe.
    threading.Thread(target=lambda: stderr.extend(process.stderr), daemon=True).start()  # type: ignore[arg-type]
    assert process.stdout is not None
    for line in process.stdout:
        match = re.search(r"serving (\S+)", line)
        if match:
            threading.Thread(target=lambda: process.stdout.read(), daemon=True).start()  # type: ignore[union-attr]
            return Cloud(match.group(1), data_dir, process)
    process.wait()
    shutil.rmtree(data_dir, ignore_errors=True)
    raise RuntimeError(f"platform-cloud exited with {process.returncode} before serving: {''.join(stderr)[-4000:]}")
