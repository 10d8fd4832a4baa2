"""Open the built chapter in headless Chromium as a reader would, and check each page.

Per page: a screenshot; no request leaves the machine (every loaded resource is a
local file); math is typeset (MathJax containers present, no raw ``\\(`` or ``$$``
left in the text); every plotly figure has drawn its SVG; every image loaded; every
explorer's slider is clicked, which must move it and change what is drawn; and every plotly figure's
text (title, axis titles, tick labels, legend, annotations, colour bar, slider labels) lies inside
its frame, clear of the toolbar, of the legend and of other text (:data:`_LAYOUT_PROBE`); and in a narrower
window every display equation, every table, every code cell a reader sees and every printed output fits the
text column (:data:`_FIT_PROBE`). :func:`page_problems` gathers a page's findings into one list.
:func:`figure_layout_problems` runs the same layout check on plotly figures outside the book.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

__all__ = ["check_site", "chromium_available", "figure_layout_problems", "page_problems", "LAYOUT_WIDTHS"]

CHROMIUM = "/usr/bin/chromium"
DRIVER = "/usr/bin/chromedriver"

_PROBE = """
const res = performance.getEntriesByType('resource').map(e => e.name);
const imgs = Array.from(document.images);
const plots = Array.from(document.querySelectorAll('.plotly-graph-div'));
const text = document.querySelector('main') ? document.querySelector('main').innerText : document.body.innerText;
return JSON.stringify({
  resources: res.concat([location.href]),
  images: imgs.length,
  broken_images: imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src),
  plots: plots.length,
  plots_drawn: plots.filter(p => p.querySelector('svg.main-svg')).length,
  math: document.querySelectorAll('mjx-container').length,
  raw_math: (text.match(/\\\\\\(|\\$\\$/g) || []).length,
  mathjax_ready: !!(window.MathJax && window.MathJax.startup && window.MathJax.startup.promise),
});
"""


#: the window width (px) of every check but the fit check below
WINDOW = 1280

#: the window width (px) at which equations, tables and code are checked to fit the text column: the chapter's
#: column is 612 px wide there, narrower than at the 1280-px window of the other checks; a code cell's box holds
#: 68 characters of its monospace font
FIT_WINDOW = 1200

# Display equations wider than the text column (their end is cut off) or run into by their number, tables
# wider than their box (a reader has to scroll sideways to see their last columns), and code boxes (`pre`) that
# scroll sideways: a cell's input or any other code shown on the page (code_scrolled) and a cell's printed
# output (outputs_scrolled), each named by the page and its widest line. A `hide-input` cell's source is
# folded away for a reader, so it does not count, although check_site opens every <details> to draw it.
_FIT_PROBE = r"""
const box = e => e.getBoundingClientRect();
const equations = [], tables = [], code = [], outputs = [];
const page = decodeURIComponent(location.pathname.split('/').pop().replace(/\.html$/, ''));
const ruler = document.createElement('canvas').getContext('2d');
for (const div of document.querySelectorAll('div.math')) {
  const mj = div.querySelector('mjx-container[display="true"] mjx-math');
  if (!mj) continue;
  const D = box(div), M = box(mj), no = div.querySelector('.eqno');
  const name = no ? no.textContent.replace('#', '').trim() : div.id;
  if (M.right > D.right + 1 || M.left < D.left - 1)
    equations.push(`${name} is ${Math.round(M.width)} px wide in a ${Math.round(D.width)} px column`);
  else if (no) {
    const N = box(no);
    if (Math.min(M.right, N.right) - Math.max(M.left, N.left) > 1 && Math.min(M.bottom, N.bottom) - Math.max(M.top, N.top) > 1)
      equations.push(`${name}: its number overlaps the equation`);
  }
}
for (const wrap of document.querySelectorAll('.seqlab-table-wrap')) {
  if (wrap.scrollWidth > wrap.clientWidth + 1) {
    const head = Array.from(wrap.querySelectorAll('th')).map(t => t.textContent).join(' | ');
    tables.push(`[${head.slice(0, 60)}] is ${wrap.scrollWidth} px wide in ${wrap.clientWidth} px`);
  }
}
for (const pre of document.querySelectorAll('main pre')) {
  if (pre.closest('.tag_hide-input .cell_input, .tag_remove-input .cell_input') || !pre.getClientRects().length
      || pre.scrollWidth <= pre.clientWidth + 1) continue;
  const s = getComputedStyle(pre);
  ruler.font = s.font;
  const room = pre.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
  const lines = pre.textContent.replace(/\n$/, '').split('\n').map(t => ({t, w: ruler.measureText(t).width}));
  const over = lines.filter(l => l.w > room + 1);
  const first = over.length ? over[0] : lines.reduce((a, b) => b.w > a.w ? b : a);
  const more = over.length > 1 ? ` (and ${over.length - 1} more line${over.length > 2 ? 's' : ''})` : '';
  (pre.closest('.cell_output') ? outputs : code).push(
    `${page}: ${JSON.stringify(first.t.slice(0, 60))} (${first.t.length} characters)${more} scrolls: ` +
    `${pre.scrollWidth} px wide in ${pre.clientWidth} px`);
}
return JSON.stringify({equations_cut: equations, tables_scrolled: tables, code_scrolled: code,
                       outputs_scrolled: outputs});
