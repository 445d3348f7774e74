#!/usr/bin/python3
"""Opens an epgate report in headless Chromium (Debian's chromium and
chromium-driver, driven by python3-selenium) and checks what a person
would see: the page loads with no console error and fetches nothing,
every gate of the TAP from `epgate gate` is on it with the same verdict
and sentence, every suite has its charts drawn, every gate that judges
varying values has a chart, every failing gate has its repro line, and
every number in the page's tables is the results file's.

    browser.py PAGE.html --results R.json... --tap GATES.tap
               [--screenshot FULL.png] [--chunks DIR] [--no-charts]

Prints TAP (one point per check) and exits 0, 1 (a check failed) or 77
(no Chromium, chromedriver or selenium here)."""
import argparse
import json
import math
import os
import re
import shutil
import sys
import tempfile

try:
    import yaml
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
except ImportError as e:  # the test skips: nothing to drive a browser with
    print("1..0 # SKIP python3-selenium or python3-yaml missing: %s" % e)
    sys.exit(77)

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu",
                  "--disable-background-networking",
                  "--disable-component-update", "--disable-sync",
                  "--no-first-run", "--hide-scrollbars"]

n = 0
failed = 0


def check(ok, what, detail=None):
    global n, failed
    n += 1
    if not ok:
        failed += 1
    print("%s %d - %s" % ("ok" if ok else "not ok", n, what))
    if not ok and detail:
        for line in str(detail).splitlines()[:20]:
            print("# " + line)


def find(*names):
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    return None


def browser(width, height):
    chrome = os.environ.get("EPGATE_CHROMIUM") or find("chromium", "chromium-browser")
    driver = os.environ.get("EPGATE_CHROMEDRIVER") or find("chromedriver")
    if not chrome or not driver:
        print("1..0 # SKIP no chromium/chromedriver (Debian: chromium chromium-driver)")
        sys.exit(77)
    profile = tempfile.mkdtemp(prefix="epgate-browser.")
    opts = webdriver.ChromeOptions()
    opts.binary_location = chrome
    for flag in CHROMIUM_FLAGS + ["--user-data-dir=" + profile,
                                  "--window-size=%d,%d" % (width, height)]:
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(driver), options=opts), profile


def tap_gates(path):
    """name -> (verdict, sentence, diag) from `epgate gate`'s TAP."""
    gates = {}
    lines = open(path).read().splitlines()
    i = 0
    point = re.compile(r"^(not )?ok \d+ - ([a-z0-9._-]+): (.*?)(?: # (SKIP|TODO)\b.*)?$")
    while i < len(lines):
        m = point.match(lines[i])
        i += 1
        if not m:
            continue
        block = []
        if i < len(lines) and lines[i] == "  ---":
            i += 1
            while i < len(lines) and lines[i] != "  ...":
                block.append(lines[i][2:])
                i += 1
        diag = yaml.safe_load("\n".join(block)) if block else {}
        bad, name, sentence, directive = m.groups()
        if directive == "SKIP":
            verdict = "skip"
        elif directive == "TODO":
            verdict = "inconclusive"
        elif diag.get("status") == "error":
            verdict = "error"
        else:
            verdict = "fail" if bad else "pass"
        gates[name] = (verdict, diag.get("sentence", sentence), diag)
    return gates


def judged_values(diag):
    """Every value a gate judged, found anywhere in its diagnostics."""
    out = []
    if isinstance(diag, dict):
        if "value" in diag and "point" in diag:
            out.append(diag["value"])
        for v in diag.values():
            out += judged_values(v)
    elif isinstance(diag, list):
        for v in diag:
            out += judged_values(v)
    return out


def shown(text):
    """The number a cell shows (before its interval)."""
    m = re.match(r"\s*(-?[0-9.]+(?:e[-+]?\d+)?)", text)
    return float(m.group(1)) if m else None


def close(a, b, rel):
    return a == b or abs(a - b) <= rel * max(abs(a), abs(b))


def check_loads(d):
    errors = [e for e in d.get_log("browser") if e.get("level") == "SEVERE"]
    check(not errors, "the page loads with no console error",
          "\n".join(e.get("message", "") for e in errors))
    # what was loaded, and what would be: any element naming a resource
    fetched = d.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)"
        ".concat(Array.from(document.querySelectorAll("
        "'[src], link[href], script, iframe, object, embed'))"
        ".map(e => e.outerHTML.slice(0, 80)))")
    check(not fetched, "the page fetches nothing (self-contained)", fetched)
    check(d.find_element(By.ID, "verdict").is_displayed(),
          "the verdict is shown at the top")


def check_gates(d, gates):
    rows = {r.get_attribute("data-gate"): r
            for r in d.find_elements(By.CSS_SELECTOR, "tr.gate")}
    bad = []
    for name, (verdict, sentence, _) in gates.items():
        r = rows.get(name)
        if r is None:
            bad.append("%s: not on the page" % name)
            continue
        badge = r.find_element(By.CSS_SELECTOR, ".badge").text.strip().lower()
        if r.get_attribute("data-verdict") != verdict or badge != verdict:
            bad.append("%s: page says %s (%s), epgate gate says %s" %
                       (name, r.get_attribute("data-verdict"), badge, verdict))
        text = r.find_element(By.CSS_SELECTOR, "td.sentence").text.strip()
        if text != sentence.strip():
            bad.append("%s: sentence %r, want %r" % (name, text, sentence))
    check(not bad and len(rows) == len(gates),
          "all %d gates shown with epgate gate's verdicts and sentences" %
          len(gates), "\n".join(bad) or "%d rows" % len(rows))
    fails = [g for g, (v, _, _) in gates.items() if v in ("fail", "error")]
    missing = []
    for g in fails:
        f = d.find_elements(By.CSS_SELECTOR,
                            "div.failure[data-name='%s'] pre.repro" % g)
        if not f or not f[0].text.startswith("epgate gate --gates "):
            missing.append(g)
    check(not missing, "every failing gate (%d) has its diagnosis and repro "
          "line" % len(fails), missing)
    verdict = d.find_element(By.ID, "verdict").get_attribute("data-verdict")
    check(verdict == ("fail" if fails else "pass"),
          "the banner says %s" % verdict)


