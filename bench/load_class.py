"""A class of 30 through the deployment recipe: 1 replica vs 2 behind nginx (issue 9).

    .venv/bin/python bench/load_class.py                       # replicas 1 and 2, 30 sessions
    .venv/bin/python bench/load_class.py --replicas 2 --out artifacts/deploy/load_class.md

For each replica count it starts ``deploy/serve`` on loopback, warms every replica with
one session of its own, and then runs ``$LAB_TOOLS/st_load.py`` through nginx twice,
identically: ``--sessions`` sessions open the page at once, then move its first slider
every ``--think`` s. It reports the tool's step p50/p95 and first-load p95 and errors, and
per replica what the tool cannot see behind a proxy: CPU seconds (and % of one core)
during each run, peak RSS, RSS at idle (after the warm-up), after run 1 and after run 2,
and how many sessions nginx sent to it. Also the CPU of nginx, of the load generator and
of every other process on the machine (a shared machine makes the numbers pessimistic),
and the load average. Only ever talks to 127.0.0.1. Needs ``websockets`` in the venv.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from common import TOOLS

ROOT = Path(__file__).resolve().parents[1]
SERVE = ROOT / "deploy" / "serve"
TOOL = TOOLS / "st_load.py"  # TOOLS: $LAB_TOOLS (common.py)
TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    """utime + stime of ``pid`` in seconds (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICK


def with_children(pid: int) -> list[int]:
    """``pid`` and its direct children (nginx's master and its worker)."""
    kids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                kids.append(int(stat.parent.name))
        except (OSError, ValueError):
            continue
    return [pid, *kids]


def rss_mb(pid: int) -> float:
    """VmRSS of ``pid`` in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def machine_busy_s() -> float:
    """CPU seconds all processes have used since boot (from /proc/stat)."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]  # idle + iowait
    return (sum(values[:8]) - idle) / TICK


@dataclass
class Sampler:
    """Peak RSS of some processes, sampled in a thread while a run goes on."""

    pids: Sequence[int]
    interval: float = 0.2
    peak: dict[int, float] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)

    def __enter__(self) -> "Sampler":
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            for pid in self.pids:
                self.peak[pid] = max(self.peak.get(pid, 0.0), rss_mb(pid))
            self._stop.wait(self.interval)

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