"""


#: the widths (px) at which figures are checked outside the book: a little narrower than the chapter's content
#: column (676 px in a 1280-px window), where the book draws its interactive figures
LAYOUT_WIDTHS = (660,)

# One entry per plotly figure: {id, width, problems}. A text is every non-empty <text> of the figure's SVG
# layers except hover labels; each is named by its role (title, axis title, tick, legend, annotation, colour
# bar, slider). Problems: a text leaving the figure's frame (.svg-container); a text under the toolbar
# (.modebar, laid out even while it is hidden); two texts overlapping; the legend's box over a text that is
# not its own, or over the slider; a linear axis whose visible data are all integers showing a fractional tick.
_LAYOUT_PROBE = r"""
const only = arguments[0];
const TOL = 1;
const box = e => { const r = e.getBoundingClientRect(); return {x0: r.left, y0: r.top, x1: r.right, y1: r.bottom}; };
const area = b => (b.x1 - b.x0) * (b.y1 - b.y0);
const meets = (a, b) => Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0) > TOL && Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0) > TOL;
const shown = e => { for (let n = e; n && n.nodeType === 1; n = n.parentNode) { const s = getComputedStyle(n);
  if (s.display === 'none' || s.visibility === 'hidden' || parseFloat(s.opacity) === 0) return false; } return true; };
const role = t => t.closest('.g-gtitle') ? 'title' : t.closest('.legend') ? 'legend' : t.closest('.slider-container') ? 'slider'
  : t.closest('.colorbar') ? 'colour bar' : t.closest('.annotation') ? 'annotation'
  : t.closest('[class$="tick"], [class*="tick "]') ? 'tick' : (t.getAttribute('class') || '').match(/title/) ? 'axis title' : 'text';
