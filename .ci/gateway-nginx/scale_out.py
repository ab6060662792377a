"""Drives .ci/gateway-nginx/run.sh: two gateway replicas behind nginx, a modern and a legacy
client, one replica killed halfway. Loopback only; every wait is bounded; every process it
starts is in a process group of its own, killed on the way out."""

import json
import os
import re
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time

CALLS = 100
WAIT = 120  # seconds, for any one thing


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


class Group:
    """Processes started in groups of their own, each killed with its group at the end."""

    def __init__(self):
        self.procs = []

    def start(self, args, **kw):
        proc = subprocess.Popen(args, start_new_session=True, **kw)
        self.procs.append(proc)
        return proc

    def kill(self, proc):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=WAIT)

    def close(self):
        for proc in self.procs:
            self.kill(proc)


def replica(group, binary, work, name, config, key):
    """A `sidewire mcp serve --listen 127.0.0.1:0` replica; its process and address."""
    audit = os.path.join(work, f"audit-{name}.jsonl")
    proc = group.start(
        [binary, "mcp", "serve", "--config", config, "--policy", "allow",
         "--listen", "127.0.0.1:0", "--state-key-file", key, "--audit", audit],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        env={**os.environ, "SIDEWIRE_HOME": os.path.join(work, f"home-{name}")},
        text=True,
    )
    deadline = time.monotonic() + WAIT
    for line in proc.stderr:
        found = re.search(r"listening on http://(\S+)/mcp", line)
        if found:
            # The rest of its stderr is drained, so it never blocks on it.
            threading.Thread(target=proc.stderr.read, daemon=True).start()
            return proc, found.group(1), audit
        if time.monotonic() > deadline:
            break
    fail(f"replica {name} never said where it listens")


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def nginx(group, work, a, b):
    """nginx on two loopback ports: round robin, and hash on Mcp-Session-Id."""
    rr, sticky = free_port(), free_port()
    for d in ("body", "proxy", "fastcgi", "uwsgi", "scgi", "logs"):
        os.makedirs(os.path.join(work, "nginx", d), exist_ok=True)
    prefix = os.path.join(work, "nginx")
    location = """
        location /mcp {
            proxy_pass http://%s;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_buffering off;
            proxy_read_timeout 300s;
        }"""
    conf = f"""
daemon off;
worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/logs/error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log {prefix}/logs/access.log;
    client_body_temp_path {prefix}/body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    upstream round_robin {{ server {a}; server {b}; }}
    upstream by_session {{ hash $http_mcp_session_id; server {a}; server {b}; }}
    server {{ listen 127.0.0.1:{rr}; {location % "round_robin"} }}
    server {{
        listen 127.0.0.1:{sticky};
        access_log {prefix}/logs/by_session.log;
        {location % "by_session"}
    }}
}}
"""
    path = os.path.join(prefix, "nginx.conf")
    with open(path, "w") as f:
        f.write(conf)
    group.start(["nginx", "-p", prefix, "-c", path], stdin=subprocess.DEVNULL)
    # Up once both ports take connections.
    import socket
    deadline = time.monotonic() + WAIT
    for port in (rr, sticky):
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    fail("nginx did not listen")
                time.sleep(0.05)
    return rr, sticky


