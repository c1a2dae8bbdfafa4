"""Serve Attention Lab to a class: N Streamlit replicas behind nginx, started by one command.

    deploy/serve --replicas 2 --port 8080                 # start, wait until healthy, return
    deploy/serve --replicas 2 --port 8080 --foreground    # the same; Ctrl-C stops everything
    deploy/serve status --port 8080
    deploy/serve stop --port 8080

    # several machines: replicas only on each app host, nginx only on the front one
    deploy/serve --role replicas --replicas 4 --replica-address 10.0.0.2 --replica-port 8601
    deploy/serve --role proxy --port 80 --address 0.0.0.0 \\
        --upstream 10.0.0.2:8601,10.0.0.2:8602,10.0.0.3:8601,10.0.0.3:8602

The class's answers (Ask the class) go to the store every replica opens: SQLite in the data
directory (``--data-dir``) or PostgreSQL (``--store postgresql://…``, or
``$ATTENTION_LAB_STORE``: a password on a command line is visible to every user of the
machine). deploy/serve checks the store with ``python -m store check`` before it starts
anything, hands ``--data-dir``, ``--store`` and ``--public-url`` to every replica in its
environment (``ATTENTION_LAB_DATA``, ``ATTENTION_LAB_STORE``, ``ATTENTION_LAB_PUBLIC_URL``),
and once all are healthy prints where the data lives (a URL without its password) and the
lecturer's link. A detached supervisor gets the store URL in its environment, never on
its command line.

Each replica is ``streamlit run dashboard.py`` from the project's ``.venv`` on
``--replica-address`` (loopback unless told) and ports ``--port`` + 1, + 2, ... nginx (the
Debian package) listens on ``--address:--port`` with a config made from
``deploy/nginx.conf.template``: websocket upgrade for ``/_stcore/stream``, sticky sessions
through a route cookie, passive health checks with failover to the other replicas. The
config, pid files and logs go to a run directory (``--run-dir``, by default
``$XDG_RUNTIME_DIR`` or the temp dir, ``attention-lab-<uid>-<port>``), never to /etc.

One supervisor process owns the replicas and nginx, in the terminal (``--foreground``) or
detached (the default: ``start`` returns once all are healthy and the supervisor stays).
It restarts a process that dies on the same port, at once the first time and then with a
growing delay; a process that died ``MAX_RESTARTS`` times within ``RESTART_WINDOW`` s is
left down. A page whose replica died reconnects to it once it is back (the class stays
spread); a replica down for ``MOVE_AFTER`` s, here or on another host, has its pages'
reconnects sent to the others (nginx's config rewritten and reloaded) until it is healthy
again. Standard library only.
"""

import argparse
import contextlib
import ipaddress
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = Path(__file__).with_name("nginx.conf.template")
STATE = "state.json"
NGINX_CANDIDATES = ("/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/local/nginx/sbin/nginx")
ROLES = ("all", "replicas", "proxy")
MAX_RESTARTS = 5  # a process that dies this often within RESTART_WINDOW s is left down
RESTART_WINDOW = 300.0
MAX_BACKOFF = 30.0
TICK = 0.2  # how often the supervisor looks at its processes (s)
# nginx's passive health check: a replica that fails twice is skipped for FAIL_TIMEOUT s,
# then tried again. Short, so a restarted replica gets its new students back soon; a
# refused connection costs nothing, and a silent host at most proxy_connect_timeout.
HEALTH = "max_fails=2 fail_timeout=5s"
# A page whose replica died reconnects to that replica once it is back (a restarted one is
# healthy about a second after it died), so the class stays spread. Only a replica down for
# longer than MOVE_AFTER s (left down, restarting after a delay, another host lost) has its
# pages' reconnects sent to the others: nginx is reloaded with that route mapped to its
# failover upstream, and again with its own once it is healthy.
MOVE_AFTER = 6.0
REMOTE_LOOK = 1.0  # s between the front's looks at another host's replica
# What the app reads, in every replica's environment (store/datadir.py, store/__main__.py).
DATA_ENV = "ATTENTION_LAB_DATA"
STORE_ENV = "ATTENTION_LAB_STORE"
PUBLIC_ENV = "ATTENTION_LAB_PUBLIC_URL"


@dataclass(frozen=True)
class Proc:
    """One process deploy/serve started: what it is, its pid and where it logs."""

    name: str
    pid: int
    port: int
    log: str
    address: str = "127.0.0.1"


def default_run_dir(port: int, role: str = "all", address: str = "127.0.0.1") -> Path:
    """The run directory for the deployment on ``port`` (for ``--role replicas``: the
    first replica's address and port)."""
    base = os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
    where = f"replicas-{address}-{port}" if role == "replicas" else str(port)
    return Path(base) / f"attention-lab-{os.getuid()}-{where}"


