"""Serve Attention Lab to a class: N Streamlit replicas behind nginx, started by one command.

    deploy/serve --replicas 2 --port 8080                 # start, wait until healthy, return
    deploy/serve --replicas 2 --port 8080 --foreground    # the same; Ctrl-C stops everything
    deploy/serve status --port 8080
    deploy/serve stop --port 8080

Each replica is ``streamlit run dashboard.py`` from the project's ``.venv`` on a loopback
port (``--port`` + 1, + 2, ...). nginx (the Debian package) listens on ``--address:--port``
with a config made from ``deploy/nginx.conf.template``: websocket upgrade for
``/_stcore/stream``, sticky sessions through a route cookie, passive health checks. The
config, pid files and logs go to a run directory (``--run-dir``, by default
``$XDG_RUNTIME_DIR`` or the temp dir, ``attention-lab-<uid>-<port>``), never to /etc.
Standard library only.
"""

import argparse
import contextlib
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
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = Path(__file__).with_name("nginx.conf.template")
STATE = "state.json"
NGINX_CANDIDATES = ("/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/local/nginx/sbin/nginx")


@dataclass(frozen=True)
class Proc:
    """One process deploy/serve started: what it is, its pid and where it logs."""

    name: str
    pid: int
    port: int
    log: str


def default_run_dir(port: int) -> Path:
    """The run directory for the deployment on ``port``."""
    base = os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
    return Path(base) / f"attention-lab-{os.getuid()}-{port}"


def render_config(
    template: str, run_dir: Path, address: str, port: int, ports: Sequence[int], static: Path
) -> str:
    """The nginx config: ``template`` with its ``@FIELD@`` placeholders filled in.

    Replica ``i`` (1-based) on ``ports[i - 1]`` has the route ``ri``: the upstream
    ``attention_lab_ri`` sends its sessions there, or to the other replicas (backup) while
    it is down. New visitors go to ``attention_lab`` (least connections over all).
    ``static`` is the directory that holds Streamlit's ``index.html`` and ``static/``.
    """
    health = "max_fails=2 fail_timeout=10s"
    upstreams = ["    upstream attention_lab {", "        zone attention_lab 64k;",
                 "        least_conn;"]  # fmt: skip
    upstreams += [f"        server 127.0.0.1:{p} {health};" for p in ports]
    upstreams += ["        keepalive 32;", "    }"]
    for i, own in enumerate(ports, 1):
        name = f"attention_lab_r{i}"
        upstreams += [f"    upstream {name} {{", f"        zone {name} 64k;",
                      f"        server 127.0.0.1:{own} {health};"]  # fmt: skip
        upstreams += [f"        server 127.0.0.1:{p} backup;" for p in ports if p != own]
        upstreams += ["        keepalive 16;", "    }"]
    host = f"[{address}]" if ":" in address else address
    user = "user root;  # nginx was started by root: keep the workers able to use the run dir"
    fields = {
        "@USER@": user if os.geteuid() == 0 else "",
        "@RUN_DIR@": str(run_dir),
        "@LISTEN@": f"{host}:{port}",
        "@ROUTES@": "\n".join(
            f"        r{i} attention_lab_r{i};" for i in range(1, len(ports) + 1)
        ),
        "@ANSWERED_BY@": "\n".join(f"        127.0.0.1:{p} r{i};" for i, p in enumerate(ports, 1)),
        "@UPSTREAMS@": "\n".join(upstreams),
        "@STREAMLIT_STATIC@": str(static),
    }
    for key, value in fields.items():
        template = template.replace(key, value)
    left = re.findall(r"@[A-Z_]+@", template)
    if left:
        raise ValueError(f"unfilled template fields: {left}")
    return template


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


def healthy(url: str) -> bool:
    """Whether ``url`` (a /_stcore/health address) answers 200 with "ok"."""
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # ignore http_proxy
    try:
        with direct.open(url, timeout=3) as r:
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