const say = t => JSON.stringify(t.text.length > 50 ? t.text.slice(0, 49) + '…' : t.text);
const out = [];
const divs = Array.from(document.querySelectorAll('.plotly-graph-div')).filter(d => !only || d.id === only);
for (const div of divs) {
  const frame = div.querySelector('.svg-container');
  if (!frame) { out.push({id: div.id, width: 0, problems: ['not drawn']}); continue; }
  const F = box(frame), problems = [];
  const texts = Array.from(div.querySelectorAll('svg text')).filter(t => !t.closest('.hoverlayer')
      && t.textContent.trim() && shown(t)).map(t => ({el: t, b: box(t), role: role(t), text: t.textContent.trim()}))
    .filter(t => area(t.b) > 0);
  for (const t of texts) {
    const cut = [['left', F.x0 - t.b.x0], ['right', t.b.x1 - F.x1], ['top', F.y0 - t.b.y0], ['bottom', t.b.y1 - F.y1]]
      .filter(([, past]) => past > TOL).map(([side]) => side);
    if (cut.length) problems.push(`${t.role} ${say(t)} is clipped at the ${cut.join(' and ')} of the frame`);
  }
  const bar = div.querySelector('.modebar');
  if (bar && area(box(bar)) > 0) {
    for (const t of texts) if (meets(t.b, box(bar))) problems.push(`${t.role} ${say(t)} lies under the toolbar`);
  }
  for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) {
    const a = texts[i], b = texts[j];
    if (!a.el.contains(b.el) && !b.el.contains(a.el) && meets(a.b, b.b))
      problems.push(`${a.role} ${say(a)} overlaps ${b.role} ${say(b)}`);
  }
  for (const legend of div.querySelectorAll('.legend')) {
    const bg = legend.querySelector('rect.bg') || legend, L = box(bg);
    if (area(L) <= 0) continue;
    for (const t of texts) if (t.role !== 'legend' && meets(t.b, L)) problems.push(`the legend covers ${t.role} ${say(t)}`);
    for (const s of div.querySelectorAll('.slider-container')) if (meets(box(s), L)) problems.push('the legend overlaps the slider');
  }
  const gd = div, full = gd._fullLayout || {};
  for (const key of Object.keys(full).filter(k => /^[xy]axis\d*$/.test(k))) {
    const ax = full[key];
    if (!ax || ax.type !== 'linear' || !ax._vals || !ax.visible) continue;
    const letter = key[0], id = ax._id;
    const vals = [];
    for (const tr of gd._fullData || []) {
      if (tr.visible !== true || (tr[letter + 'axis'] || letter) !== id || !tr[letter]) continue;
      for (const v of Array.from(tr[letter])) if (typeof v === 'number' && isFinite(v)) vals.push(v);
    }
    if (!vals.length || !vals.every(v => Number.isInteger(v))) continue;
    const frac = ax._vals.map(v => v.x).filter(x => Math.abs(x - Math.round(x)) > 1e-9);
    if (frac.length) problems.push(`${key} holds integers but has the fractional tick ${frac[0]}`);
  }
  out.push({id: div.id, width: Math.round(F.x1 - F.x0), problems: Array.from(new Set(problems))});
}
return JSON.stringify(out);
"""


def _wait_drawn(drv, timeout_s: float = 20.0) -> None:
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if drv.execute_script("return Array.from(document.querySelectorAll('.plotly-graph-div'))"
                              ".every(d => d.querySelector('svg.main-svg') && d._fullLayout);"):
            return
        time.sleep(0.2)


def layout_problems(drv, div_id: str | None = None) -> list[dict]:
    """The layout probe on the page open in ``drv``: ``[{id, width, problems}]`` per plotly figure."""
    return json.loads(drv.execute_script(_LAYOUT_PROBE, div_id))


def figure_layout_problems(figures: dict, folder: Path, widths=LAYOUT_WIDTHS, height: int = 1400,
                           shots: bool = False) -> dict[str, list[str]]:
    """Draw each plotly figure of ``figures`` (name -> Figure) in Chromium in a column ``width`` pixels wide, as
    the book embeds it, and return name -> problems found by the layout probe (each prefixed by the width).
    The pages (and with ``shots`` their screenshots) are left in ``folder``."""
    import plotly.offline

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "plotly.min.js").write_text(plotly.offline.get_plotlyjs(), encoding="utf-8")
    found: dict[str, list[str]] = {name: [] for name in figures}
    drv = _driver(width=max(widths) + 200, height=height)
    try:
        for width in widths:
            for name, fig in figures.items():
                div = fig.to_html(full_html=False, include_plotlyjs=False, config={"responsive": True}, div_id=name)
                page = folder / f"{name}-{width}.html"
                page.write_text(f"<!doctype html><html><head><meta charset='utf-8'><script src='plotly.min.js'>"
                                f"</script></head><body style='margin:20px'><div style='width:{width}px'>{div}</div>"
                                "</body></html>", encoding="utf-8")
                drv.get(page.as_uri())
                _wait_drawn(drv)
                time.sleep(0.3)
                if shots:
                    drv.save_screenshot(str(page.with_suffix(".png")))
                for entry in layout_problems(drv, name):
                    found[name].extend(f"at {width} px: {p}" for p in entry["problems"])
    finally:
        drv.quit()
    return found


def chromium_available() -> bool:
    return Path(CHROMIUM).exists() and Path(DRIVER).exists()


def _driver(width=WINDOW, height=1600):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-quic", "--no-first-run",
                 "--host-resolver-rules=MAP * ~NOTFOUND", f"--window-size={width},{height}"):
        opts.add_argument(flag)
    return webdriver.Chrome(service=Service(DRIVER), options=opts)


def _resize_plots(drv, timeout_s: float = 30.0) -> None:
    """Size every plot to its box and wait until all are redrawn. The page resizes a plot when its folded box
    opens, but asynchronously; awaiting it here means the probes below never read a plot mid-resize."""
    drv.set_script_timeout(timeout_s)
    drv.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "if (!window.Plotly) { done(0); return; }"
        "const plots = Array.from(document.querySelectorAll('.js-plotly-plot'));"
        "Promise.all(plots.map(p => window.Plotly.Plots.resize(p))).then(() => done(plots.length), () => done(-1));")


def _open_page(drv, uri: str, timeout_s: float = 30.0) -> None:
    """Load ``uri`` and open every folded box, as a reader who opens them all would.

    On a loaded machine ``drv.get`` returned while the previous page was still the document: the boxes were opened
    on that page, and the sliders of the new one were then found inside closed boxes. So the new document is
    awaited, and the boxes are checked open on it."""
    drv.get(uri)
    deadline = time.time() + timeout_s
    while True:
        opened = drv.execute_script(
            "if (location.href !== arguments[0] || document.readyState !== 'complete') return null;"
            "const boxes = Array.from(document.querySelectorAll('details'));"
            "boxes.forEach(d => d.open = true);"
            "return boxes.every(d => d.open);", uri)
        if opened:
            return
        if time.time() > deadline:
            raise AssertionError(f"{uri} did not load with its folded boxes open within {timeout_s:g} s")
        time.sleep(0.2)


def check_site(site: Path, shots: Path, settle_s: float = 2.0) -> dict[str, dict]:
    """Check every top-level HTML page of ``site``; screenshots go to ``shots``. Returns page -> findings."""
    site, shots = Path(site).resolve(), Path(shots)
    shots.mkdir(parents=True, exist_ok=True)
    pages = sorted(p for p in site.glob("*.html") if p.stem not in ("genindex", "search"))
    findings = {}
    drv = _driver()
    try:
        for page in pages:
            _open_page(drv, page.as_uri())
            deadline = time.time() + 20
            while time.time() < deadline:  # wait for MathJax to finish typesetting
                done = drv.execute_script(
                    "return !window.MathJax || !MathJax.startup || MathJax.startup.document === undefined ? false : "
                    "(MathJax.startup.promise && (window.__mj_done || (MathJax.startup.promise.then(() => "
                    "{window.__mj_done = true;}), false)))")
                if done:
                    break
                time.sleep(0.2)
            _resize_plots(drv)
            time.sleep(settle_s)
            info = json.loads(drv.execute_script(_PROBE))
            info["external_requests"] = [r for r in info["resources"]
                                         if not r.startswith(("file://", "data:", "blob:", "about:"))]
            del info["resources"]
            drv.save_screenshot(str(shots / f"{page.stem}.png"))
            info["figure_layout"] = {e["id"]: e["problems"] for e in layout_problems(drv) if e["problems"]}
            info["sliders"] = drive_sliders(drv)
            drv.set_window_size(FIT_WINDOW, 1600)
            time.sleep(0.5)  # MathJax and the theme lay out again
            info.update(json.loads(drv.execute_script(_FIT_PROBE)))
            drv.set_window_size(WINDOW, 1600)
            info["problems"] = page_problems(info)
            findings[page.stem] = info
    finally:
        drv.quit()
    return findings


def page_problems(info: dict) -> list[str]:
    """Every finding of one page of :func:`check_site` that a reader would notice, as one line each."""
    problems = [f"request leaves the machine: {r}" for r in info["external_requests"]]
    problems += [f"image not loaded: {src}" for src in info["broken_images"]]
    if info["raw_math"]:
        problems.append(f"{info['raw_math']} math delimiters left untypeset")
    if info["plots_drawn"] != info["plots"]:
        problems.append(f"{info['plots'] - info['plots_drawn']} of {info['plots']} figures not drawn")
    problems += [f"figure {fig}: {p}" for fig, found in info["figure_layout"].items() for p in found]
    problems += [f"slider of {s['id']} " + ("did not change the figure" if s["moved"] else "did not move")
                 for s in info["sliders"] if not (s["moved"] and s["changed"])]
    problems += [f"equation cut: {e}" for e in info["equations_cut"]]
    problems += [f"table scrolls: {t}" for t in info["tables_scrolled"]]
    problems += [f"code scrolls: {c}" for c in info["code_scrolled"]]
    problems += [f"output scrolls: {o}" for o in info["outputs_scrolled"]]
    return problems


_SLIDER_STATE = """
const divs = Array.from(document.querySelectorAll('.plotly-graph-div'))
  .filter(d => d.layout && d.layout.sliders && d.layout.sliders.length);
