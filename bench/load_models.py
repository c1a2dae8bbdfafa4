"""A class on the real-model pages (issues 33 and 42): everyone generates, everyone types.

    .venv/bin/python bench/load_models.py                      # every scenario, 2 replicas
    .venv/bin/python bench/load_models.py --scenarios generate --replicas 2
    .venv/bin/python bench/load_models.py --url http://127.0.0.1:8501 --scenarios type
    .venv/bin/python bench/load_models.py --scenarios generate --act-within 3   # a class's "now"
    OPENBLAS_NUM_THREADS=1 taskset -c 1 .venv/bin/python bench/load_models.py --batch-probe 15

Starts ``deploy/serve --replicas N`` on loopback (or uses ``--url``), opens /decoder and
/encoder (both models) once on every replica so each has loaded its models, and then runs
the scenarios through nginx with browser-less sessions that speak Streamlit's websocket
protocol (``$LAB_TOOLS/st_load.py``'s ``SimSession``, imported from its path):

* ``generate``: ``--sessions`` students open ``/decoder?lang=en&step=4&n_gen=16&prompt=…``
  (each their own prompt) within ``--open-within`` s; once all have loaded, all press
  Generate at the same moment. Per student: the time from the press to the first generated
  token on screen (the first delta of the step's text slot that holds generated text), to
  the last (``script_finished``), the tokens shown, errors.
* ``type``: half the students on ``/encoder?lang=en&model=minilm``, half on
  ``/encoder?lang=zh`` (multilingual-e5-small); once all have loaded, each sets the
  sentence box (``text``) to their own sentence at the same moment. Per student: the time
  until the redrawn step has finished (``script_finished``) and whether the page then
  shows the new sentence's own word (the head readout names its tokens).
* ``abuse``: ``generate`` and ``type`` again, ``--sessions`` - 1 students and two more who
  push the limits: on /decoder one presses Generate 20 times, 0.1 s apart, and one sets a
  10,000-word prompt in the box and generates; on /encoder one sets a 10,000-word sentence
  in the box and one opens the page with 10,000 words in the URL. The students' figures
  must stay within budget.

``--batch-probe N`` measures only what one decoding step costs for N generations under way,
one after the other and batched as the app runs them (:func:`core.batching.decode_batch`).

Budgets (issue 42; 2 replicas, 2 cores): first token p95 <= 1.5 s, all 16 tokens p95 <=
8 s, max <= 1.2 x p95, the busiest replica's CPU <= 8 s per scenario, 0 errors; the typed
sentence redrawn p95 <= 2 s, 0 errors. A generate scenario ends with the line
``generate: students N, first token p95 F s, all tokens p95 A s, replica CPU C s, errors E``.
Only ever talks to 127.0.0.1; every run is bounded in time; every process started is
stopped at the end.
"""

import argparse
import asyncio
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import tool
from load_class import (
    SERVE,
    Sampler,
    cpu_s,
    machine_busy_s,
    rss_mb,
    sessions_per_upstream,
)


