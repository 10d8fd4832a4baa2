"""Open the built chapter in headless Chromium as a reader would, and check each page.

Per page: a screenshot; no request leaves the machine (every loaded resource is a
local file); math is typeset (MathJax containers present, no raw ``\\(`` or ``$$``
left in the text); every plotly figure has drawn its SVG; every image loaded; and
every explorer's slider is clicked, which must move it and change what is drawn.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

__all__ = ["check_site", "chromium_available"]

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


def chromium_available() -> bool:
    return Path(CHROMIUM).exists() and Path(DRIVER).exists()


def _driver(width=1280, height=1600):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-quic", "--no-first-run",
                 "--host-resolver-rules=MAP * ~NOTFOUND", f"--window-size={width},{height}"):
        opts.add_argument(flag)
    return webdriver.Chrome(service=Service(DRIVER), options=opts)


def check_site(site: Path, shots: Path, settle_s: float = 2.0) -> dict[str, dict]:
    """Check every top-level HTML page of ``site``; screenshots go to ``shots``. Returns page -> findings."""
    site, shots = Path(site).resolve(), Path(shots)
    shots.mkdir(parents=True, exist_ok=True)
    pages = sorted(p for p in site.glob("*.html") if p.stem not in ("genindex", "search"))
    findings = {}
    drv = _driver()
    try:
        for page in pages:
            drv.get(page.as_uri())
            drv.execute_script("document.querySelectorAll('details').forEach(d => d.open = true);")
            deadline = time.time() + 20
            while time.time() < deadline:  # wait for MathJax to finish typesetting
                done = drv.execute_script(
                    "return !window.MathJax || !MathJax.startup || MathJax.startup.document === undefined ? false : "
                    "(MathJax.startup.promise && (window.__mj_done || (MathJax.startup.promise.then(() => "
                    "{window.__mj_done = true;}), false)))")
                if done:
                    break
                time.sleep(0.2)
            time.sleep(settle_s)
            info = json.loads(drv.execute_script(_PROBE))
            info["external_requests"] = [r for r in info["resources"]
                                         if not r.startswith(("file://", "data:", "blob:", "about:"))]
            del info["resources"]
            drv.save_screenshot(str(shots / f"{page.stem}.png"))
            info["sliders"] = drive_sliders(drv)
            findings[page.stem] = info
    finally:
        drv.quit()
    return findings


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


def drive_sliders(drv) -> list[dict]:
    """Click each explorer's slider rail near its right end, as a reader would; report what changed."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    before = {s["id"]: s for s in json.loads(drv.execute_script(_SLIDER_STATE))}
    results = []
    for sid, state in before.items():
        div = drv.find_element(By.ID, sid)
        drv.execute_script("arguments[0].scrollIntoView({block: 'center'});", div)
        rail = div.find_element(By.CSS_SELECTOR, "rect.slider-rail-touch-rect")
        width = rail.size["width"]
        offset = int(width * 0.4) if state["active"] < len(state["visible"]) / 2 else -int(width * 0.4)
        ActionChains(drv).move_to_element_with_offset(rail, offset, 0).click().perform()
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
    bad = {p: f for p, f in out.items() if f["external_requests"] or f["broken_images"] or f["raw_math"]
           or f["plots_drawn"] != f["plots"] or not all(s["moved"] and s["changed"] for s in f["sliders"])}
    sys.exit(1 if bad else 0)
