"""Server memory under a class, and whether it grows (a benchmark, not a test).

    python bench/bench_memory.py [--pages softmax,qkv] [--sessions 30] [--steps 15]
                                 [--runs 2] [--write]

Starts one server, reads its RSS at idle (started, nothing loaded), then runs
``../shared/tools/st_load.py`` ``--runs`` times, identically, per page: ``--sessions``
sessions at once, each moving the first slider ``--steps`` times to a new value
(``--pattern walk``: the caches fill with per-input entries). RSS after each run: with
every ``st.cache_data`` bounded (``max_entries``) and sessions closed, later identical
runs must not keep adding memory.
"""

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from bench_app import write_section  # noqa: E402
from bench_step import start  # noqa: E402

LOAD = ROOT.parent / "shared" / "tools" / "st_load.py"


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024
    return float("nan")


def load_run(url: str, page: str, pid: int, sessions: int, steps: int) -> str:
    cmd = [sys.executable, str(LOAD), "--url", url.rstrip("/"), "--page", page,
           "--query", "lang=en", "--sessions", str(sessions), "--steps", str(steps),
           "--think", "0.5", "--pattern", "walk", "--server-pid", str(pid),
           "--timeout", "180"]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    lines = [x for x in out.stdout.splitlines() if x.strip()]
    return lines[-1] if lines else out.stderr.strip()[-300:]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", default="softmax,qkv")
    ap.add_argument("--sessions", type=int, default=30)
    ap.add_argument("--steps", type=int, default=15)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    load0 = os.getloadavg()
    # Streamlit keeps a closed session 120 s for a reconnect: drop them after 5 s, so the
    # RSS after a run shows what stays (caches), not the sessions that just left.
    proc, url = start(ROOT, "dashboard.py", "--server.disconnectedSessionTTL=5")
    rows = []
    try:
        time.sleep(2)
        idle = rss_mb(proc.pid)
        print(f"idle RSS {idle:.0f} MB", flush=True)
        for page in args.pages.split(","):
            after = []
            for run in range(1, args.runs + 1):
                summary = load_run(url, page, proc.pid, args.sessions, args.steps)
                time.sleep(15)  # closed sessions are dropped (TTL 5 s)
                after.append(rss_mb(proc.pid))
                print(f"{page} run {run}: RSS {after[-1]:.0f} MB | {summary}", flush=True)
            rows.append((page, *after))
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    load1 = os.getloadavg()
    runs = range(1, args.runs + 1)
    table = ["| page | " + " | ".join(f"RSS after run {k} MB" for k in runs)
             + " | growth after run 1 MB |", "|---|" + "---:|" * (args.runs + 1)]  # fmt: skip
    table += [f"| {p} | " + " | ".join(f"{x:.0f}" for x in after)
              + f" | {max(after[1:]) - after[0]:+.0f} |" for p, *after in rows]  # fmt: skip
    print("\n".join(table))
    if args.write:
        head = (
            f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {os.cpu_count()} cores; load "
            f"average {load0[0]:.1f} before, {load1[0]:.1f} after (shared machine).\n\n"
            f"`python bench/bench_memory.py`: one server; idle RSS {idle:.0f} MB (started, no "
            f"page loaded). Per page {args.runs} identical runs of `st_load.py` ({args.sessions} "
            f"sessions at once, {args.steps} slider moves each to new values, "
            "`--pattern walk`; identical runs send identical values), server with "
            "`--server.disconnectedSessionTTL=5` (closed sessions dropped), RSS 15 s after "
            "each run (pages run one after the other on the same server)."
        )
        write_section("server memory: idle, after a class, after a second identical class",
                      head + "\n\n" + "\n".join(table))  # fmt: skip


if __name__ == "__main__":
    main()