return JSON.stringify(divs.map(d => ({
  id: d.id,
  active: d.layout.sliders[0].active,
  visible: d.data.map(t => t.visible === true),
  drawn: Array.from(d.querySelectorAll('.scatterlayer path.js-line, .heatmaplayer image, .hm image'))
           .map(p => (p.getAttribute('d') || p.getAttribute('href') || '').length),
})));
"""


# a loaded suite run once left the rail 14,000 px below the window after scrollIntoView: the rail sat in a closed
# box, because the boxes had been opened on the previous page (the cause, fixed in _open_page); the instant scroll
# by the document's scrollTop stays as a cheap second means
_SCROLL_TO_RAIL = """
const rail = document.getElementById(arguments[0]).querySelector('rect.slider-rail-touch-rect');
rail.scrollIntoView({block: 'center', inline: 'center', behavior: 'instant'});
const r = rail.getBoundingClientRect();
const doc = document.scrollingElement || document.documentElement;
doc.scrollTop += r.y + r.height / 2 - window.innerHeight / 2;
"""

_RAIL_POINT = """
const rail = document.getElementById(arguments[0]).querySelector('rect.slider-rail-touch-rect');
const r = rail.getBoundingClientRect();
const x = Math.floor(r.x + r.width / 2 + arguments[1]), y = Math.floor(r.y + r.height / 2);
const inside = x >= 0 && y >= 0 && x < window.innerWidth && y < window.innerHeight;
const hit = inside ? document.elementFromPoint(x, y) : null;
const doc = document.scrollingElement || document.documentElement;
return {x: x, y: y, rect: [r.x, r.y, r.width, r.height], window: [window.innerWidth, window.innerHeight],
        on_slider: !!hit && (hit === rail || rail.parentNode.contains(hit)),
        scroll: [window.scrollY, doc.scrollTop, doc.scrollHeight, getComputedStyle(document.body).overflowY,
                 getComputedStyle(document.documentElement).overflowY],
        hit: hit ? hit.tagName + '.' + hit.getAttribute('class') : null,
        in_closed_box: !!rail.closest('details:not([open])')};
