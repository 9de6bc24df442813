# SPDX-License-Identifier: MIT
# redis_server.py - a private redis-server for a test: 127.0.0.1, a free port (never the default
# one), a password, nothing saved to disk; stopped when the test ends.
import os
import secrets
import shutil
import socket
import subprocess
import time


def free_port():
    """A port nothing listens on now (the kernel's choice, so never Redis's default 6379)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    def __init__(self, directory):
        self.binary = shutil.which("redis-server")
        self.directory = directory
        self.password = "pw-" + secrets.token_hex(12)
        self.port = 0
        self.process = None

    def start(self):
        for _ in range(5):  # another process may take the free port before the server binds it
            self.port = free_port()
            self.process = subprocess.Popen(
                [self.binary, "--port", str(self.port), "--bind", "127.0.0.1",
                 "--requirepass", self.password, "--save", "", "--appendonly", "no",
                 "--dir", str(self.directory), "--daemonize", "no", "--loglevel", "warning"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if self._wait_ready():
                return self
            self.stop()
        raise RuntimeError("redis-server did not start")

    def _wait_ready(self):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            try:
                if self.command("PING") == b"+PONG\r\n":
                    return True
            except OSError:
                time.sleep(0.05)
        return False

    def command(self, *words):
        """One command after AUTH, as RESP; the raw reply's bytes (enough for the tests' checks)."""
        def resp(parts):
            out = b"*%d\r\n" % len(parts)
            for part in parts:
                part = part if isinstance(part, bytes) else str(part).encode()
                out += b"$%d\r\n%s\r\n" % (len(part), part)
            return out

        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as s:
            s.sendall(resp(["AUTH", self.password]) + resp(list(words)))
            # The replies are read until the server has been quiet for a moment: the tests' small
            # commands answer at once.
            data = s.recv(65536)
            s.settimeout(0.2)
            try:
                while chunk := s.recv(65536):
                    data += chunk
            except (socket.timeout, TimeoutError):
                pass
        return data[len(b"+OK\r\n"):] if data.startswith(b"+OK\r\n") else data

    def url(self, with_password=False):
        if with_password:
            return f"redis://:{self.password}@127.0.0.1:{self.port}"
        return f"redis://127.0.0.1:{self.port}"

    def password_file(self, directory):
        path = os.path.join(directory, "redis-password")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(self.password + "\n")
        return path

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