def parse_upstream(text: str) -> str:
    """``"10.0.0.2:8601"`` or ``"[fd00::2]:8601"`` as nginx writes it in ``$upstream_addr``.

    An IP address, not a host name: nginx would resolve a name once, at start, and its
    logs and headers name the address the route map must recognise.
    """
    host, sep, port = text.strip().rpartition(":")
    try:
        ip = ipaddress.ip_address(host.removeprefix("[").removesuffix("]"))
        number = int(port)
    except ValueError:
        raise ValueError(f"not an IP address and port: {text!r}") from None
    if not sep or not 0 < number < 65536:
        raise ValueError(f"not an IP address and port: {text!r}")
    return hostport(str(ip), number)


def hostport(address: str, port: int) -> str:
    """``address:port``, with brackets around an IPv6 address."""
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"


def upstream_blocks(upstreams: Sequence[str]) -> list[str]:
    """nginx ``upstream`` blocks: ``attention_lab`` (least connections over all) for new
    visitors; per route ``attention_lab_r<i>``, its own replica with the others as backups
    while it is down, and ``attention_lab_r<i>_own``, its own replica alone (a page's
    reconnect waits for it)."""
    lines = [
        "    upstream attention_lab {",
        "        zone attention_lab 64k;",
        "        least_conn;",
    ]
    lines += [f"        server {u} {HEALTH};" for u in upstreams]
    lines += ["        keepalive 32;", "    }"]
    for i, own in enumerate(upstreams, 1):
        name = f"attention_lab_r{i}"
        lines += [
            f"    upstream {name} {{",
            f"        zone {name} 64k;",
            f"        server {own} {HEALTH};",
        ]
        lines += [f"        server {u} backup;" for u in upstreams if u != own]
        lines += ["        keepalive 16;", "    }"]
        lines += [
            f"    upstream {name}_own {{",
            f"        zone {name}_own 64k;",
            f"        server {own};",
            "        keepalive 16;",
            "    }",
        ]
    return lines


def render_config(
    template: str,
    run_dir: Path,
    address: str,
    port: int,
    upstreams: Sequence[str],
    static: Path,
    moved: Collection[int] = (),
) -> str:
    """The nginx config: ``template`` with its ``@FIELD@`` placeholders filled in.

    Replica ``i`` (1-based) at ``upstreams[i - 1]`` (``address:port``) has the route ``ri``.
    ``static`` is the directory that holds Streamlit's ``index.html`` and ``static/``.
    ``moved``: the routes whose pages reconnect to other replicas (theirs has been down
    for longer than ``MOVE_AFTER``); the others' wait for their own.
    """
    routes = range(1, len(upstreams) + 1)
    host = f"[{address}]" if ":" in address else address
    user = "user root;  # nginx was started by root: keep the workers able to use the run dir"
    fields = {
        "@USER@": user if os.geteuid() == 0 else "",
        "@RUN_DIR@": str(run_dir),
        "@LISTEN@": f"{host}:{port}",
        "@ROUTES@": "\n".join(f"        r{i} attention_lab_r{i};" for i in routes),
        "@OWN_ROUTES@": "\n".join(
            f"        r{i} attention_lab_r{i}{'' if i in moved else '_own'};" for i in routes
        ),
        # $upstream_addr lists every server tried ("a, b" after a failover): the last one
        # answered.
        "@ANSWERED_BY@": "\n".join(
            f'        "~(^|\\s){re.escape(u)}$" r{i};' for i, u in enumerate(upstreams, 1)
        ),
        "@SAME_ROUTE@": "\n".join(f'        "r{i} r{i}" "";' for i in routes),
        "@UPSTREAMS@": "\n".join(upstream_blocks(upstreams)),
        "@TRIES@": str(len(upstreams)),
        "@STREAMLIT_STATIC@": str(static),
        "@DEPLOY_DIR@": str(Path(__file__).resolve().parent),
    }
    for key, value in fields.items():
        template = template.replace(key, value)
    left = re.findall(r"@[A-Z_]+@", template)
    if left:
        raise ValueError(f"unfilled template fields: {left}")
    return template


def restart_delay(deaths: Sequence[float], now: float) -> float | None:
    """Seconds to wait before restarting a process whose deaths (monotonic times, the
    latest included) are ``deaths``; None: it died too often, leave it down.

    The first death in ``RESTART_WINDOW`` s restarts at once (a lecture is waiting), the
    next ones after 1, 2, 4, 8 s (at most ``MAX_BACKOFF``), so a crash loop does not spin.
    """
    recent = sum(1 for t in deaths if now - t <= RESTART_WINDOW)
    if recent > MAX_RESTARTS:
        return None
    return 0.0 if recent <= 1 else min(MAX_BACKOFF, 2.0 ** (recent - 2))


def streamlit_static(python: str) -> Path:
    """Streamlit's bundled frontend (``index.html`` and ``static/``) for ``python``."""
    find = "import importlib.util as u; print(u.find_spec('streamlit').origin)"
    where = subprocess.run([python, "-c", find], capture_output=True, text=True)
    static = Path(where.stdout.strip()).parent / "static"
    if where.returncode or not (static / "static").is_dir():
        raise SystemExit(f"{python} has no streamlit (or no bundled frontend at {static})")
    return static