def tail(path: str, lines: int = 15) -> str:
    """The last ``lines`` lines of a log file."""
    try:
        return "\n".join(Path(path).read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


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


def stop(run_dir: Path) -> int:
    """``deploy/serve stop``: stop what the state file lists and remove it."""
    state = read_state(run_dir)
    if state is None:
        print(f"nothing to stop: no {STATE} in {run_dir}")
        return 0
    procs = [Proc(**p) for p in state["procs"]]
    stop_procs(procs)
    (run_dir / STATE).unlink(missing_ok=True)
    print(f"stopped {len(procs) - 1} replica(s) and nginx; logs kept in {run_dir}")
    return 0


def status(run_dir: Path) -> int:
    """``deploy/serve status``: each process, alive and healthy or not. 0 if all are."""
    state = read_state(run_dir)
    if state is None:
        print(f"not running: no {STATE} in {run_dir}")
        return 1
    ok = True
    for p in (Proc(**p) for p in state["procs"]):
        up = alive(p.pid, p.name)
        host = loopback_of(state["address"]) if p.name == "nginx" else "127.0.0.1"
        health = healthy(f"http://{host}:{p.port}/_stcore/health") if up else False
        ok = ok and up and health
        print(f"{p.name:8} pid {p.pid:7} port {p.port:5}  {'up' if up else 'DOWN'}"
              f"{', healthy' if health else ', not healthy'}  log {p.log}")  # fmt: skip
    print(f"serving {state['url']}" if ok else "some processes are down or not healthy")
    return 0 if ok else 1


def start(args: argparse.Namespace, run_dir: Path) -> int:
    """Start the replicas and nginx, wait until all are healthy, write the state file."""
    old = read_state(run_dir)
    if old and any(alive(p["pid"], p["name"]) for p in old["procs"]):
        raise SystemExit(f"already running ({run_dir}); stop it first: deploy/serve stop "
                         f"--port {args.port}")  # fmt: skip
    first = args.replica_port or args.port + 1
    ports = list(range(first, first + args.replicas))
    busy = [p for p in ports if not port_free("127.0.0.1", p)]
    busy += [args.port] if not port_free(args.address, args.port) else []
    if busy:
        raise SystemExit(f"port(s) in use: {busy}; choose --port / --replica-port")
    python = args.python or str(ROOT / ".venv" / "bin" / "python")
    if not os.access(python, os.X_OK):
        raise SystemExit(f"{python} not found: run the README's set-up command first")
    nginx = find_nginx(args.nginx)
    make_run_dir(run_dir)
    conf = run_dir / "nginx.conf"
    static = streamlit_static(python)
    conf.write_text(
        render_config(TEMPLATE.read_text(), run_dir, args.address, args.port, ports, static)
    )
    nginx_cmd = [nginx, "-p", str(run_dir), "-c", str(conf), "-e", str(run_dir / "error.log")]
    check = subprocess.run([*nginx_cmd, "-t", "-q"], capture_output=True, text=True)
    if check.returncode:
        raise SystemExit(f"nginx rejected {conf}:\n{check.stderr}")

    # One cookie secret for all replicas, so a session that fails over keeps a valid XSRF
    # cookie. Only in the children's environment, never on a command line or on disk.
    # One BLAS thread per replica: the replicas are the parallelism, and a multi-threaded
    # OpenBLAS shared by a class's concurrent reruns fights itself for the cores (measured
    # with the real-model pages on this 2-core machine: a 16-token SmolLM2 forward took
    # 3.8 s of CPU with default threads under load vs 0.16 s with one).
    env = os.environ | {
        "STREAMLIT_SERVER_COOKIE_SECRET": secrets.token_hex(32),
        "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS", "1"),
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"),
    }
    procs: list[Proc] = []
    for i, port in enumerate(ports, 1):
        log = run_dir / f"replica-{i}.log"
        cmd = [python, "-m", "streamlit", "run", "dashboard.py",
               "--server.address", "127.0.0.1", "--server.port", str(port),
               "--server.headless", "true", "--server.fileWatcherType", "none",
               "--browser.gatherUsageStats", "false"]  # fmt: skip
        with log.open("wb") as out:
            proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True)  # fmt: skip
        procs.append(Proc("streamlit", proc.pid, port, str(log)))
    write_state(run_dir, args, procs)  # from here on, deploy/serve stop can clean up
    try:
        wait_healthy(procs, args.timeout)
        log = run_dir / "nginx.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(nginx_cmd, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
        procs.append(Proc("nginx", proc.pid, args.port, str(run_dir / "error.log")))
        url = write_state(run_dir, args, procs)
        wait_healthy(procs[-1:], args.timeout, host=loopback_of(args.address))
    except BaseException:
        stop_procs(procs)
        (run_dir / STATE).unlink(missing_ok=True)
        raise
    where = f"port {ports[0]}" if len(ports) == 1 else f"ports {ports[0]}-{ports[-1]}"
    print(f"ready: {url}  ({args.replicas} replica(s) on {where}; run dir {run_dir})")
    if not args.foreground:
        print(f"stop with: deploy/serve stop --port {args.port}")
        return 0
    return supervise(procs, run_dir)