def _import_tool(path: Path):
    """``st_load.py`` as a module (a script in $LAB_TOOLS, not a package)."""
    spec = importlib.util.spec_from_file_location("st_load", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["st_load"] = module
    spec.loader.exec_module(module)
    return module


sl = _import_tool(tool("st_load.py"))

# Prompts that each make SmolLM2 write 16 greedy tokens without its end-of-text token
# (checked: every one writes 16), so "all 16 tokens" means 16 for every student.
PROMPTS = (
    "Once upon a time, a little fox lived in a forest where",
    "The best way to learn a new language is to",
    "My grandmother always told me that the secret of good bread is",
    "In the year 2100, cities will be",
    "The old lighthouse keeper looked at the sea and",
    "To make a cup of green tea, you first",
    "The train left the station at midnight, and",
    "Attention in a transformer lets every word",
    "The children ran to the river because",
    "When the rain stopped, the garden",
    "A good teacher is someone who",
    "The robot opened the door and saw",
    "Scientists discovered a new species of frog that",
    "On Monday morning the office was quiet until",
    "The recipe for pancakes needs flour, eggs and",
    "The mountain was so high that the climbers",
    "Our school library has a secret room where",
    "The cat jumped onto the table and knocked over",
    "If I could travel anywhere, I would go to",
    "The first rule of programming is",
    "The museum's newest painting shows a woman who",
    "After the football match, the players",
    "The small village by the lake was famous for",
    "Every night the astronomer pointed her telescope at",
    "The market was full of people selling",
    "The students opened their laptops and started to",
    "Deep in the ocean, a giant squid",
    "The bakery on the corner sells the best",
    "The dragon flew over the castle and",
    "The weather forecast for tomorrow says that",
)
# One sentence per student, each with its own animal (the word checked on the page), in
# the lesson's shape so that the page's question (what does "it" attend to?) still applies.
ANIMALS_EN = (
    "zebra",
    "tiger",
    "horse",
    "rabbit",
    "camel",
    "donkey",
    "turtle",
    "sheep",
    "goat",
    "monkey",
    "panda",
    "wolf",
    "bear",
    "duck",
    "mouse",
    "lion",
)
ANIMALS_ZH = (
    "斑马",
    "老虎",
    "大象",
    "兔子",
    "骆驼",
    "驴",
    "乌龟",
    "羊",
    "山羊",
    "猴子",
    "熊猫",
    "狼",
    "熊",
    "鸭子",
    "老鼠",
    "狮子",
)
GEN_MARK = ":orange-background["  # how the decoder page highlights generated tokens
GENERATE = "Generate"  # ui/locales/en/decoder.toml: decoder.generate
FLOOD_WORDS = 10_000
WIDGETS = ("button", "text_input", "slider", "checkbox", "number_input", "selectbox")


def sentence(i: int) -> tuple[str, str, str]:
    """Student ``i``'s page query, sentence and the word the page must then show."""
    k = i // 2
    if i % 2 == 0:
        animal = ANIMALS_EN[k % len(ANIMALS_EN)]
        text = f"The {animal} didn't cross the street because it was too tired."
        return "lang=en&model=minilm", text, animal
    animal = ANIMALS_ZH[k % len(ANIMALS_ZH)]
    return "lang=zh", f"{animal}没有过马路，它太累了。", animal


def flood(words: int = FLOOD_WORDS) -> str:
    """A pasted essay: ``words`` words, ~60 kB."""
    base = [
        "attention",
        "lets",
        "every",
        "token",
        "look",
        "at",
        "every",
        "other",
        "token",
        "and",
        "mix",
        "what",
        "it",
        "finds",
    ]
    return " ".join(base[i % len(base)] for i in range(words))


@dataclass
class Widget:
    id: str
    fragment_id: str
    kind: str


@dataclass
class Run:
    """One script run started by a request (the chain's last run: a run replaced by a newer
    request, FINISHED_EARLY_FOR_RERUN, is not counted as finished)."""

    t_start: float | None = None  # s after the request was sent
    t_first_gen: float | None = None
    t_finished: float | None = None
    status: int | None = None
    generated: str = ""  # the markdown of the generated text, as last drawn


@dataclass
class Result:
    """One student in one scenario."""

    index: int
    role: str  # student | presser | flood-box | flood-url
    query: str
    loaded: bool = False
    load_s: float | None = None
    first_s: float | None = None  # press -> first generated token on screen
    last_s: float | None = None  # press (or the typed text sent) -> script_finished
    tokens: int | None = None
    shown: bool | None = None  # the typed sentence's word is on the page
    runs: int = 0  # script runs the action caused
    generations: int = 0  # runs that streamed generated text
    warnings: list[str] = field(default_factory=list)
    error: str | None = None


class Student(sl.SimSession):
    """A SimSession that also sees the sidebar's widgets, the page's warnings, and when the
    decoder's text slot first shows generated text."""

    def __init__(self, cfg: argparse.Namespace, index: int) -> None:
        super().__init__(cfg, index)
        self.widgets: dict[str, Widget] = {}
        self.alerts: list[str] = []
        self.texts: list[str] = []
        self.current: Run | None = None
        self.t0 = 0.0
        self.drawn = b""  # the main area's deltas of the last run, serialised
        self.any_sliders: dict[str, sl.SliderInfo] = {}  # main area and sidebar

    def _on_delta(self, msg, out, main, texts, sliders) -> None:
        super()._on_delta(msg, out, main, texts, sliders)
        delta = msg.delta
        if delta.WhichOneof("type") != "new_element":
            return
        el = delta.new_element
        kind = el.WhichOneof("type")
        body = getattr(el, kind) if kind else None
        if kind in WIDGETS:
            self.widgets[body.label] = Widget(body.id, delta.fragment_id, kind)
        if kind == "slider" and not body.options:  # numeric sliders, in any container
            value = list(body.value) if body.set_value else list(body.default)
            self.any_sliders[body.id] = sl.SliderInfo(
                body.id,
                body.label,
                tuple(msg.metadata.delta_path),
                body.min,
                body.max,
                body.step,
                value,
                list(body.default),
                body.data_type,
                body.query_param_key if body.HasField("query_param_key") else None,
                delta.fragment_id,
            )
        elif kind == "alert":
            self.alerts.append(body.body)
        elif kind == "markdown" and GEN_MARK in body.body and self.current is not None:
            if self.current.t_first_gen is None:
                self.current.t_first_gen = time.perf_counter() - self.t0
            self.current.generated = body.body
        if msg.metadata.delta_path and msg.metadata.delta_path[0] == 0:
            self.texts.extend(sl.element_texts(body) if body is not None else [])

    def widget(self, name: str) -> Widget:
        """The widget whose key is ``name``, else the first whose label starts with it."""
        for w in self.widgets.values():
            if w.id.endswith("-" + name):
                return w
        for label, w in self.widgets.items():
            if label.startswith(name):
                return w
        raise sl.AppError(f"no widget {name!r}; have {sorted(self.widgets)}")

    def click(self, label: str) -> sl.ClientState:
        w = self.widget(label)
        state = WidgetState(id=w.id)
        state.trigger_value = True
        return self._client_state([state], fragment_id=w.fragment_id)

    def typed(self, key: str, value: str) -> sl.ClientState:
        """The rerun a browser sends when the text box ``key`` gets ``value`` (its URL
        parameter, also ``key``, is dropped from the query string, as st_load does for a
        bound slider)."""
        w = self.widget(key)
        state = WidgetState(id=w.id)
        state.string_value = value
        self.query_string = sl.drop_query_params(self.query_string, [key])
        return self._client_state([state], fragment_id=w.fragment_id)

    async def drive(
        self, requests: Sequence[tuple[float, sl.ClientState]], timeout: float
    ) -> list[Run]:
        """Send each request at its offset (s) while reading the server's messages; return
        every run that started, once a run that started after the last request finished."""
        self.t0 = time.perf_counter()
        deadline = self.t0 + timeout
        runs: list[Run] = []
        pending = list(requests)
        out = sl.RunOutcome()
        main: dict = {}
        texts: dict = {}
        sliders: dict = {}
        last_sent: float | None = None
        self.texts, self.alerts = [], []
        for _ in range(sl.MAX_MSGS_PER_RUN):
            now = time.perf_counter()
            while pending and now - self.t0 >= pending[0][0]:
                back = BackMsg()
                back.rerun_script.CopyFrom(pending.pop(0)[1])
                await self.ws.send(back.SerializeToString())
                last_sent = time.perf_counter() - self.t0
            if now >= deadline:
                raise TimeoutError
            wait = deadline - now
            if pending:
                wait = min(wait, max(0.0, self.t0 + pending[0][0] - now))
            try:
                raw = await asyncio.wait_for(self.ws.recv(), max(wait, 0.001))
            except TimeoutError:
                continue
            msg = self.cache.resolve(ForwardMsg.FromString(raw), raw)
            if msg is None:
                raise sl.ProtocolError("ref_hash for a message not in the client cache")
            kind = msg.WhichOneof("type")
            t = time.perf_counter() - self.t0
            if kind == "new_session":
                self.current = Run(t_start=t)
                runs.append(self.current)
                self.max_age = msg.new_session.config.max_cached_message_age or self.max_age
                self.texts, self.alerts = [], []
                main.clear()
            elif kind == "navigation" and msg.navigation.page_script_hash:
                self.page_script_hash = msg.navigation.page_script_hash
            elif kind == "page_info_changed":
                self.query_string = msg.page_info_changed.query_string
            elif kind == "delta":
                self._on_delta(msg, out, main, texts, sliders)
            elif kind == "script_finished" and self.current is not None:
                self.current.status = msg.script_finished
                if msg.script_finished == sl.FINISHED_EARLY:
                    continue
                self.current.t_finished = t
                self.cache.on_run_finished(self.max_age)
                started = self.current.t_start or 0.0
                if not pending and last_sent is not None and started >= last_sent:
                    self.drawn = b"".join(main.values())
                    if out.exceptions:
                        raise sl.AppError("; ".join(out.exceptions)[:300])
                    return runs
        raise sl.ProtocolError("too many messages")


def tool_cfg(url: str, page: str, query: str, timeout: float) -> argparse.Namespace:
    return sl.parse_args(
        ["--url", url, "--page", page, "--query", query, "--timeout", str(timeout), "--no-http"]
    )


def percentile(values: Sequence[float], q: float) -> float | None:
    return sl.percentile(list(values), q)


async def open_page(res: Result, url: str, page: str, timeout: float, delay: float) -> Student:
    await asyncio.sleep(delay)
    sim = Student(tool_cfg(url, page, res.query, timeout), res.index)
    t = time.perf_counter()
    await sim.connect()
    out = await sim.load()
    res.load_s = time.perf_counter() - t
    res.warnings += sim.alerts
    if out.exceptions:
        raise sl.AppError("; ".join(out.exceptions)[:300])
    if out.page_not_found:
        raise sl.AppError(f"page not found: {page}")
    res.loaded = True
    return sim


def decoder_query(prompt: str) -> str:
    return urllib.parse.urlencode({"lang": "en", "step": "4", "n_gen": "16", "prompt": prompt})


async def student(
    res: Result,
    args: argparse.Namespace,
    page: str,
    delay: float,
    go: asyncio.Event,
    loaded: list[int],
    action,
) -> None:
    """One student: open the page, wait for the class, act, record."""
    sim = None
    try:
        sim = await open_page(res, args.url, page, args.timeout, delay)
    except Exception as e:
        res.error = f"load: {type(e).__name__}: {e}"[:300]
    finally:
        loaded[0] -= 1
        if loaded[0] == 0:
            go.set()
    try:
        await asyncio.wait_for(go.wait(), args.timeout)
        # everyone at once, or spread over --act-within s (as a class does when told "now")
        await asyncio.sleep(args.act_within * ((res.index * 0.618034) % 1.0))
        if sim is not None and res.error is None:
            await action(sim, res)
    except Exception as e:
        res.error = res.error or f"{type(e).__name__}: {e}"[:300]
    finally:
        if sim is not None:
            await sim.close()


async def generate_action(sim: Student, res: Result, args: argparse.Namespace) -> None:
    presses = 20 if res.role == "presser" else 1
    if res.role == "flood-box":  # the essay in the prompt box, then Generate
        await sim.drive([(0.0, sim.typed("prompt", flood()))], args.timeout)
        res.warnings += sim.alerts
    requests = [(0.1 * k, sim.click(GENERATE)) for k in range(presses)]
    runs = await sim.drive(requests, args.timeout)
    res.runs = len(runs)
    gens = [r for r in runs if r.t_first_gen is not None]
    res.generations = len(gens)
    res.warnings += sim.alerts
    if not gens:
        raise sl.AppError("no generated text on screen")
    res.first_s = gens[0].t_first_gen
    res.last_s = runs[-1].t_finished
    res.tokens = gens[-1].generated.count(GEN_MARK)


async def type_action(
    sim: Student, res: Result, args: argparse.Namespace, text: str, word: str
) -> None:
    runs = await sim.drive([(0.0, sim.typed("text", text))], args.timeout)
    res.runs = len(runs)
    res.last_s = runs[-1].t_finished
    res.warnings += sim.alerts
    res.shown = word.encode() in sim.drawn  # in the charts' data or a text
    if res.role == "student" and not res.shown:
        raise sl.AppError(f"the page does not show {word!r} after typing it")


async def scenario(args: argparse.Namespace, name: str, abuse: bool) -> list[Result]:
    """``name`` (generate | type) for ``args.sessions`` students, plus two abusers."""
    n = args.sessions
    roles = ["student"] * (n - 1 if abuse else n)
    if abuse:  # n - 1 students, and two who push the limits
        roles += ["presser", "flood-box"] if name == "generate" else ["flood-box", "flood-url"]
    results, tasks = [], []
    go, loaded = asyncio.Event(), [len(roles)]
    spread = args.open_within / max(1, len(roles) - 1)
    for i, role in enumerate(roles):
        delay = i * spread
        if name == "generate":
            prompt = PROMPTS[i % len(PROMPTS)]
            res = Result(i, role, decoder_query(prompt))
            act = lambda sim, r: generate_action(sim, r, args)  # noqa: E731
            page = "decoder"
        else:
            query, text, word = sentence(i)
            if role == "flood-box":
                text = flood()
            if role == "flood-url":
                query += "&" + urllib.parse.urlencode({"text": flood()})
            res = Result(i, role, query)
            act = (lambda t, w: lambda sim, r: type_action(sim, r, args, t, w))(text, word)
            page = "encoder"
        results.append(res)
        tasks.append(student(res, args, page, delay, go, loaded, act))
    await asyncio.wait_for(asyncio.gather(*tasks), args.max_duration)
    return results


def summary(results: Sequence[Result], generate: bool) -> dict:
    """p50/p95/max of the students' (not the abusers') figures, errors of everyone."""
    ok = [r for r in results if r.role == "student" and r.error is None]
    out: dict = {
        "students": sum(r.role == "student" for r in results),
        "ok": len(ok),
        "errors": sum(r.error is not None for r in results),
        "sample_errors": sorted({r.error for r in results if r.error})[:5],
    }
    series = {"load": [r.load_s for r in ok], "last": [r.last_s for r in ok]}
    if generate:
        series["first"] = [r.first_s for r in ok]
        out["tokens"] = sorted({r.tokens for r in ok})
    for key, values in series.items():
        values = [v for v in values if v is not None]
        out[key] = {
            "p50": percentile(values, 50),
            "p95": percentile(values, 95),
            "max": max(values, default=None),
        }
    out["abusers"] = [asdict(r) | {"query": r.query[:80]} for r in results if r.role != "student"]
    return out


def s_(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


FIRST_P95 = 1.5  # s, issue 42's budgets
ALL_P95 = 8.0
REPLICA_CPU = 8.0  # s per scenario
MAX_OVER_P95 = 1.2
REDRAWN_P95 = 2.0


def verdict(s: dict, generate: bool, cpu: float) -> list[str]:
    """Each budget of issue 42 with the figure and whether it is met (``cpu``: the busiest
    replica's CPU seconds in the scenario)."""

    def line(name: str, value: float | None, limit: float) -> str:
        met = value is not None and value <= limit
        return f"{name} {s_(value)} s ({'within' if met else 'NOT within'} <= {limit:g} s)"

    out = []
    if generate:
        first, last = s["first"], s["last"]
        out += [
            line("first token p95", first["p95"], FIRST_P95),
            line("all 16 tokens p95", last["p95"], ALL_P95),
            line("replica CPU", cpu, REPLICA_CPU),
        ]
        if last["p95"]:
            ratio = (last["max"] or 0) / last["p95"]
            met = ratio <= MAX_OVER_P95
            out.append(
                f"max/p95 {ratio:.2f} ({'within' if met else 'NOT within'} <= {MAX_OVER_P95})"
            )
    else:
        out.append(line("redrawn p95", s["last"]["p95"], REDRAWN_P95))
    out.append(f"errors {s['errors']} ({'within' if s['errors'] == 0 else 'NOT within'} 0)")
    return out


# --------------------------------------------------------------------------------------
# The deployment
# --------------------------------------------------------------------------------------


def start_deploy(args: argparse.Namespace, run_dir: Path) -> list[dict]:
    """deploy/serve with ``args.replicas`` on loopback; the replicas' procs."""
    common = ["--port", str(args.port), "--run-dir", str(run_dir)]
    started = subprocess.run(
        [str(SERVE), "--replicas", str(args.replicas), *common],
        capture_output=True,
        text=True,
        timeout=300,
    )
    print(started.stdout.strip() or started.stderr.strip(), flush=True)
    if started.returncode:
        raise SystemExit(f"deploy/serve failed:\n{started.stderr}")
    procs = json.loads((run_dir / "state.json").read_text())["procs"]
    return [p for p in procs if p["name"] == "streamlit"]


def stop_deploy(args: argparse.Namespace, run_dir: Path) -> None:
    common = ["--port", str(args.port), "--run-dir", str(run_dir)]
    subprocess.run([str(SERVE), "stop", *common], capture_output=True, timeout=120)


async def warm(url: str, timeout: float) -> None:
    """Open each model page once, so the replica behind ``url`` has loaded every model."""
    pages = [
        ("decoder", decoder_query(PROMPTS[0])),
        ("encoder", "lang=en&model=minilm"),
        ("encoder", "lang=zh"),
    ]
    for page, query in pages:
        sim = Student(tool_cfg(url, page, query, timeout), 0)
        try:
            await sim.connect()
            await sim.load()
        finally:
            await sim.close()


def thread_env(pid: int) -> str:
    """The BLAS/OpenMP thread settings a replica runs with (from its environment)."""
    try:
        env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return "?"
    keys = (b"OPENBLAS_NUM_THREADS", b"OMP_NUM_THREADS", b"MKL_NUM_THREADS")
    found = [e.decode() for e in env if e.split(b"=", 1)[0] in keys]
    return ", ".join(found) or "none set"


def run_scenario(
    args: argparse.Namespace, name: str, abuse: bool, replicas: Sequence[dict], log: Path | None
) -> dict:
    """One scenario, with the replicas' CPU and peak RSS, the sessions nginx sent to each,
    the machine's busy time and the load average around it."""
    pids = [p["pid"] for p in replicas]
    offset = log.stat().st_size if log else 0
    cpu0 = {pid: cpu_s(pid) for pid in pids}
    busy0, t0, load0 = machine_busy_s(), time.monotonic(), os.getloadavg()
    client0 = time.process_time()
    with Sampler(pids) as sampler:
        results = asyncio.run(scenario(args, name, abuse))
    wall = time.monotonic() - t0
    busy = machine_busy_s() - busy0
    client = time.process_time() - client0
    cpu = {pid: cpu_s(pid) - cpu0[pid] for pid in pids}
    per = sessions_per_upstream(log, offset) if log else {}
    return {
        "scenario": name + (" + abusers" if abuse else ""),
        "summary": summary(results, name == "generate"),
        "wall_s": wall,
        "replicas": [
            {
                "port": p["port"],
                "sessions": per.get(str(p["port"]), 0),
                "cpu_s": cpu[p["pid"]],
                "peak_mb": sampler.peak.get(p["pid"], 0.0),
            }
            for p in replicas
        ],
        "machine_busy_pct": 100 * busy / wall,
        "others_pct": 100 * (busy - client - sum(cpu.values())) / wall,
        "client_cpu_s": client,
        "loadavg_before": load0,
        "loadavg_after": os.getloadavg(),
        "results": [asdict(r) for r in results],
    }


def report(row: dict) -> str:
    """The scenario's figures, as a person reads them in the terminal."""
    s = row["summary"]
    generate = "first" in s
    out = [
        f"== {row['scenario']}: {s['ok']}/{s['students']} students ok, errors {s['errors']}, "
        f"page load p50 {s_(s['load']['p50'])} / p95 {s_(s['load']['p95'])} s"
    ]
    last = s["last"]
    if generate:
        first = s["first"]
        out.append(
            f"first token p50 {s_(first['p50'])} / p95 {s_(first['p95'])} / max "
            f"{s_(first['max'])} s; all tokens p50 {s_(last['p50'])} / p95 {s_(last['p95'])} / "
            f"max {s_(last['max'])} s; tokens per student {s['tokens']}"
        )
    else:
        out.append(
            f"redrawn p50 {s_(last['p50'])} / p95 {s_(last['p95'])} / max {s_(last['max'])} s"
        )
    for a in s["abusers"]:
        out.append(
            f"  {a['role']}: script runs {a['runs']}, generations {a['generations']}, last "
            f"{s_(a['last_s'])} s, error {a['error']}, warnings "
            f"{sorted({w[:100] for w in a['warnings']})}"
        )
    out += [f"  error: {e}" for e in s["sample_errors"]]
    cpu = max((r["cpu_s"] for r in row["replicas"]), default=0.0)
    out.append("  " + "; ".join(verdict(s, generate, cpu)))
    reps = "; ".join(
        f":{r['port']} {r['sessions']} sessions, CPU {r['cpu_s']:.1f} s, peak RSS "
        f"{r['peak_mb']:.0f} MB"
        for r in row["replicas"]
    )
    out.append(
        f"  wall {row['wall_s']:.1f} s; {reps}; load generator CPU {row['client_cpu_s']:.1f} s; "
        f"machine busy {row['machine_busy_pct']:.0f}% of a core, nginx and others "
        f"{row['others_pct']:.0f}%; load average "
        f"{row['loadavg_before'][0]:.2f} -> {row['loadavg_after'][0]:.2f}"
    )
    if generate:  # the line issue 42 asks for (the busiest replica's CPU)
        out.append(
            f"generate: students {s['students']}, first token p95 {s_(s['first']['p95'])} s, "
            f"all tokens p95 {s_(last['p95'])} s, replica CPU {cpu:.2f} s, errors {s['errors']}"
        )
    return "\n".join(out)


def markdown(rows: Sequence[dict]) -> str:
    """One table row per scenario (seconds), for bench/RESULTS.md."""
    out = [
        "| scenario | students ok | errors | first token p50 / p95 / max | all tokens or redrawn "
        "p50 / p95 / max | replica CPU s | load generator CPU s | machine busy, % of a core "
        "| nginx and others, % of a core | load average before → after |",
        "|---|---:|---:|---|---|---|---:|---:|---:|---|",
    ]
    for row in rows:
        s = row["summary"]

        def three(key: str, s: dict = s) -> str:
            if key not in s:
                return "–"
            return " / ".join(s_(s[key][q]) for q in ("p50", "p95", "max"))

        cpu = " + ".join(f"{r['cpu_s']:.1f}" for r in row["replicas"]) or "–"
        la, lb = row["loadavg_before"][0], row["loadavg_after"][0]
        out.append(
            f"| {row['scenario']} | {s['ok']}/{s['students']} | {s['errors']} | {three('first')} "
            f"| {three('last')} | {cpu} | {row['client_cpu_s']:.1f} "
            f"| {row['machine_busy_pct']:.0f} | {row['others_pct']:.0f} | {la:.2f} → {lb:.2f} |"
        )
    return "\n".join(out)


def batch_probe(sessions: int, repeats: int = 5) -> str:
    """What one decoding step costs for ``sessions`` generations under way: one after the
    other, and as the app runs them, one batched step that reads the weights once for all
    (:func:`core.batching.decode_batch`), in CPU seconds of this process. Run it on one
    core with OPENBLAS_NUM_THREADS=1."""
    import numpy as np

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import core.llama as llama
    from core import batching
    from models import smollm

    m = smollm.load()
    w = m.weights
    prompts = [smollm.encode(m, PROMPTS[k % len(PROMPTS)]) for k in range(sessions)]
    reads = batching.read(w, prompts)
    tokens = [int(np.argmax(r.logits)) for r in reads]
    caches = [r.caches for r in reads]

    def one_by_one() -> list[int]:
        return [
            int(np.argmax(llama.decode(w, [tok], c)[0][-1]))
            for tok, c in zip(tokens, caches, strict=True)
        ]

    def batched() -> list[int]:
        logits, _ = batching.decode_batch(w, tokens, caches)
        return [int(t) for t in np.argmax(logits, axis=-1)]

    same = one_by_one() == batched()

    def cost(fn) -> float:
        times = []
        for _ in range(repeats):
            start = time.process_time()
            fn()
            times.append(time.process_time() - start)
        return min(times)

    apart, together = cost(one_by_one), cost(batched)
    return (
        f"{sessions} generations, one decoding step each ({thread_env(os.getpid())}): one after "
        f"the other {1000 * apart:.0f} ms CPU, batched {1000 * together:.0f} ms CPU "
        f"({apart / together:.1f}x); same tokens: {same}"
    )


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--scenarios", default="generate,type,abuse", help="generate, type, abuse (%(default)s)"
    )
    p.add_argument("--replicas", type=int, default=2, help="replicas (%(default)s)")
    p.add_argument("--sessions", type=int, default=30, help="students (%(default)s)")
    p.add_argument(
        "--open-within",
        type=float,
        default=5.0,
        help="the students open the page within this many s (%(default)s)",
    )
    p.add_argument(
        "--act-within",
        type=float,
        default=0.0,
        help="the students press Generate / type within this many s; 0 = at the same moment",
    )
    p.add_argument("--port", type=int, default=8861, help="nginx port (%(default)s)")
    p.add_argument(
        "--url",
        default=None,
        help="use this running server (loopback) instead of starting deploy/serve",
    )
    p.add_argument("--timeout", type=float, default=120.0, help="per action, s (%(default)s)")
    p.add_argument(
        "--max-duration", type=float, default=600.0, help="bound for one scenario, s (%(default)s)"
    )
    p.add_argument("--pause", type=float, default=5.0, help="s between scenarios (%(default)s)")
    p.add_argument("--json", type=Path, default=None, help="write every figure here")
    p.add_argument(
        "--batch-probe",
        type=int,
        default=0,
        help="only measure one decoding step for this many generations, apart and batched",
    )
    args = p.parse_args(argv)
    if args.url and not sl.is_loopback(urllib.parse.urlsplit(args.url).hostname or ""):
        p.error("--url must be a loopback address")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.batch_probe:
        print(batch_probe(args.batch_probe))
        return 0
    print(
        f"{os.cpu_count()} cores; load average at start "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}",
        flush=True,
    )
    plan = []
    for name in args.scenarios.split(","):
        plan += [("generate", True), ("type", True)] if name == "abuse" else [(name, False)]
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="load_models-") as tmp:
        run_dir, replicas, deployed = Path(tmp) / "deploy", [], not args.url
        try:
            if deployed:
                replicas = start_deploy(args, run_dir)
                pids = [p["pid"] for p in replicas]
                print("replica threads: " + "; ".join(thread_env(p) for p in pids), flush=True)
                for p in replicas:
                    asyncio.run(warm(f"http://127.0.0.1:{p['port']}", args.timeout))
                print("replicas warm: RSS MB " + ", ".join(f"{rss_mb(p):.0f}" for p in pids))
                args.url = f"http://127.0.0.1:{args.port}"
            log = run_dir / "access.log" if deployed else None
            for k, (name, abuse) in enumerate(plan):
                if k:
                    time.sleep(args.pause)
                rows.append(run_scenario(args, name, abuse, replicas, log))
                print(report(rows[-1]), flush=True)
        finally:
            if deployed:
                stop_deploy(args, run_dir)
    print("\n" + markdown(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, default=str))
    return 0 if all(r["summary"]["errors"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
