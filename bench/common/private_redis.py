# SPDX-License-Identifier: MIT
"""private_redis.py - a private redis-server for a benchmark (127.0.0.1, a free port, the
password from a 0600 file through a 0600 config file, no persistence) and a minimal RESP2 client,
so that the benches need no Python package."""

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

SERVERS = []  # every redis-server started, killed on the way out


class Resp:
    """A minimal Redis client (RESP2 over a socket): enough for AUTH, INFO, DBSIZE, SCAN and
    FLUSHALL, so the bench needs no Python package."""

    def __init__(self, port, password):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.buf = b""
        self.call("AUTH", password)

    def close(self):
        self.sock.close()

    def call(self, *args):
        out = [f"*{len(args)}\r\n".encode()]
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        self.sock.sendall(b"".join(out))
        return self._reply()

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("redis closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n + 2:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("redis closed the connection")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def _reply(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise RuntimeError(f"redis: {rest.decode(errors='replace')}")
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self._exact(n)
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self._reply() for _ in range(n)]
        raise RuntimeError(f"redis: unexpected reply {line[:40]!r}")

    def info_field(self, section, name):
        for line in self.call("INFO", section).decode().splitlines():
            if line.startswith(name + ":"):
                return int(line.split(":", 1)[1])
        return None

    def count_keys(self, pattern):
        cursor, total = b"0", 0
        while True:
            cursor, keys = self.call("SCAN", cursor, "MATCH", pattern, "COUNT", 1000)
            total += len(keys)
            if cursor == b"0":
                return total


def private_file(path, text):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Redis:
    """A private redis-server on a free loopback port."""

    def __init__(self, work, name, password_file):
        self.dir = work / name
        self.dir.mkdir()
        self.port = free_port()
        password = Path(password_file).read_text().strip()
        self.password = password
        conf = self.dir / "redis.conf"
        private_file(conf, f'bind 127.0.0.1\nport {self.port}\nrequirepass {password}\n'
                           f'save ""\nappendonly no\ndir {self.dir}\nprotected-mode yes\n')
        self.proc = subprocess.Popen(["redis-server", str(conf)], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        SERVERS.append(self)
        deadline = time.monotonic() + 10
        while True:
            try:
                client = self.client()
                client.call("PING")
                client.close()
                break
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise RuntimeError("redis-server did not start")
                time.sleep(0.02)
        self.version = None
        client = self.client()
        for line in client.call("INFO", "server").decode().splitlines():
            if line.startswith("redis_version:"):
                self.version = line.split(":", 1)[1]
        client.close()

    def client(self):
        return Resp(self.port, self.password)

    def url(self):
        return f"redis://127.0.0.1:{self.port}"

    def kill(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        """SIGSTOP: the server keeps its connections and answers nothing, like a hung one."""
        self.proc.send_signal(signal.SIGSTOP)

    def fault(self, kind):
        if kind == "kill":
            self.kill()
        else:
            self.stop()

    def resume(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