def drawn(fig):
    svg = fig.find_elements(By.TAG_NAME, "svg")
    if not svg:
        return False
    box = svg[0].rect
    return (box["width"] > 300 and box["height"] > 200 and
            len(svg[0].find_elements(By.TAG_NAME, "path")) > 10)


def check_charts(d, points, gates, want_svg):
    suites = sorted({p["suite"] for p in points})
    figs = d.find_elements(By.CSS_SELECTOR, "figure.chart")
    by_suite = {}
    for f in figs:
        by_suite.setdefault(f.get_attribute("data-suite"), []).append(f)
    missing = [s for s in suites if not by_suite.get(s)]
    check(not missing, "every suite (%d) has its charts (%d)" %
          (len(suites), len(figs)), missing)
    if want_svg:
        blank = [f.get_attribute("id") for f in figs if not drawn(f)]
        check(not blank, "every chart (%d) is drawn: an SVG with its data, "
              "at least 300x200 px" % len(figs), blank)
    else:
        note = d.find_elements(By.ID, "chart-note")
        check(note and "gnuplot" in note[0].text,
              "without gnuplot the page says charts need it")
    names = " ".join(", " + (f.get_attribute("data-gates") or "") + ","
                     for f in figs)
    want = [g for g, (v, _, diag) in gates.items()
            if v not in ("skip", "error") and
            len(set(judged_values(diag))) > 1]
    lost = [g for g in want if ", %s," % g not in names]
    check(not lost, "every gate judging varying values (%d) is drawn on a "
          "chart" % len(want), lost)


def check_numbers(d, points):
    cells = {}
    for td in d.find_elements(By.CSS_SELECTOR, "td[data-point][data-metric]"):
        cells[(td.get_attribute("data-point"),
               td.get_attribute("data-metric"))] = td
    ids = {td.get_attribute("data-point")
           for td in d.find_elements(By.CSS_SELECTOR, "td[data-point]")}
    absent = [p["id"] for p in points if p["id"] not in ids]
    check(not absent, "every point (%d) is in the tables" % len(points),
          absent)
    bad = []
    for p in points:
        for m, v in p["metrics"].items():
            td = cells.get((p["id"], m))
            if td is None:
                continue
            exact = float(td.get_attribute("data-value"))
            text = shown(td.text)
            if not close(exact, v["median"], 1e-12):
                bad.append("%s %s: data-value %r, file %r" %
                           (p["id"], m, exact, v["median"]))
            elif text is None or not close(
                    text, v["median"], 5e-4 if abs(v["median"]) < 1000 else
                    0.5 / abs(v["median"])):
                bad.append("%s %s: shows %r, file %r" %
                           (p["id"], m, td.text, v["median"]))
    check(cells and not bad, "the %d numbers in the tables are the results "
          "file's medians" % len(cells), "\n".join(bad))
    by_id = {p["id"]: p for p in points}
    rbad = []
    ratios = d.find_elements(By.CSS_SELECTOR, "td[data-ratio]")
    for td in ratios:
        metric, arms = td.get_attribute("data-ratio").split(" ")
        p = by_id.get(td.get_attribute("data-point"))
        twins = [q for q in points if q["suite"] == p["suite"] and
                 q["arm"] == arms.split("/")[1] and
                 all(q["axes"].get(k, v) == v for k, v in p["axes"].items()
                     if k in q["axes"])]
        want = p["metrics"][metric]["median"] / twins[0]["metrics"][metric]["median"]
        if not close(shown(td.text), want, 1e-3):
            rbad.append("%s: shows %s, medians give %.6g" %
                        (p["id"], td.text, want))
    check(not rbad, "the %d ratios are the medians' ratios" % len(ratios),
          "\n".join(rbad))


def screenshots(d, full, chunks):
    height = d.execute_script("return document.documentElement.scrollHeight")
    if chunks:
        os.makedirs(chunks, exist_ok=True)
        d.set_window_size(1400, 1100)
        inner = d.execute_script("return window.innerHeight")
        for k, y in enumerate(range(0, height, inner)):
            d.execute_script("window.scrollTo(0, %d)" % y)
            d.save_screenshot(os.path.join(chunks, "part%02d.png" % k))
    if full:
        d.set_window_size(1400, min(height + 40, 16000))
        d.execute_script("window.scrollTo(0, 0)")
        check(d.save_screenshot(full), "screenshot %s (%d px tall)" %
              (full, height))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("page")
    ap.add_argument("--results", action="append", default=[])
    ap.add_argument("--tap", required=True)
    ap.add_argument("--screenshot")
    ap.add_argument("--chunks")
    ap.add_argument("--no-charts", action="store_true")
    a = ap.parse_args()
    points = []
    for r in a.results:
        points += json.load(open(r))["points"]
    gates = tap_gates(a.tap)
    d, profile = browser(1400, 1100)
    try:
        d.get("file://" + os.path.abspath(a.page))
        check_loads(d)
        check_gates(d, gates)
        check_charts(d, points, gates, not a.no_charts)
        check_numbers(d, points)
        screenshots(d, a.screenshot, a.chunks)
    finally:
        d.quit()
        shutil.rmtree(profile, ignore_errors=True)
    print("1..%d" % n)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