class Client:
    """`sidewire run` on a config of one server (the gateway through nginx), fed `/call` lines."""

    def __init__(self, group, binary, work, name, port, era):
        config = os.path.join(work, f"{name}.json")
        with open(config, "w") as f:
            json.dump({"mcpServers": {"gw": {
                "type": "http", "url": f"http://127.0.0.1:{port}/mcp", "era": era}}}, f)
        self.name = name
        self.proc = group.start(
            [binary, "run", "--config", config, "--allow-tools"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env={**os.environ, "SIDEWIRE_HOME": os.path.join(work, f"home-{name}")},
            text=True, bufsize=1,
        )
        self.answers = []
        self.errors = []
        self.seen = threading.Condition()
        threading.Thread(target=self._read, args=(self.proc.stdout, self.answers), daemon=True).start()
        threading.Thread(target=self._read, args=(self.proc.stderr, self.errors), daemon=True).start()

    def _read(self, stream, into):
        for line in stream:
            with self.seen:
                into.append(line.rstrip("\n"))
                self.seen.notify_all()

    def calls(self, numbers):
        """Makes a call per number and waits for each answer (`-> NAME-N`)."""
        for n in numbers:
            self.proc.stdin.write(f"/call demo__echo text={self.name}-{n}\n")
        self.proc.stdin.flush()
        # Each call's line ends `-> TEXT` (`  tool mcp__gw__demo__echo {...} [allow] -> TEXT`).
        want = {f"{self.name}-{n}" for n in numbers}
        deadline = time.monotonic() + WAIT
        with self.seen:
            while True:
                got = {line.rsplit("-> ", 1)[-1] for line in self.answers if "-> " in line}
                missing = want - got
                if not missing:
                    return
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    fail(f"{self.name}: no answer to {len(missing)} calls "
                         f"(first {sorted(missing)[:5]}); stderr: {self.errors[-10:]}")
                self.seen.wait(left)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=WAIT)
        if self.proc.returncode != 0:
            fail(f"{self.name}: exit {self.proc.returncode}; stderr: {self.errors[-10:]}")


def served(audit, era):
    """The calls of `era` clients (an audit record's `era` is the protocol version) in an
    audit file."""
    if not os.path.exists(audit):
        return 0
    with open(audit) as f:
        versions = [json.loads(line).get("era") for line in f]
    modern = lambda version: version is not None and version >= "2026-07-28"
    return sum(1 for v in versions if modern(v) == (era == "modern"))


def main():
    binary = sys.argv[1]
    started = time.monotonic()
    group = Group()
    with tempfile.TemporaryDirectory() as work:
        try:
            config = os.path.join(work, "upstream.json")
            with open(config, "w") as f:
                json.dump({"mcpServers": {"demo": {"command": binary, "args": ["__mcp-server"]}}}, f)
            key = os.path.join(work, "state.key")
            with open(key, "w") as f:
                f.write(secrets.token_hex(32) + "\n")
            os.chmod(key, 0o600)
            a_proc, a, a_audit = replica(group, binary, work, "a", config, key)
            b_proc, b, b_audit = replica(group, binary, work, "b", config, key)
            rr, sticky = nginx(group, work, a, b)

            modern = Client(group, binary, work, "modern", rr, "modern")
            legacy = Client(group, binary, work, "legacy", sticky, "legacy")
            half = CALLS // 2
            modern.calls(range(half))
            legacy.calls(range(half))
            spread = (served(a_audit, "modern"), served(b_audit, "modern"))
            if min(spread) == 0:
                fail(f"round robin used one replica only: {spread}")
            held = (served(a_audit, "legacy"), served(b_audit, "legacy"))
            # The replica the legacy session's calls went to is killed, with its upstream.
            victim, survivor = ((a_proc, "b"), (b_proc, "a"))[held[1] > held[0]]
            survivor_audit = a_audit if survivor == "a" else b_audit
            before = served(survivor_audit, "legacy")
            group.kill(victim)
            modern.calls(range(half, CALLS))
            legacy.calls(range(half, CALLS))
            moved = served(survivor_audit, "legacy") - before
            if moved < CALLS - half:
                fail(f"the legacy session's calls after the kill: {moved} on the survivor")
            # One session throughout: no replica ever answered "session not found" (a client
            # that gets one starts a new session).
            with open(os.path.join(work, "nginx", "logs", "by_session.log")) as f:
                lost = [line for line in f if '" 404 ' in line]
            if lost:
                fail(f"the legacy session was not found {len(lost)} time(s): {lost[:3]}")
            modern.close()
            legacy.close()
        finally:
            group.close()
    print(f"gateway behind nginx: modern {CALLS}/{CALLS} calls (round robin {spread[0]}+{spread[1]} "
          f"before the kill), legacy {CALLS}/{CALLS} in one session (moved to replica {survivor} "
          f"when its replica was killed), in {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