def find_nginx(explicit: str | None) -> str:
    """The nginx binary: ``--nginx``, then PATH, then the usual sbin locations."""
    if explicit:
        return explicit
    found = shutil.which("nginx")
    if found:
        return found
    for candidate in NGINX_CANDIDATES:
        if os.access(candidate, os.X_OK):
            return candidate
    raise SystemExit("nginx not found: install it (Debian: apt-get install nginx) or pass --nginx")


def port_free(address: str, port: int) -> bool:
    """Whether ``address:port`` can be bound right now."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((address, port))
        except OSError:
            return False
    return True


def healthy(url: str, timeout: float = 3.0) -> bool:
    """Whether ``url`` (a /_stcore/health address) answers 200 with "ok"."""
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # ignore http_proxy
    try:
        with direct.open(url, timeout=timeout) as r:
            return r.status == 200 and r.read().strip() == b"ok"
    except OSError:
        return False


def alive(pid: int, name: str) -> bool:
    """Whether ``pid`` still runs and is the ``name`` process we started (not a zombie, not
    a recycled pid)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    state = stat.rsplit(")", 1)[1].split()[0]
    return state not in ("Z", "X") and name.encode() in cmdline


def group_members(pgid: int, name: str) -> list[int]:
    """The processes of process group ``pgid`` whose command line contains ``name``: what a
    process we started (in a session of its own, so its group is its pid) left behind when
    it died, e.g. the workers of an nginx master killed with SIGKILL, which go on serving
    on its port."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            group = int(stat.read_text().rsplit(")", 1)[1].split()[2])
            if group == pgid and name.encode() in (stat.parent / "cmdline").read_bytes():
                found.append(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            continue
    return found


def kill_group(pgid: int, name: str) -> None:
    """SIGKILL what :func:`group_members` finds."""
    for pid in group_members(pgid, name):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def make_run_dir(run_dir: Path) -> None:
    """Create the run directory, private to this user."""
    run_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = run_dir.lstat()
    if run_dir.is_symlink() or info.st_uid != os.getuid():
        raise SystemExit(f"{run_dir} is not a directory owned by you; pass another --run-dir")
    for sub in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (run_dir / "tmp" / sub).mkdir(parents=True, exist_ok=True)


def read_state(run_dir: Path) -> dict | None:
    """The state file of a deployment, or None."""
    try:
        return json.loads((run_dir / STATE).read_text())
    except (OSError, ValueError):
        return None


def tail(path: str | Path, lines: int = 15) -> str:
    """The last ``lines`` lines of a log file."""
    try:
        return "\n".join(Path(path).read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def say(text: str) -> None:
    """One line of the supervisor's report (the terminal, or serve.log when detached)."""
    print(f"{time.strftime('%H:%M:%S')} {text}", flush=True)