def write_state(run_dir: Path, args: argparse.Namespace, procs: Sequence[Proc]) -> str:
    """Record the started processes for stop and status; return the students' URL."""
    shown = args.address if args.address not in ("0.0.0.0", "::") else "<this machine's address>"
    url = f"http://{f'[{shown}]' if ':' in shown else shown}:{args.port}/"
    state = {"url": url, "address": args.address, "procs": [asdict(p) for p in procs]}
    (run_dir / STATE).write_text(json.dumps(state, indent=1))
    return url


def loopback_of(address: str) -> str:
    """Where this machine reaches nginx listening on ``address``."""
    if address in ("0.0.0.0", ""):
        return "127.0.0.1"
    if address == "::":
        return "[::1]"
    return f"[{address}]" if ":" in address else address


def wait_healthy(procs: Sequence[Proc], timeout: float, host: str = "127.0.0.1") -> None:
    """Block until every process answers /_stcore/health; fail early if one exits."""
    deadline = time.monotonic() + timeout
    waiting = list(procs)
    while waiting:
        for p in list(waiting):
            if healthy(f"http://{host}:{p.port}/_stcore/health"):
                waiting.remove(p)
            elif not alive(p.pid, p.name):
                # Look again after a moment: a dying process finishes writing its last
                # words, and a process seen dead once is not taken for dead yet. (A CI run
                # once stopped here on nginx with an empty error log, so nginx had reported
                # nothing: a misread of /proc while nginx rewrites its command line at
                # start-up is the likely cause; that run was not reproduced.)
                time.sleep(0.5)
                if not alive(p.pid, p.name):
                    raise SystemExit(f"{p.name} on port {p.port} exited; its log:\n{tail(p.log)}")
        if waiting and time.monotonic() > deadline:
            names = ", ".join(f"{p.name}:{p.port}" for p in waiting)
            raise SystemExit(f"not healthy after {timeout:.0f} s: {names}")
        if waiting:
            time.sleep(0.3)


def supervise(procs: Sequence[Proc], run_dir: Path) -> int:
    """--foreground: wait for Ctrl-C (or SIGTERM), or for a process to die, then stop all."""
    stopping = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stopping.append(True))
    print("Ctrl-C stops everything")
    while not stopping:
        dead = [p for p in procs if not alive(p.pid, p.name)]
        if dead:
            print(f"{dead[0].name} on port {dead[0].port} exited; stopping. Its log:")
            print(tail(dead[0].log))
            break
        time.sleep(0.5)
    stop(run_dir)
    return 0 if stopping else 1


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="deploy/serve",
        description="Run N Streamlit replicas of Attention Lab behind nginx.",
    )
    p.add_argument("action", nargs="?", default="start", choices=("start", "stop", "status"))
    p.add_argument(
        "--replicas",
        type=int,
        default=2,
        help="Streamlit processes, about one a core (%(default)s)",
    )
    p.add_argument("--port", type=int, default=8080, help="the port nginx listens on (%(default)s)")
    p.add_argument("--address", default="127.0.0.1",
                   help="nginx listens here (%(default)s); 0.0.0.0: the classroom too")  # fmt: skip
    p.add_argument("--replica-port", type=int, default=0,
                   help="first replica port (default: --port + 1)")  # fmt: skip
    p.add_argument("--run-dir", type=Path, default=None,
                   help="config, pids and logs (default: attention-lab-<uid>-<port> in "
                   "$XDG_RUNTIME_DIR or the temp dir)")  # fmt: skip
    p.add_argument("--nginx", default=None, help="nginx binary (default: PATH, /usr/sbin)")
    p.add_argument("--python", default=None, help="Python with streamlit (default: .venv)")
    p.add_argument(
        "--timeout", type=float, default=120.0, help="seconds to become healthy (%(default)s)"
    )
    p.add_argument("--foreground", action="store_true", help="stay; Ctrl-C stops everything")
    args = p.parse_args(argv)
    if not 1 <= args.replicas <= 32:
        p.error("--replicas must be between 1 and 32")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    run_dir = (args.run_dir or default_run_dir(args.port)).resolve()
    if args.action == "stop":
        return stop(run_dir)
    if args.action == "status":
        return status(run_dir)
    return start(args, run_dir)


if __name__ == "__main__":
    sys.exit(main())
