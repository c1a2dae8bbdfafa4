"""Server memory under a class, and whether it grows (a benchmark, not a test).

    python bench/bench_memory.py [--pages softmax,qkv] [--sessions 30] [--steps 15]
                                 [--runs 2] [--write]

Starts one server, reads its RSS at idle (started, nothing loaded), then runs
``$LAB_TOOLS/st_load.py`` ``--runs`` times, identically, per page: ``--sessions``
sessions at once, each moving the first slider ``--steps`` times to a new value
(``--pattern walk``: the caches fill with per-input entries). RSS after each run: with
every ``st.cache_data`` bounded (``max_entries``) and sessions closed, later identical
runs must not keep adding memory.

    python bench/bench_memory.py --cycle 200,1000 [--concurrency 5] [--changes 4]

With ``--cycle``: one server as a replica runs it (``OPENBLAS_NUM_THREADS=1``), its RSS
with every real model loaded (SmolLM2, MiniLM, multilingual-e5: each model page opened
once), then script reruns spread across every page of ``ui/pages.py`` until the counts
given: ``--concurrency`` sessions at a time, each opening the next page in turn and making
``--changes`` changes to it, each to a new value (one numeric slider, in the main area or the
sidebar; on /encoder a new sentence, alternately English/MiniLM and Chinese/e5; on /decoder
also one press of Generate). RSS 15 s after each count (closed sessions dropped): issue 33
asks for <= 1.2 GB, and <= 5 % growth between 200 and 1,000 reruns. It prints the figures
as markdown (``--write`` is for the per-page runs only).
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
from common import rss_mb, tool  # noqa: E402

from ui.pages import available_pages  # noqa: E402


def load_run(url: str, page: str, pid: int, sessions: int, steps: int) -> str:
    cmd = [sys.executable, str(tool("st_load.py")), "--url", url.rstrip("/"), "--page", page]
    cmd += ["--query", "lang=en", "--sessions", str(sessions), "--steps", str(steps)]
    cmd += ["--think", "0.5", "--pattern", "walk", "--server-pid", str(pid), "--timeout", "180"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    lines = [x for x in out.stdout.splitlines() if x.strip()]
    return lines[-1] if lines else out.stderr.strip()[-300:]


def visit_plan(k: int) -> tuple[str, str]:
    """The ``k``-th page visit of the cycle: page URL path and query."""
    pages = [p.url_path.strip("/") for p in available_pages()]
    page = pages[k % len(pages)]
    lap = k // len(pages)
    if page == "encoder":
        return page, "lang=en&model=minilm" if lap % 2 == 0 else "lang=zh"
    if page == "decoder":
        return page, "lang=en&step=4&n_gen=4"
    return page, "lang=en"


def cycle_sentence(k: int, chinese: bool) -> str:
    """A new sentence for every ``k`` (so every rerun misses the per-sentence caches)."""
    import load_models

    words = load_models.ANIMALS_ZH if chinese else load_models.ANIMALS_EN
    a, b = words[k % len(words)], words[(k // len(words)) % len(words)]
    if chinese:
        return f"{a}没有追{b}，它太累了。第{k}次。"
    return f"The {a} didn't chase the {b} because it was too tired, time {k}."


async def visit(url: str, k: int, changes: int, counter: list) -> None:
    """One session: open page ``k`` of the cycle and change it ``changes`` times."""
    import load_models as lm

    page, query = visit_plan(k)
    sim = lm.Student(lm.tool_cfg(url, page, query, 180.0), k)
    try:
        await sim.connect()
        out = await sim.load()
        counter[0] += 1
        if out.exceptions:
            counter[1] += 1
            counter[2].add(f"{page} ({query}): {out.exceptions[0]}"[:300])
        for c in range(changes):
            if page == "encoder":
                text = cycle_sentence(k * changes + c, "zh" in query)
                runs = await sim.drive([(0.0, sim.typed("text", text))], 180.0)
            elif page == "decoder" and c == 0:
                runs = await sim.drive([(0.0, sim.click(lm.GENERATE))], 180.0)
            else:
                sliders = sorted(sim.any_sliders.values(), key=lambda s: s.path)
                if not sliders:
                    break
                s = sliders[k % len(sliders)]  # one slider a visit, as st_load moves one
                golden = (k * 0.37 + c * 0.6180339887498949) % 1.0
                value = lm.sl.snap(s.lo + golden * (s.hi - s.lo), s.lo, s.hi, s.step)
                out = await sim.set_slider(s, [value])
                runs = [out]
                if out.exceptions:
                    counter[1] += 1
                    counter[2].add(
                        f"{page} ({query}) {s.label} = {value}: {out.exceptions[0]}"[:300]
                    )
            counter[0] += 1
            del runs
    except Exception as e:
        counter[1] += 1
        counter[2].add(f"{page} ({query}): {type(e).__name__}: {e}"[:300])
    finally:
        await sim.close()


async def cycle_until(url: str, start_visit: int, target: int, counter: list, args) -> int:
    """Visits from ``start_visit`` on, ``args.concurrency`` at a time, until ``counter``
    has ``target`` reruns; returns the next visit's number."""
    import asyncio

    k = start_visit
    while counter[0] < target:
        batch = [visit(url, k + i, args.changes, counter) for i in range(args.concurrency)]
        await asyncio.wait_for(asyncio.gather(*batch), 900)
        k += args.concurrency
    return k