def stop_procs(procs: Sequence[Proc], timeout: float = 10.0) -> None:
    """Stop nginx first (no new requests), then the replicas: SIGTERM, then SIGKILL."""
    order = sorted(procs, key=lambda p: p.name != "nginx")
    for p in order:
        if alive(p.pid, p.name):
            with contextlib.suppress(ProcessLookupError):
                os.kill(p.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(alive(p.pid, p.name) for p in order):
        time.sleep(0.1)
    for p in order:
        if alive(p.pid, p.name):
            with contextlib.suppress(ProcessLookupError):
                os.kill(p.pid, signal.SIGKILL)
        kill_group(p.pid, p.name)


def stop(run_dir: Path) -> int:
    """``deploy/serve stop``: ask the supervisor to stop everything; stop what the state
    file lists itself if the supervisor is gone (or does not finish); remove the file."""
    state = read_state(run_dir)
    if state is None:
        print(f"nothing to stop: no {STATE} in {run_dir}")
        return 0
    supervisor = state.get("supervisor", 0)
    if supervisor and alive(supervisor, "serve.py"):
        with contextlib.suppress(ProcessLookupError):
            os.kill(supervisor, signal.SIGTERM)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and alive(supervisor, "serve.py"):
            time.sleep(0.1)
    state = read_state(run_dir) or state  # the supervisor may have restarted something
    procs = [Proc(**p) for p in state["procs"]]
    stop_procs(procs)
    (run_dir / STATE).unlink(missing_ok=True)
    replicas = sum(p.name == "streamlit" for p in procs)
    nginx = " and nginx" if any(p.name == "nginx" for p in procs) else ""
    print(f"stopped {replicas} replica(s){nginx}; logs kept in {run_dir}")
    return 0


def local_host(address: str) -> str:
    """Where this machine reaches a server listening on ``address`` (for a URL)."""
    if address in ("0.0.0.0", ""):
        return "127.0.0.1"
    if address == "::":
        return "[::1]"
    return f"[{address}]" if ":" in address else address


def status(run_dir: Path) -> int:
    """``deploy/serve status``: each process, alive and healthy or not, and the remote
    replicas nginx balances over. 0 if all are."""
    state = read_state(run_dir)
    if state is None:
        print(f"not running: no {STATE} in {run_dir}")
        return 1
    ok = True
    supervisor = state.get("supervisor", 0)
    if supervisor:
        up = alive(supervisor, "serve.py")
        ok = ok and up
        print(f"{'supervisor':10} pid {supervisor:7}  {'up' if up else 'DOWN (nothing restarts)'}")
    restarts = state.get("restarts", {})
    for p in (Proc(**p) for p in state["procs"]):
        up = alive(p.pid, p.name)
        health = up and healthy(f"http://{local_host(p.address)}:{p.port}/_stcore/health")
        ok = ok and health
        key = hostport(p.address, p.port)
        extra = f"  restarted {restarts[key]}x" if restarts.get(key) else ""
        gave_up = "  LEFT DOWN (died too often)" if key in state.get("left_down", []) else ""
        if key in state.get("moved", []):
            gave_up += "; its pages reconnect to the others"
        health_text = ", healthy" if health else ", not healthy"
        print(
            f"{p.name:10} pid {p.pid:7} {key:>21}  {'up' if up else 'DOWN'}{health_text}"
            f"{extra}{gave_up}  log {p.log}"
        )
    for u in state.get("remote", []):
        health = healthy(f"http://{u}/_stcore/health")
        moved = "; its pages reconnect to the others" if u in state.get("moved", []) else ""
        print(f"{'remote':10} {'':11} {u:>21}  {'healthy' if health else 'NOT HEALTHY'}{moved}")
        ok = ok and health
    print(f"serving {state['url']}" if ok else "some processes are down or not healthy")
    return 0 if ok else 1


@dataclass
class Child:
    """A process the supervisor keeps running: how to start it and what became of it."""

    name: str  # "streamlit" or "nginx": also what its command line must contain
    address: str
    port: int
    cmd: list[str]
    log: Path
    health_url: str
    popen: subprocess.Popen | None = None
    deaths: list[float] = field(default_factory=list)
    restart_at: float | None = None  # dead, to be started again at this monotonic time
    down_since: float | None = None  # died and not healthy again yet
    restarts: int = 0
    left_down: bool = False

    @property
    def key(self) -> str:
        return hostport(self.address, self.port)

    def proc(self) -> Proc:
        pid = self.popen.pid if self.popen else 0
        return Proc(self.name, pid, self.port, str(self.log), self.address)


@dataclass
class Supervisor:
    """Starts the children, waits until they are healthy, then keeps them running."""

    args: argparse.Namespace
    run_dir: Path
    children: list[Child]
    env: dict[str, str]
    url: str
    remote: list[str]
    stopping: threading.Event = field(default_factory=threading.Event)
    where: list[str] = field(default_factory=list)  # where the class's answers live
    key: str = ""  # the lecturer key (roles all and replicas)
    upstreams: list[str] = field(default_factory=list)  # nginx's, in route order
    configure: Callable[[Collection[int]], None] | None = None  # writes nginx's config
    moved: frozenset[int] = frozenset()  # routes whose pages reconnect to the others
    remote_down: dict[str, float] = field(default_factory=dict)  # since when, per upstream
    looked: float = float("-inf")  # when the remote replicas' health was last read

    def spawn(self, child: Child) -> None:
        with child.log.open("ab") as out:
            streams = {"stdin": subprocess.DEVNULL, "stdout": out, "stderr": subprocess.STDOUT}
            child.popen = subprocess.Popen(
                child.cmd, cwd=ROOT, env=self.env, **streams, start_new_session=True
            )

    def write_state(self) -> None:
        """Record the processes for stop and status (atomically: they read it any time)."""
        state = {
            "url": self.url,
            "role": self.args.role,
            "address": self.args.address,
            "supervisor": os.getpid(),
            "procs": [asdict(c.proc()) for c in self.children if c.popen],
            "remote": self.remote,
            "restarts": {c.key: c.restarts for c in self.children if c.restarts},
            "left_down": [c.key for c in self.children if c.left_down],
            "moved": [self.upstreams[i - 1] for i in sorted(self.moved)],
        }
        new = self.run_dir / f".{STATE}.{os.getpid()}"
        new.write_text(json.dumps(state, indent=1))
        new.replace(self.run_dir / STATE)

    def wait_healthy(self, children: Sequence[Child], timeout: float) -> None:
        """Block until each child answers its health URL; fail early if one exits."""
        deadline = time.monotonic() + timeout
        waiting = list(children)
        while waiting:
            if self.stopping.is_set():
                raise SystemExit("stopped while starting")
            for c in list(waiting):
                if healthy(c.health_url):
                    waiting.remove(c)
                elif c.popen is None or c.popen.poll() is not None:
                    raise SystemExit(f"{c.name} on {c.key} exited; its log:\n{tail(c.log)}")
            if waiting and time.monotonic() > deadline:
                names = ", ".join(f"{c.name} {c.key}" for c in waiting)
                raise SystemExit(f"not healthy after {timeout:.0f} s: {names}")
            if waiting:
                self.stopping.wait(0.3)

    def start(self, on_ready: Callable[[], None]) -> int:
        """Start everything, call ``on_ready`` once all are healthy, then supervise until
        SIGTERM/SIGINT. The exit status: 0 if stopped, 1 if nothing could be kept up."""
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # HUP: terminal closed
            signal.signal(sig, lambda *_: self.stopping.set())
        try:
            replicas = [c for c in self.children if c.name == "streamlit"]
            for c in replicas:
                self.spawn(c)
            self.write_state()  # from here on, deploy/serve stop can clean up
            self.wait_healthy(replicas, self.args.timeout)
            for u in self.remote:
                if not healthy(f"http://{u}/_stcore/health"):
                    say(f"warning: replica {u} is not healthy (nginx skips it until it is)")
            for c in self.children:
                if c.name == "nginx":
                    self.spawn(c)
                    self.write_state()
                    self.wait_healthy([c], self.args.timeout)
            on_ready()
            return self.supervise()
        finally:
            stop_procs([c.proc() for c in self.children if c.popen])
            for c in self.children:  # reap them
                if c.popen:
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        c.popen.wait(timeout=1)
            state = read_state(self.run_dir)
            if state and state.get("supervisor") == os.getpid():
                (self.run_dir / STATE).unlink(missing_ok=True)

    def supervise(self) -> int:
        while not self.stopping.wait(TICK):
            self.tick(time.monotonic())
            replicas = [c for c in self.children if c.name == "streamlit"]
            nginx = [c for c in self.children if c.name == "nginx"]
            if (replicas and all(c.left_down for c in replicas)) or any(c.left_down for c in nginx):
                say("nothing left to serve with; stopping")
                return 1
        say("stopping")
        return 0

    def tick(self, now: float) -> None:
        """Restart what died (when its delay is over); report what is healthy again."""
        for c in self.children:
            if c.left_down or c.popen is None:
                continue
            code = c.popen.poll()
            if code is not None and c.restart_at is None:
                kill_group(c.popen.pid, c.name)  # its children would hold its port
                c.deaths.append(now)
                if c.down_since is None:
                    c.down_since = now
                how = f"signal {-code}" if code < 0 else f"status {code}"
                delay = restart_delay(c.deaths, now)
                if delay is None:
                    c.left_down = True
                    say(
                        f"{c.name} {c.key} exited ({how}), {MAX_RESTARTS + 1} times in "
                        f"{RESTART_WINDOW:.0f} s: left down. Its log:\n{tail(c.log)}"
                    )
                    self.write_state()
                    continue
                c.restart_at = now + delay
                when = "now" if delay == 0 else f"in {delay:.0f} s"
                say(f"{c.name} {c.key} exited ({how}); restarting it {when}")
            if c.restart_at is not None and now >= c.restart_at:
                c.restart_at = None
                with c.log.open("a") as log:
                    log.write(f"\n--- deploy/serve: restarted at {time.ctime()} ---\n")
                c.restarts += 1
                self.spawn(c)
                self.write_state()
            if c.down_since is not None and c.restart_at is None and healthy(c.health_url, 0.5):
                say(f"{c.name} {c.key} healthy again, {now - c.down_since:.1f} s after it died")
                c.down_since = None
        self.follow_routes(now)

    def follow_routes(self, now: float) -> None:
        """Send the reconnects of a replica's pages to the others once it has been down for
        ``MOVE_AFTER`` s, and to it again once it is healthy: when that changes, rewrite
        nginx's config and reload it (SIGHUP: its open websockets stay where they are)."""
        nginx = next((c for c in self.children if c.name == "nginx"), None)
        if nginx is None or self.configure is None:
            return
        if self.remote and now - self.looked >= REMOTE_LOOK:
            self.looked = now
            for u in self.remote:
                if healthy(f"http://{u}/_stcore/health", 0.5):
                    self.remote_down.pop(u, None)
                else:
                    self.remote_down.setdefault(u, now)
        local = {c.key: c.down_since for c in self.children if c.name == "streamlit"}
        moved = set()
        for i, u in enumerate(self.upstreams, 1):
            since = local[u] if u in local else self.remote_down.get(u)
            if since is not None and now - since >= MOVE_AFTER:
                moved.add(i)
        if moved == self.moved:
            return
        for i in sorted(moved - self.moved):
            down = f"r{i} {self.upstreams[i - 1]} down for {MOVE_AFTER:.0f} s"
            say(f"{down}: its pages reconnect to the others")
        for i in sorted(self.moved - moved):
            say(f"r{i} {self.upstreams[i - 1]} healthy: its pages reconnect to it again")
        self.moved = frozenset(moved)
        self.configure(self.moved)
        if nginx.popen is not None and nginx.popen.poll() is None:
            os.kill(nginx.popen.pid, signal.SIGHUP)
        self.write_state()


def check_store(python: str, env: Mapping[str, str]) -> tuple[list[str], str]:
    """Open (and create) the class's store as the replicas will, with their environment,
    and read the lecturer key: (``python -m store check``'s lines, the key). Stops with the
    store's one-line reason if it cannot be used (nothing is started yet)."""
    said = []
    for action in ("check", "key"):
        try:
            done = subprocess.run(
                [python, "-m", "store", action],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
            )
        except subprocess.TimeoutExpired:
            message = f"the store did not answer within 60 s (python -m store {action})"
            raise SystemExit(message) from None
        if done.returncode:
            last = done.stderr.strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
            raise SystemExit(f"the store cannot be used: {last[0]}")
        said.append(done.stdout.strip())
    return said[0].splitlines(), said[1]


def lecturer_line(args: argparse.Namespace, url: str, key: str) -> str:
    """What the lecturer opens once to present (and becomes the lecturer): the link on the
    front (``--public-url`` if given, else nginx's address), the key alone on an app host
    (``--role replicas``: the front's address is not known here), the link without its key
    on the front of several hosts (``--role proxy``: the key is kept on the app hosts)."""
    base = args.public_url.rstrip("/") + "/" if args.public_url else url
    if args.role == "replicas":
        return f"lecturer key: {key}  (the lecturer opens <the front>/?present=1&key=<key> once)"
    if args.role == "proxy":
        return f"lecturer: {base}?present=1&key=<the key: python -m store key on an app host>"
    return f"lecturer: {base}?present=1&key={urllib.parse.quote(key, safe='')}"


def plan(args: argparse.Namespace, run_dir: Path) -> Supervisor:
    """Check the ports and tools, write nginx's config; the supervisor that will run it."""
    first = args.replica_port or args.port + 1
    count = 0 if args.role == "proxy" else args.replicas
    ports = list(range(first, first + count))
    busy = [
        hostport(args.replica_address, p) for p in ports if not port_free(args.replica_address, p)
    ]
    if args.role != "replicas" and not port_free(args.address, args.port):
        busy.append(hostport(args.address, args.port))
    if busy:
        raise SystemExit(f"in use: {', '.join(busy)}; choose --port / --replica-port")
    python = args.python or str(ROOT / ".venv" / "bin" / "python")
    if not os.access(python, os.X_OK):
        raise SystemExit(f"{python} not found: run the README's set-up command first")
    env = replica_env(args)
    where, key = check_store(python, env) if args.role != "proxy" else ([], "")
    make_run_dir(run_dir)
    children = []
    for i, port in enumerate(ports, 1):
        cmd = [python, "-m", "streamlit", "run", "dashboard.py"]
        cmd += ["--server.address", args.replica_address, "--server.port", str(port)]
        cmd += ["--server.headless", "true", "--server.fileWatcherType", "none"]
        cmd += ["--browser.gatherUsageStats", "false"]
        health = f"http://{local_host(args.replica_address)}:{port}/_stcore/health"
        log = run_dir / f"replica-{i}.log"
        children.append(Child("streamlit", args.replica_address, port, cmd, log, health))
    local = [hostport(c.address, c.port) for c in children]
    remote = [u for u in args.upstream if u not in local]
    url = f"replicas {', '.join(local)}"
    upstreams: list[str] = []
    configure = None
    if args.role != "replicas":
        nginx = find_nginx(args.nginx)
        conf = run_dir / "nginx.conf"
        static = streamlit_static(python)
        upstreams = local + remote
        template = TEMPLATE.read_text()

        def configure(moved: Collection[int]) -> None:
            text = render_config(
                template, run_dir, args.address, args.port, upstreams, static, moved
            )
            new = conf.with_name(f".{conf.name}.{os.getpid()}")
            new.write_text(text)
            new.replace(conf)  # nginx, reloading or restarting, never reads half a file

        configure(())
        cmd = [nginx, "-p", str(run_dir), "-c", str(conf), "-e", str(run_dir / "error.log")]
        check = subprocess.run([*cmd, "-t", "-q"], capture_output=True, text=True)
        if check.returncode:
            raise SystemExit(f"nginx rejected {conf}:\n{check.stderr}")
        health = f"http://{local_host(args.address)}:{args.port}/_stcore/health"
        children.append(Child("nginx", args.address, args.port, cmd, run_dir / "error.log", health))
        shown = (
            args.address if args.address not in ("0.0.0.0", "::") else "<this machine's address>"
        )
        url = f"http://{f'[{shown}]' if ':' in shown else shown}:{args.port}/"
    return Supervisor(
        args,
        run_dir,
        children,
        env,
        url,
        remote,
        where=where,
        key=key,
        upstreams=upstreams,
        configure=configure,
    )


def replica_env(args: argparse.Namespace) -> dict[str, str]:
    """The replicas' environment: this one, the store settings, one cookie secret, one
    BLAS thread.

    One cookie secret for all replicas (and all their restarts), so a session that fails
    over keeps a valid XSRF cookie: random per start, or the environment's (the same on
    every host of a multi-host class). It and the store URL (which may hold a password)
    are only in the children's environment, never on a command line or on disk. One BLAS
    thread per replica: the replicas are the parallelism, and a multi-threaded OpenBLAS
    shared by a class's concurrent reruns fights itself for the cores (measured with the
    real-model pages on this 2-core machine: a 16-token SmolLM2 forward took 3.8 s of CPU
    with default threads under load vs 0.16 s with one).
    """
    env = os.environ | {
        "STREAMLIT_SERVER_COOKIE_SECRET": os.environ.get("STREAMLIT_SERVER_COOKIE_SECRET")
        or secrets.token_hex(32),
        "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS", "1"),
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"),
        STORE_ENV: args.store or "",
    }
    if args.data_dir:
        env[DATA_ENV] = str(args.data_dir)
    if args.public_url:
        env[PUBLIC_ENV] = args.public_url
    return env


