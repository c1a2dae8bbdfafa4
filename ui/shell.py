"""The frame around every page: page config, sidebar (language, presenter mode, navigation).

Every page starts with ``ctx = shell("softmax")``. Language and presenter mode live in the
URL (``?lang=zh&present=1``) so a bookmarked lecture link restores them, and every
navigation link carries them along.
"""

import gc
from html import escape
from pathlib import Path
from urllib.parse import urlencode

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from ui import ask, loaded
from ui.blocks import carried
from ui.context import PageContext
from ui.i18n import LANGUAGE_NAMES, LANGUAGES, Translator, browser_language
from ui.pages import SECTIONS, available_pages, page_info
from ui.params import forget_controls
from ui.safe import plain

# Presenter mode: type for the back of the hall, and as little chrome above the step as
# possible (small top bar, a modest page title, tighter gaps) so that each step fits one
# 1920 x 1080 slide (SLIDE). The step bar's labels wrap instead of being cut off. A smaller
# screen (a 1366 x 768 laptop driving the projector, a window that is not full screen) shows
# the same slide scaled down as a whole (ZOOM_JS): text, charts and gaps shrink together,
# so a step that fits the projector fits the laptop, as a mirrored screen would show it.
# The zoom is set on the page's content, not on the whole app: Streamlit sizes the app to
# the window with vh units, which a zoomed ancestor would scale too (the page would end at
# 71 % of the screen). Nobody scrolls a chart box with a clicker: a chart is still never
# drawn wider than its column.
# The tab icon ships with the app: a Material icon name would be fetched from a font CDN,
# which fails in a hall without internet.
ICON = Path(__file__).resolve().parent.parent / "static" / "icon.png"
PRESENTER_CSS = """
<style>
html { font-size: 22px; }
.stApp [data-testid="stMarkdownContainer"] p,
.stApp [data-testid="stMarkdownContainer"] li { font-size: 1.15rem; line-height: 1.45; }
.stApp [data-testid="stWidgetLabel"] p { font-size: 1rem; }
.stApp [data-testid="stMetricValue"] [data-testid="stMarkdownContainer"] p {
  font-size: 1.7rem; line-height: 1.15; }
header[data-testid="stHeader"] { height: 2.2rem; min-height: 0; background: transparent; }
/* the header keeps only the button that opens the sidebar (the way out of presenter mode) */
header[data-testid="stHeader"] [data-testid="stStatusWidget"] { display: none; }
.block-container { padding-top: 1.6rem; padding-bottom: 0.4rem; max-width: 100%; }
.block-container h1 { font-size: 1.9rem; padding: 0 0 0.2rem 0; }
.block-container h2 { font-size: 1.6rem; padding: 0.3rem 0 0.2rem 0; }
.block-container h3 { font-size: 1.4rem; padding: 0.2rem 0 0.4rem 0; }
[data-testid="stMainBlockContainer"] [data-testid="stVerticalBlock"] { gap: 0.6rem; }
[data-testid="stVegaLiteChart"] svg.marks { max-width: 100%; height: auto; }
/* wrap rather than hide: a row of buttons in a narrow column (the encoder's twelve layers),
   a metric's label or delta */
[data-testid="stButtonGroup"] > div { flex-wrap: wrap; }
[data-testid="stMetricLabel"] [data-testid="stMarkdownContainer"], [data-testid="stMetricLabel"] p,
[data-testid="stMetricDelta"] [data-testid="stMarkdownContainer"],
[data-testid="stMetricDelta"] p { white-space: normal; }
[data-testid="stMainBlockContainer"] { zoom: var(--lab-slide-zoom, 1); }
[data-testid="stSidebarUserContent"], header[data-testid="stHeader"] {
  zoom: var(--lab-screen-zoom, 1); }
.st-key-_step_choice button p { font-size: 0.9rem; }
.st-key-step_next a p, .st-key-step_prev a p { font-size: 0.9rem; }
/* a box of controls opened on a slide (ui.steps's mark): its controls side by side in rows,
   not one below the other across the whole slide, so the chart below stays on the slide */
[data-testid="stExpanderDetails"]:has(.lab-slide-box) > [data-testid="stVerticalBlock"] {
  flex-direction: row; flex-wrap: wrap; column-gap: 1.5rem; row-gap: 0.5rem;
  align-items: flex-end; }
[data-testid="stExpanderDetails"]:has(.lab-slide-box) > [data-testid="stVerticalBlock"] > * {
  flex: 1 1 18rem; min-width: 0; width: auto; }
[data-testid="stExpanderDetails"]:has(.lab-slide-box) > [data-testid="stVerticalBlock"]
  > [data-testid="stLayoutWrapper"] { flex-basis: 30rem; }
[data-testid="stElementContainer"]:has(> [data-testid="stHtml"] .lab-slide-box) {
  display: none; }
/* the lecturer's Ask the class (ui.ask) waits in the top right corner, beside the header's
   empty space: it takes no room from the slide */
[class*="st-key-ask_open_"] { position: fixed; top: 0.35rem; right: 1.2rem; z-index: 999990;
  width: auto !important; }
</style>
"""
SLIDE = (1920, 1080)  # px: the projector a presenter step is laid out for
# The class that marks a slide's box of controls (ui.steps): PRESENTER_CSS lays its controls
# out side by side, ZOOM_JS shrinks the slide while it is open
SLIDE_BOX = "lab-slide-box"
# Sets the zooms of PRESENTER_CSS. The slide's: the share of the slide the main area shows
# (the window's height, the main area's width: less when the lecturer opens the sidebar),
# less 1 % (text set smaller rounds its lines differently: /softmax's first step, 1080 px
# tall on the projector, measured 1084 slide px on a 1366 x 768 laptop). The screen's (the
# header, the sidebar): the share of the slide the window shows. Each 1 where the slide
# fits (a larger screen keeps the 1920 px layout). Again whenever the main area changes
# size; its own width, with its scroll bar, which the zoom never changes (no feedback).
ZOOM_JS = f"""
<script>
(() => {{
  const doc = window.document;
  const area = () => doc.querySelector('[data-testid="stMain"]');
  const zoom = (name, width) => {{
    const share = Math.min(width / {SLIDE[0]}, window.innerHeight / {SLIDE[1]});
    doc.documentElement.style.setProperty(name, String(share >= 1 ? 1 : 0.99 * share));
  }};
  const slide = () => doc.querySelector('[data-testid="stMainBlockContainer"]');
  const fit = () => {{
    zoom("--lab-slide-zoom", area() ? area().offsetWidth : window.innerWidth);
    zoom("--lab-screen-zoom", window.innerWidth);
    // An opened box of controls ({SLIDE_BOX}) makes the step taller than the slide: the
    // slide shrinks while it is open, so its chart stays in sight as a control moves it.
    const open = doc.querySelector('details[open] .{SLIDE_BOX}');
    const root = doc.documentElement.style, box = slide();
    if (!open || !box) return;
    const room = window.innerHeight - (area() ? area().getBoundingClientRect().top : 0);
    // The largest zoom at which the slide fits, by bisection: reading the size lays the
    // slide out at the zoom just set, and a smaller zoom gives it more width, so its text
    // wraps less (the height is not proportional to the zoom).
    const fits = (z) => {{
      root.setProperty("--lab-slide-zoom", String(z));
      return box.getBoundingClientRect().height <= room;
    }};
    let high = parseFloat(root.getPropertyValue("--lab-slide-zoom")) || 1;
    if (fits(high)) return;
    let low = 0.4 * high;
    for (let round = 0; round < 7; round++) {{
      const mid = (low + high) / 2;
      if (fits(mid)) low = mid; else high = mid;
    }}
    fits(low);
  }};
  if (!window.__attentionLabZoom) {{
    window.__attentionLabZoom = new ResizeObserver(fit);
    window.addEventListener("resize", fit);
    doc.addEventListener("toggle", () => requestAnimationFrame(fit), true);
  }}
  if (area()) window.__attentionLabZoom.observe(area());
  if (slide()) window.__attentionLabZoom.observe(slide());
  fit();
}})();
</script>
"""
# Both modes: a chart is never wider than its column (a too-wide chart scrolls inside its
# own box instead of pushing the whole page sideways), and long widget labels wrap.
BASE_CSS = """
<style>
/* a page link in a narrow column (home's five cards) wraps instead of being cut off; its
   label's span sets nowrap and overflow: hidden with a more specific class */
[data-testid="stMain"] [data-testid="stPageLink-NavLink"] span:not([data-testid="stIconMaterial"]),
[data-testid="stMain"] [data-testid="stPageLink-NavLink"] p {
  white-space: normal !important; overflow: visible !important; }
.katex { font-size: 1.15em; }
[data-testid="stSidebarNav"] { display: none; }
.st-key-arrow_keys, [class*="st-key-hidden_step_"],
[data-testid="stLayoutWrapper"]:has(> [class*="st-key-hidden_step_"]) { display: none; }
[data-testid="stVegaLiteChart"] { max-width: 100%; overflow-x: auto; overflow-y: hidden; }
[data-testid="stWidgetLabel"] p { white-space: normal; overflow-wrap: anywhere; }
.st-key-step_prev button, .st-key-step_next button { padding-left: 0.4rem; padding-right: 0.4rem; }
.st-key-_step_choice [data-testid="stButtonGroup"] > div { flex-wrap: wrap; }
/* a step's tab is never wider than the bar (a phone): its label wraps inside it */
.st-key-_step_choice button { max-width: 100%; min-width: 0; height: auto; min-height: 2.2rem; }
.st-key-_step_choice button div, .st-key-_step_choice button span { min-width: 0; }
.st-key-_step_choice button p { white-space: normal; overflow: visible; text-overflow: clip;
  line-height: 1.2; }
[data-testid="stSidebarHeader"] { height: 2.75rem; margin-bottom: 0; padding-top: 0.75rem; }
[data-testid="stSidebarUserContent"] { padding-top: 0; padding-bottom: 2rem; }
[data-testid="stSidebarUserContent"] [data-testid="stVerticalBlock"] { gap: 0.6rem; }
[data-testid="stSidebarUserContent"] [data-testid="stExpander"] details summary {
  padding-top: 0.35rem; padding-bottom: 0.35rem; }
.st-key-lesson_example button { min-height: 2.5rem; }
/* students: what to try and the first thing to notice, one strip above the step's chart */
[class*="st-key-step_head_"] { gap: 0.25rem; padding: 0.3rem 0 0.3rem 0.8rem;
  border-left: 3px solid rgb(197, 57, 72); }
[class*="st-key-step_head_"] [data-testid="stMarkdownContainer"],
[class*="st-key-step_head_"] [data-testid="stMarkdown"] { margin: 0; }
[class*="st-key-step_head_"] p { font-size: 0.95rem; line-height: 1.4; margin: 0; }
/* a page's last (first) step: Next (Back) is a link to the next (previous) page, drawn as
   the step bar's buttons are (Next in the theme's primary colour) */
.st-key-step_next a, .st-key-step_prev a { justify-content: center; min-height: 2.5rem;
  border: 1px solid rgba(49, 51, 63, 0.2); border-radius: 0.5rem; padding: 0.25rem 0.6rem; }
.st-key-step_next a { background: rgb(197, 57, 72); border-color: rgb(197, 57, 72); }
.st-key-step_next a, .st-key-step_next a p, .st-key-step_next a span { color: #fff; }
.st-key-step_next a:hover { background: rgb(170, 44, 58); }
.st-key-step_next a p, .st-key-step_prev a p { white-space: normal; text-align: center;
  line-height: 1.2; }
@media (max-width: 640px) {  /* a phone */
  /* a chart drawn for a laptop is scaled down to the screen's width, not cut in its box */
  [data-testid="stVegaLiteChart"] canvas.marks, [data-testid="stVegaLiteChart"] svg.marks {
    max-width: 100% !important; height: auto !important; }
  /* the opened sidebar is a sheet over the lower part of the screen, not a drawer over all
     of it: the chart above stays in sight while a control in the sheet moves it */
  [data-testid="stSidebar"][data-collapsed="false"] {
    position: fixed !important; top: auto !important; bottom: 0; left: 0; z-index: 999991;
    width: 100vw !important; max-width: 100vw !important; min-width: 0 !important;
    height: 42vh !important; box-shadow: 0 -4px 16px rgba(0, 0, 0, 0.18); }
  [data-testid="stSidebar"][data-collapsed="false"] [data-testid="stSidebarContent"] {
    height: 42vh; overflow-y: auto; }
}
@media (max-height: 900px) {  /* a laptop: less room above the title, the chart comes sooner */
  header[data-testid="stHeader"] { height: 2.5rem; min-height: 0; }
  .block-container { padding-top: 3rem; }
  .block-container h1 { font-size: 2.25rem; padding: 0.5rem 0 0.5rem 0; }
}
</style>
"""