def st_load(
    args: argparse.Namespace,
    url: str,
    sessions: int,
    steps: int,
    json_path: Path,
    extra: Sequence[str] = (),
) -> subprocess.Popen:
    cmd = [sys.executable, str(args.tool), "--url", url, "--page", args.page]
    cmd += ["--query", args.query, "--sessions", str(sessions), "--steps", str(steps)]
    cmd += ["--think", str(args.think), "--json", str(json_path), *extra]
    if args.expect:
        cmd += ["--expect", args.expect]
    return subprocess.Popen(
        cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def sessions_per_upstream(log: Path, offset: int) -> Counter:
    """Websocket sessions per replica port in nginx's access log after ``offset`` bytes."""
    counts: Counter = Counter()
    with log.open("rb") as f:
        f.seek(offset)
        for line in f.read().decode(errors="replace").splitlines():
            if '"GET /_stcore/stream ' in line and " 101 " in line:
                counts[line.rsplit("upstream=", 1)[1].split()[0].rsplit(":", 1)[1]] += 1
    return counts


def measure(args: argparse.Namespace, replicas: int, work: Path) -> list[dict]:
    """Start the deployment with ``replicas``, warm it, run the class twice, stop it."""
    run_dir = work / f"deploy-{replicas}"
    common = ["--port", str(args.port), "--run-dir", str(run_dir)]
    cmd = [str(SERVE), "--replicas", str(replicas), *common]
    started = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    print(started.stdout.strip() or started.stderr.strip(), flush=True)
    if started.returncode:
        raise SystemExit(f"deploy/serve failed:\n{started.stderr}")
    try:
        procs = json.loads((run_dir / "state.json").read_text())["procs"]
        replica = [p for p in procs if p["name"] == "streamlit"]
        nginx = next(p for p in procs if p["name"] == "nginx")
        for p in replica:  # each replica loads the page once before the class arrives
            warm = st_load(
                args, f"http://127.0.0.1:{p['port']}", 1, 2, work / "warm.json", ["--warmup", "0"]
            )
            warm.communicate()
        time.sleep(args.settle)
        idle = {p["pid"]: rss_mb(p["pid"]) for p in replica}
        rows = []
        for run in (1, 2):
            time.sleep(args.pause if run == 2 else 0)
            log_offset = (run_dir / "access.log").stat().st_size
            pids = [p["pid"] for p in replica]
            nginx_pids = with_children(nginx["pid"])
            cpu0 = {pid: cpu_s(pid) for pid in [*pids, *nginx_pids]}
            busy0, t0, load0 = machine_busy_s(), time.monotonic(), os.getloadavg()
            out = work / f"r{replicas}-run{run}.json"
            children0 = children_cpu_s()
            with Sampler(pids) as sampler:
                url, extra = f"http://127.0.0.1:{args.port}", ["--warmup", "0", *args.st_load_args]
                proc = st_load(args, url, args.sessions, args.steps, out, extra)
                text, _ = proc.communicate()
            client = children_cpu_s() - children0  # the load generator, once reaped
            wall = time.monotonic() - t0
            cpu = {pid: cpu_s(pid) - cpu0[pid] for pid in cpu0}
            busy = machine_busy_s() - busy0
            time.sleep(args.settle)
            summary = json.loads(out.read_text())["runs"][0]["summary"]
            if args.verbose:
                print(text)
            per = sessions_per_upstream(run_dir / "access.log", log_offset)
            row = {
                "replicas": replicas,
                "run": run,
                "wall_s": wall,
                "summary": summary,
                "replica": [
                    {
                        "port": p["port"],
                        "cpu_s": cpu[p["pid"]],
                        "cpu_pct": 100 * cpu[p["pid"]] / wall,
                        "peak_mb": sampler.peak.get(p["pid"], 0.0),
                        "idle_mb": idle[p["pid"]],
                        "after_mb": rss_mb(p["pid"]),
                        "sessions": per.get(str(p["port"]), 0),
                    }
                    for p in replica
                ],
                "nginx_cpu_s": sum(cpu[pid] for pid in nginx_pids),
                "client_cpu_s": client,
                "others_pct": 100 * (busy - sum(cpu.values()) - client) / wall,
                "loadavg_before": load0,
                "loadavg_after": os.getloadavg(),
            }
            rows.append(row)
            print(line(rows[-1]), flush=True)
        return rows
    finally:
        subprocess.run([str(SERVE), "stop", *common], cwd=ROOT, capture_output=True)


def children_cpu_s() -> float:
    """CPU seconds of this process's reaped children so far."""
    usage = os.times()
    return usage.children_user + usage.children_system


def ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{1000 * seconds:.0f}"


def line(row: dict) -> str:
    """One row, as a person reads it in the terminal."""
    s = row["summary"]
    reps = "; ".join(
        f":{r['port']} {r['sessions']} sess, CPU {r['cpu_s']:.1f} s ({r['cpu_pct']:.0f}%), "
        f"peak {r['peak_mb']:.0f} MB"
        for r in row["replica"]
    )
    return (
        f"{row['replicas']} replica(s), run {row['run']}: steps {s['steps_done']}/"
        f"{s['steps_planned']}, errors {s['errors']}, load p95 {ms(s['load_p95'])} ms, "
        f"step p50 {ms(s['p50'])} / p95 {ms(s['p95'])} ms; {reps}; "
        f"load avg {row['loadavg_after'][0]:.2f}"
        + "".join(f"\n  error: {e}" for e in s["sample_errors"])
    )


def per_run(row: dict) -> float:
    """Replica CPU seconds per script run (page loads and slider steps) in ``row``."""
    s = row["summary"]
    return sum(r["cpu_s"] for r in row["replica"]) / max(1, s["steps_done"] + s["loaded"])


def markdown(rows: Sequence[dict], args: argparse.Namespace) -> str:
    """The results as a section for bench/RESULTS.md."""
    uname = os.uname()
    lines = Path("/proc/cpuinfo").read_text().splitlines()
    cpu = next((ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("model name")), "?")
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    out = [
        "## A class through the deployment recipe: 1 vs 2 replicas behind nginx",
        "",
        f"`.venv/bin/python bench/load_class.py` ({stamp}): `deploy/serve --replicas N` on "
        "loopback, each replica warmed with one session, "
        f"then `st_load.py` through nginx: {args.sessions} sessions open /{args.page} at once "
        f"and move its first slider every {args.think} s, {args.steps} steps each; the same "
        f"run twice. Machine: {uname.machine}, {os.cpu_count()} cores ({cpu}), "
        f"Linux {uname.release}, Python {sys.version.split()[0]}.",
        "",
        "| replicas | run | steps | errors | load p50 ms | load p95 ms | step p50 ms "
        "| step p95 ms | step max ms | replica CPU ms a run | load avg before → after "
        "| other processes, % of a core |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for r in rows:
        s = r["summary"]
        la, lb = r["loadavg_before"], r["loadavg_after"]
        out.append(
            f"| {r['replicas']} | {r['run']} | {s['steps_done']}/{s['steps_planned']} "
            f"| {s['errors']} | {ms(s['load_p50'])} | {ms(s['load_p95'])} | {ms(s['p50'])} "
            f"| {ms(s['p95'])} | {ms(s['max'])} | {ms(per_run(r))} | {la[0]:.2f} → {lb[0]:.2f} "
            f"| {r['others_pct']:.0f} |"
        )
    out += [
        "",
        "Replica CPU a run = the replicas' CPU time over the run / (slider steps + page "
        "loads): what one script run costs the server (less sensitive to a shared machine than "
        "the latencies).",
        "",
        "Per replica (CPU over the whole run incl. page loads; RSS in MB: idle = after the "
        "warm-up, before run 1):",
        "",
        "| replicas | run | replica | sessions | CPU s | % of a core | peak RSS | idle RSS "
        "| RSS after run | nginx CPU s | load generator CPU s |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        for i, rep in enumerate(r["replica"], 1):
            out.append(
                f"| {r['replicas']} | {r['run']} | {i} | {rep['sessions']} | {rep['cpu_s']:.1f} "
                f"| {rep['cpu_pct']:.0f} | {rep['peak_mb']:.0f} | {rep['idle_mb']:.0f} "
                f"| {rep['after_mb']:.0f} | {r['nginx_cpu_s']:.2f} | {r['client_cpu_s']:.1f} |"
            )
    growth = [
        b["after_mb"] - a["after_mb"]
        for n in sorted({r["replicas"] for r in rows})
        for a, b in zip(*(x["replica"] for x in rows if x["replicas"] == n), strict=True)
    ]
    for n in sorted({r["replicas"] for r in rows}):
        runs = [r["summary"] for r in rows if r["replicas"] == n]
        p95, load95 = max(x["p95"] or 1e9 for x in runs), max(x["load_p95"] or 1e9 for x in runs)
        errors = sum(x["errors"] for x in runs)
        out += [
            "",
            f"Issue 9 goal 3 with {n} replica(s), worse of the two runs: step p95 "
            f"{ms(p95)} ms ({'met' if p95 <= 1 else 'not met'}, ≤ 1000), first load p95 "
            f"{ms(load95)} ms ({'met' if load95 <= 3 else 'not met'}, ≤ 3000), errors "
            f"{errors} ({'met' if errors == 0 else 'not met'}).",
        ]
    if growth:
        out += [
            "",
            f"RSS growth from run 1 to run 2, per replica: median "
            f"{statistics.median(growth):+.0f} MB, max {max(growth):+.0f} MB.",
        ]
    return "\n".join(out) + "\n"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--replicas", default="1,2", help="replica counts to compare (%(default)s)")
    p.add_argument("--sessions", type=int, default=30, help="students (%(default)s)")
    p.add_argument("--steps", type=int, default=20, help="slider moves each (%(default)s)")
    p.add_argument("--think", type=float, default=0.5, help="s between moves (%(default)s)")
    p.add_argument("--page", default="softmax", help="page URL path (%(default)s)")
    p.add_argument("--query", default="lang=en", help="query string (%(default)s)")
    expect_help = "text every step must show, '' for none (%(default)s)"
    p.add_argument("--expect", default="At T = {v:.2f}", help=expect_help)
    p.add_argument("--port", type=int, default=8790, help="nginx port (%(default)s)")
    p.add_argument("--pause", type=float, default=5.0, help="s between runs (%(default)s)")
    p.add_argument("--settle", type=float, default=3.0, help="s before reading idle RSS")
    p.add_argument("--tool", type=Path, default=TOOL, help="st_load.py (%(default)s)")
    p.add_argument("--out", type=Path, default=None, help="also write the markdown here")
    keep_help = "keep st_load's JSON and the nginx logs in this directory"
    p.add_argument("--keep", type=Path, default=None, help=keep_help)
    p.add_argument("-v", "--verbose", action="store_true", help="print st_load's own output")
    p.add_argument("st_load_args", nargs="*", help="after --: more st_load.py options")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="load_class-") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        for n in (int(x) for x in args.replicas.split(",")):
            rows += measure(args, n, work)
    text = markdown(rows, args)
    print("\n" + text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    return 0 if all(r["summary"]["errors"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