def identify(args: argparse.Namespace) -> str:
    """The options that name this deployment, for the stop and status commands."""
    if args.run_dir:
        return f"--run-dir {args.run_dir}"
    if args.role == "replicas":
        first = args.replica_port or args.port + 1
        return f"--role replicas --replica-address {args.replica_address} --replica-port {first}"
    return f"--port {args.port}"


def start(args: argparse.Namespace, run_dir: Path, argv: Sequence[str]) -> int:
    """Start (or, without ``--foreground``, launch a detached supervisor that starts) the
    deployment; return once it is healthy."""
    old = read_state(run_dir)
    if old and (
        alive(old.get("supervisor", 0), "serve.py")
        or any(alive(p["pid"], p["name"]) for p in old["procs"])
    ):
        raise SystemExit(
            f"already running ({run_dir}); stop it first: deploy/serve stop {identify(args)}"
        )
    if not args.foreground:
        return launch_detached(argv, args)
    supervisor = plan(args, run_dir)

    def ready() -> None:
        keys = [c.key for c in supervisor.children if c.name == "streamlit"]
        if args.role == "replicas":
            shown = [k.replace("0.0.0.0:", "<this host's address>:") for k in keys]
            print(
                f"ready: {len(keys)} replica(s); the front's nginx: --upstream "
                f"{','.join(shown)}  (run dir {run_dir})",
                flush=True,
            )
        else:
            where = f": {', '.join(keys)}" if keys else ""
            extra = f" + {len(supervisor.remote)} remote" if supervisor.remote else ""
            print(
                f"ready: {supervisor.url}  ({len(keys)} replica(s){where}{extra}; "
                f"run dir {run_dir})",
                flush=True,
            )
        for line in supervisor.where:  # from python -m store check: no password in it
            print(line, flush=True)
        print(lecturer_line(args, supervisor.url, supervisor.key), flush=True)
        if args.role == "replicas":
            print(
                "every app host behind one front needs the same --store postgresql://… "
                "and the same lecturer.key in its data directory",
                flush=True,
            )
        if args.detached:
            print(f"stop with: deploy/serve stop {identify(args)}", flush=True)
            print(f"the supervisor (pid {os.getpid()}) logs to {run_dir / 'serve.log'}", flush=True)
            # Hand the terminal back: from now on this process writes to serve.log, and
            # the launcher, reading our output until it ends, returns.
            log = os.open(run_dir / "serve.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            os.dup2(log, 1)
            os.dup2(log, 2)
            os.close(log)
        else:
            print("Ctrl-C stops everything", flush=True)

    return supervisor.start(ready)


def launch_detached(argv: Sequence[str], args: argparse.Namespace) -> int:
    """Run the supervisor in a session of its own (it outlives this command and the
    terminal); echo what it says until it is ready or gives up. The store URL and the data
    directory (made absolute: the supervisor runs in the repository) go to it in its
    environment, not on its command line (``ps`` shows that to everyone)."""
    cmd = [sys.executable, str(Path(__file__).resolve()), *without_store(argv)]
    cmd += ["--foreground", "--detached"]
    streams = {"stdin": subprocess.DEVNULL, "stdout": subprocess.PIPE, "stderr": subprocess.STDOUT}
    env = os.environ | {STORE_ENV: args.store or ""}
    if args.data_dir:
        env[DATA_ENV] = str(args.data_dir)
    child = subprocess.Popen(cmd, cwd=ROOT, env=env, **streams, text=True, start_new_session=True)
    ready = False
    try:
        assert child.stdout is not None
        for line in child.stdout:
            print(line, end="", flush=True)
            ready = ready or line.startswith("ready: ")
        if ready:
            return 0
        return child.wait(timeout=60) or 1
    except KeyboardInterrupt:
        child.terminate()
        child.wait(timeout=60)
        return 130


def without_store(argv: Sequence[str]) -> list[str]:
    """``argv`` without ``--store`` and ``--data-dir`` and their values (``--store URL``,
    ``--store=URL``, or an abbreviation argparse accepts: ``--st``, ``--da`` up)."""
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
            continue
        name, eq, _ = arg.partition("=")
        if len(name) >= 4 and ("--store".startswith(name) or "--data-dir".startswith(name)):
            skip = not eq
            continue
        out.append(arg)
    return out


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="deploy/serve",
        description="Run N Streamlit replicas of Attention Lab behind nginx, and keep them up.",
    )
    p.add_argument("action", nargs="?", default="start", choices=("start", "stop", "status"))
    role_help = (
        "all: replicas and nginx (the default); replicas: replicas only, on "
        "--replica-address; proxy: nginx only, over --upstream"
    )
    p.add_argument("--role", default="all", choices=ROLES, help=role_help)
    cores_help = "Streamlit processes, about one a core (%(default)s)"
    p.add_argument("--replicas", type=int, default=2, help=cores_help)
    p.add_argument("--port", type=int, default=8080, help="the port nginx listens on (%(default)s)")
    front_help = "nginx listens here (%(default)s); 0.0.0.0: the classroom too"
    p.add_argument("--address", default="127.0.0.1", help=front_help)
    replicas_help = (
        "the replicas listen here (%(default)s); another host's nginx needs this host's address"
    )
    p.add_argument("--replica-address", default="127.0.0.1", help=replicas_help)
    p.add_argument(
        "--replica-port", type=int, default=0, help="first replica port (default: --port + 1)"
    )
    upstream_help = "replicas on other hosts for nginx to balance over (IP addresses)"
    p.add_argument(
        "--upstream", action="append", default=[], metavar="ADDR:PORT[,...]", help=upstream_help
    )
    run_dir_help = (
        "config, pids and logs (default: attention-lab-<uid>-<port> in "
        "$XDG_RUNTIME_DIR or the temp dir)"
    )
    p.add_argument("--run-dir", type=Path, default=None, help=run_dir_help)
    p.add_argument("--nginx", default=None, help="nginx binary (default: PATH, /usr/sbin)")
    p.add_argument("--python", default=None, help="Python with streamlit (default: .venv)")
    p.add_argument(
        "--timeout", type=float, default=120.0, help="seconds to become healthy (%(default)s)"
    )
    data_help = (
        "the data directory: the SQLite store and the lecturer key (default: "
        "$ATTENTION_LAB_DATA or ~/.local/share/attention-lab)"
    )
    p.add_argument("--data-dir", type=Path, default=None, help=data_help)
    store_help = (
        "the store: postgresql://… (default: $ATTENTION_LAB_STORE, better for a password; "
        "unset: SQLite in the data directory)"
    )
    p.add_argument("--store", default=None, metavar="URL", help=store_help)
    public_help = "the address students type, e.g. http://10.0.0.5:8080 (the app shows it)"
    p.add_argument("--public-url", default=None, metavar="URL", help=public_help)
    p.add_argument("--foreground", action="store_true", help="stay; Ctrl-C stops everything")
    p.add_argument("--detached", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if not 1 <= args.replicas <= 32:
        p.error("--replicas must be between 1 and 32")
    try:
        args.upstream = [parse_upstream(u) for arg in args.upstream for u in arg.split(",") if u]
    except ValueError as e:
        p.error(str(e))
    if args.role == "proxy" and not args.upstream and args.action == "start":
        p.error("--role proxy needs the replicas' addresses: --upstream ADDR:PORT[,...]")
    if args.role == "replicas" and args.upstream:
        p.error("--upstream is for nginx: not with --role replicas")
    args.store = (os.environ.get(STORE_ENV, "") if args.store is None else args.store).strip()
    args.store = args.store or None
    if args.data_dir:
        args.data_dir = args.data_dir.expanduser().absolute()
    args.public_url = args.public_url or os.environ.get(PUBLIC_ENV) or None
    if args.public_url:
        public = urllib.parse.urlsplit(args.public_url)
        if public.scheme not in ("http", "https") or not public.hostname:
            p.error(
                f"--public-url: an address such as http://10.0.0.5:8080, not {args.public_url!r}"
            )
    return args


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    first = args.replica_port or args.port + 1
    named = (first, args.role, args.replica_address) if args.role == "replicas" else (args.port,)
    run_dir = (args.run_dir or default_run_dir(*named)).resolve()
    if args.action == "stop":
        return stop(run_dir)
    if args.action == "status":
        return status(run_dir)
    return start(args, run_dir, [a for a in argv if a not in ("--foreground", "--detached")])


if __name__ == "__main__":
    sys.exit(main())