# Chinese mode: Streamlit's own English texts that a student sees, in Chinese. Streamlit 1.67
# has no setting for them, so the English span is hidden and its Chinese put in its place
# (the hint under a text box being edited, the skip link that keyboard users meet first).
ZH_CSS = """
<style>
[data-testid="InputInstructions"] > span:first-child:not(:last-child) { font-size: 0; }
[data-testid="InputInstructions"] > span:first-child:not(:last-child)::after {
  content: "按回车键确认"; font-size: 0.75rem; }
[data-testid="stSkipToContent"] { font-size: 0; }
[data-testid="stSkipToContent"]::after { content: "跳到正文"; font-size: 1rem; }
/* a select box's or multiselect's list with nothing left that matches what was typed
   ("No results"): Streamlit 1.67's classes of those two messages (the multiselect's can also
   say "You can only select up to…", which no page of ours allows: no max_selections) */
.equpb2c9, .eo2qvtu11 { font-size: 0; }
.equpb2c9::after, .eo2qvtu11::after { content: "没有匹配的选项"; font-size: 0.875rem; }
</style>
"""

# The navigation is plain links (one HTML element, see _navigation); a left click on one is
# turned into the app's own in-page navigation: the address changes (history.pushState) and
# the app is told, as for the browser's Back and Forward buttons (a popstate event), so the
# session, its caches and its websocket stay. Ctrl/middle click still opens a new tab.
NAV_JS = """
<script>
(() => {
  if (window.__attentionLabNav) return;
  window.__attentionLabNav = true;
  window.document.addEventListener("click", (event) => {
    const link = event.target.closest && event.target.closest("a.lab-nav-link");
    if (!link || event.button !== 0) return;
    if (event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    window.history.pushState(null, "", link.href);
    window.dispatchEvent(new PopStateEvent("popstate"));
  }, true);
})();
</script>
"""
NAV_CSS = """
<style>
.lab-nav { display: flex; flex-direction: column; gap: 0.15rem; }
.lab-nav-section { font-size: 0.875rem; opacity: 0.6; margin: 0.7rem 0 0.1rem 0; }
.lab-nav-link { display: flex; align-items: center; gap: 0.5rem; padding: 0.1rem 0.5rem;
  border-radius: 0.5rem; color: inherit; text-decoration: none; line-height: 1.7; }
a.lab-nav-link:hover, a.lab-nav-link:focus-visible { background: rgba(151, 166, 195, 0.15);
  color: inherit; text-decoration: none; }
.lab-nav-link[aria-current] { opacity: 0.55; }
.lab-nav-icon { font-family: "Material Symbols Rounded"; font-size: 1.1rem; line-height: 1;
  font-feature-settings: "liga"; }
</style>
"""