"""


def _click_rail(drv, sid: str, offset_share: float) -> None:
    """Click the slider rail of figure ``sid`` at ``offset_share`` of its width from the centre, where a reader
    would: at a point of the window where the rail is the topmost element.

    The page can still move after a scroll (equations typeset as they come into view, figures sizing
    themselves), so the point is found again just before each try, and a try whose point is out of the window or
    not on the rail scrolls again; the last failure says where the rail was.
    """
    from selenium.common.exceptions import MoveTargetOutOfBoundsException
    from selenium.webdriver.common.actions.action_builder import ActionBuilder

    seen = None
    for attempt in range(6):
        drv.execute_script(_SCROLL_TO_RAIL, sid)
        time.sleep(0.3 * attempt)
        width = drv.execute_script("return document.getElementById(arguments[0])"
                                   ".querySelector('rect.slider-rail-touch-rect').getBoundingClientRect().width;", sid)
        seen = drv.execute_script(_RAIL_POINT, sid, int(width * offset_share))
        if not seen["on_slider"]:
            continue
        actions = ActionBuilder(drv)
        actions.pointer_action.move_to_location(seen["x"], seen["y"])
        actions.pointer_action.click()
        try:
            actions.perform()
            return
        except MoveTargetOutOfBoundsException:
            continue
    raise AssertionError(f"the slider of figure {sid} could not be clicked where a reader would: {seen}")


def drive_sliders(drv) -> list[dict]:
    """Click each explorer's slider rail near its right end, as a reader would; report what changed."""
    before = {s["id"]: s for s in json.loads(drv.execute_script(_SLIDER_STATE))}
    results = []
    for sid, state in before.items():
        _click_rail(drv, sid, 0.4 if state["active"] < len(state["visible"]) / 2 else -0.4)
        time.sleep(0.5)
        after = {s["id"]: s for s in json.loads(drv.execute_script(_SLIDER_STATE))}[sid]
        results.append({"id": sid, "moved": after["active"] != state["active"],
                        "changed": after["visible"] != state["visible"] or after["drawn"] != state["drawn"]})
    return results


if __name__ == "__main__":
    import sys

    site = Path(sys.argv[1] if len(sys.argv) > 1 else "build/chapter")
    out = check_site(site, site.parent / "screenshots")
    print(json.dumps(out, indent=1))
    sys.exit(1 if any(f["problems"] for f in out.values()) else 0)