def cycle(args: argparse.Namespace) -> None:
    """RSS of one replica-like server with every model loaded, after N reruns across pages."""
    import asyncio

    import load_models as lm

    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as deploy/serve runs a replica
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    targets = [int(x) for x in args.cycle.split(",")]
    load0 = os.getloadavg()
    t_start = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    proc, url = start(ROOT, "dashboard.py", "--server.disconnectedSessionTTL=5")
    marks: list[tuple[str, float, float]] = []
    counter: list = [0, 0, set()]  # reruns, errors, what the errors were
    try:
        time.sleep(2)
        marks.append(("started, no page", rss_mb(proc.pid), float("nan")))
        asyncio.run(lm.warm(url.rstrip("/"), 180.0))
        time.sleep(15)  # the warm-up's sessions dropped; the background loader done
        marks.append(("every model loaded (warm-up)", rss_mb(proc.pid), os.getloadavg()[0]))
        print(f"{marks[-1][0]}: RSS {marks[-1][1]:.0f} MB", flush=True)
        k = 0
        for target in targets:
            k = asyncio.run(cycle_until(url.rstrip("/"), k, target, counter, args))
            time.sleep(15)
            marks.append((f"after {counter[0]} reruns", rss_mb(proc.pid), os.getloadavg()[0]))
            print(
                f"{marks[-1][0]} ({k} page visits, errors {counter[1]}: {sorted(counter[2])}): "
                f"RSS {marks[-1][1]:.0f} MB",
                flush=True,
            )
        hwm = hwm_mb(proc.pid)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=20)
    table = ["| when | RSS MB | 1-min load average |", "|---|---:|---:|"]
    table += [f"| {w} | {m:.0f} | {'–' if la != la else f'{la:.1f}'} |" for w, m, la in marks]
    first, *later = marks[2:]  # the first count, then each later one
    growth = "; ".join(
        f"to {w[6:]} {m - first[1]:+.0f} MB ({100 * (m - first[1]) / first[1]:+.1f} %)"
        for w, m, _ in later
    )
    table += [
        "",
        f"Peak (VmHWM) {hwm:.0f} MB; growth from {first[0][6:]}: {growth}; errors {counter[1]}.",
    ]
    head = (
        f"{t_start}; {os.cpu_count()} cores; load average {load0[0]:.1f} at start (shared "
        f"machine). `python bench/bench_memory.py --cycle {args.cycle} --concurrency "
        f"{args.concurrency} --changes {args.changes}`: one `streamlit run` on 127.0.0.1 with "
        "`OPENBLAS_NUM_THREADS=1` (as deploy/serve starts a replica) and "
        "`--server.disconnectedSessionTTL=5`; each model page opened once (SmolLM2, MiniLM, "
        f"multilingual-e5), then page visits across all {len(available_pages())} pages in "
        f"turn, {args.concurrency} sessions at a time, each a page load and {args.changes} "
        "changes to new values (sliders; new sentences on /encoder; Generate, 4 tokens, on "
        "/decoder); RSS 15 s after each count."
    )
    print("\n" + head + "\n\n" + "\n".join(table))


def hwm_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", default="softmax,qkv")
    ap.add_argument("--sessions", type=int, default=30)
    ap.add_argument("--steps", type=int, default=15)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--cycle", default="", help="e.g. 200,1000: RSS after that many reruns")
    ap.add_argument("--concurrency", type=int, default=5, help="--cycle: sessions at a time")
    ap.add_argument("--changes", type=int, default=4, help="--cycle: changes per page visit")
    args = ap.parse_args()
    if args.cycle:
        cycle(args)
        return
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
    table = [
        "| page | "
        + " | ".join(f"RSS after run {k} MB" for k in runs)
        + " | growth after run 1 MB |",
        "|---|" + "---:|" * (args.runs + 1),
    ]
    table += [
        f"| {p} | "
        + " | ".join(f"{x:.0f}" for x in after)
        + f" | {max(after[1:]) - after[0]:+.0f} |"
        for p, *after in rows
    ]
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
        write_section(
            "server memory: idle, after a class, after a second identical class",
            head + "\n\n" + "\n".join(table),
        )


if __name__ == "__main__":
    main()