def _resolve_language(notices: list[str]) -> str:
    """The URL's ``lang`` if valid, else the last choice in this session, else the browser's."""
    raw = st.query_params.get("lang")
    if raw in LANGUAGES:
        return raw
    fallback = st.session_state.get("_lang") or browser_language(st.context.locale)
    if raw is not None:
        notices.append(f"lang={plain(raw)}")
    return fallback


def _resolve_presenter(notices: list[str]) -> bool:
    """The URL's ``present`` flag (``1``/``0``), else off."""
    raw = st.query_params.get("present")
    if raw is not None and raw not in ("0", "1"):
        notices.append(f"present={plain(raw)}")
    return raw == "1"


def _set_url(key: str, value: str, default: str) -> None:
    """Write a shell setting to the URL, dropping it when it is the default."""
    if value == default:
        st.query_params.pop(key, None)
    elif st.query_params.get(key) != value:
        st.query_params[key] = value


def _on_language_change() -> None:
    choice = st.session_state.get("_lang_choice")
    if choice in LANGUAGES:
        st.session_state["_lang"] = choice
        st.query_params["lang"] = choice


def _on_presenter_change() -> None:
    st.query_params["present"] = "1" if st.session_state.get("_present_choice") else "0"


def _sidebar(page: str, lang: str, presenter: bool, t: Translator) -> DeltaGenerator:
    """The sidebar, top to bottom: the app's name, language and presenter mode; every page
    in one folded list (the step bar's Next leads through them in order); then the slot
    the page's own controls go into (returned), so a student moves them beside the chart."""
    with st.sidebar:
        st.markdown(f"**{t('app.name')}**")
        st.session_state["_lang_choice"] = lang
        st.segmented_control(
            t("shell.language"),
            LANGUAGES,
            format_func=LANGUAGE_NAMES.__getitem__,
            key="_lang_choice",
            on_change=_on_language_change,
            required=True,
            label_visibility="collapsed",
        )
        st.session_state["_present_choice"] = presenter
        st.toggle(
            t("shell.presenter"),
            key="_present_choice",
            on_change=_on_presenter_change,
            help=t("shell.presenter_help"),
        )
        label = t("shell.pages", page=t(f"nav.{page}"))
        with st.expander(label, icon=":material/menu:", expanded=presenter, key="nav_box"):
            st.html(_navigation(page, lang, presenter, t), unsafe_allow_javascript=True)
        return st.container(key="page_controls")


def _navigation(page: str, lang: str, presenter: bool, t: Translator) -> str:
    """The sectioned page links as one HTML block (one element a rerun instead of a
    ``st.page_link`` per page and a caption per section), plus :data:`NAV_JS`."""
    query = urlencode(carried(lang, presenter))
    base = "/" + st.get_option("server.baseUrlPath").strip("/")
    parts = ['<nav class="lab-nav">']
    pages = available_pages()
    for section in SECTIONS:
        members = [p for p in pages if p.section == section]
        if not members:
            continue
        parts.append(f'<p class="lab-nav-section">{escape(t(f"nav.section.{section}"))}</p>')
        for p in members:
            icon = p.icon.removeprefix(":material/").removesuffix(":")
            body = (
                f'<span class="lab-nav-icon">{icon}</span><span>{escape(t(f"nav.{p.id}"))}</span>'
            )
            if p.id == page:
                parts.append(f'<span class="lab-nav-link" aria-current="page">{body}</span>')
            else:
                href = f"{base.rstrip('/')}{p.url_path}?{query}"
                parts.append(f'<a class="lab-nav-link" href="{escape(href)}">{body}</a>')
    parts.append("</nav>")
    return "".join(parts) + NAV_JS + (ZOOM_JS if presenter else "")


@st.cache_resource(show_spinner=False)
def _freeze_startup_objects() -> int:
    """Once per server process: take every object alive after start-up (the modules of
    Streamlit, NumPy, pandas, Altair and ours: ~130 000) out of the garbage collector's
    sight. They live as long as the process, and a full collection that walked them all
    paused whichever rerun it fell on for 150–260 ms. Returns how many were frozen."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


def shell(page: str) -> PageContext:
    """Set up the page ``page`` (an id from :mod:`ui.pages`) and return its context."""
    page_info(page)  # fail loudly on a typo in a page script
    _freeze_startup_objects()
    loaded.warm_models()
    if st.session_state.get("_page") != page:  # a page opens on its own lesson (or its URL)
        forget_controls()
        st.session_state["_page"] = page
    bad: list[str] = []
    lang = _resolve_language(bad)
    presenter = _resolve_presenter(bad)
    st.session_state["_lang"] = lang
    t = Translator(lang)
    st.set_page_config(
        page_title=f"{t(f'nav.{page}')} · {t('app.name')}",
        page_icon=str(ICON),
        layout="wide",
        initial_sidebar_state="collapsed" if presenter else "auto",
    )
    st.html(
        BASE_CSS + NAV_CSS + (PRESENTER_CSS if presenter else "") + (ZH_CSS if lang == "zh" else "")
    )
    _set_url("lang", lang, "")
    _set_url("present", "1" if presenter else "0", "0")
    controls = _sidebar(page, lang, presenter, t)
    ctx = PageContext(page, lang, t, presenter, st.container(), controls)
    for item in bad:
        ctx.warn(t("params.invalid_shell", item=item))
    ask.announce()
    ask.claim(ctx)
    return ctx
