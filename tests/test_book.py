"""The book as a learner sees it: build it, open every page in headless Chromium, check it.

Most of it is slow (it builds the book: about a minute cold, seconds when the cached runs are
current), so CI's default run skips it. The fast tests render a tiny book without running a
kernel (a few seconds of Sphinx) and are skipped where the `book` extra is not installed. The
slow ones need the `book` extra and Debian's `chromium` and `chromium-driver`:

    python -m pytest -m slow tests/test_book.py

One screenshot per tutorial lands in book/_build/screenshots/ (the top of the page, and the
first figure where there is one) for a person to look at.
"""
from __future__ import annotations

import html.parser
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from test_book_pages import check_stepper, chromium, folding_problems

slow = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "book" / "_build"
SITE = BUILD / "html"
SHOTS = BUILD / "screenshots"
TUTORIALS = sorted(p for p in (ROOT / "tutorials").glob("*.py") if not p.name.startswith("_"))
# code that puts a picture on the page: a saved figure, a rendered graph, or an inline one
MAKES_FIGURE = re.compile(r"\bsavefig\(|\brender_graph\(|\.show\(|\bdisplay\(")

# every text node outside code and math, with the TeX delimiters still in it
RAW_MATH_JS = r"""
const skip = new Set(["PRE", "CODE", "SCRIPT", "STYLE", "TEXTAREA", "MJX-CONTAINER"]);
const walker = document.createTreeWalker(document.querySelector("article") || document.body,
                                         NodeFilter.SHOW_TEXT);
const raw = [];
const tex = /\$[^$\s][^$]*\$|\$\$|\\\(|\\\[/;
for (let node = walker.nextNode(); node; node = walker.nextNode()) {
  let el = node.parentElement, inside = false;
  for (; el; el = el.parentElement) if (skip.has(el.tagName)) { inside = true; break; }
  if (!inside && tex.test(node.textContent)) raw.push(node.textContent.trim().slice(0, 120));
}
return raw;
"""
WAIT_MATH_JS = """
const done = arguments[arguments.length - 1];
if (!document.querySelector('script[src*="mathjax"]')) { done("no math"); return; }
(function wait() {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise)
    MathJax.startup.promise.then(() => done("typeset"), e => done("error: " + e));
  else setTimeout(wait, 50);
})();
"""
BROKEN_IMAGES_JS = """
return Array.from(document.images)
  .filter(img => !img.complete || img.naturalWidth === 0).map(img => img.getAttribute("src"));
"""
# whether the code of the first solution cell is on screen (a closed <details> keeps its
# content laid out but not rendered, which checkVisibility sees and offsetParent does not)
SOLUTION_SHOWN_JS = """
return Array.from(document.querySelectorAll('.tag_solution .cell_input pre'))
  .slice(0, 1).map(e => e.checkVisibility({contentVisibilityAuto: true}));
"""
REMOTE_LOADS_JS = """
return performance.getEntriesByType("resource").map(e => e.name)
  .filter(u => !u.startsWith("file:") && !u.startsWith("data:"));
"""


class _Ids(html.parser.HTMLParser):
    """The id and name attributes of a page: the targets its #fragments may point to."""

    def __init__(self):
        super().__init__()
        self.ids = set()

    def handle_starttag(self, tag, attrs):
        for key, value in attrs:
            if key in ("id", "name") and value:
                self.ids.add(value)


def _ids(path: Path, cache={}):
    if path not in cache:
        parser = _Ids()
        parser.feed(path.read_text(encoding="utf-8"))
        cache[path] = parser.ids
    return cache[path]


def _markdown(tutorial: Path) -> list[str]:
    """The text of the tutorial's markdown cells, as a notebook shows them."""
    import jupytext

    return [c.source for c in jupytext.read(tutorial).cells if c.cell_type == "markdown"]


def _title(markdown: list[str]) -> str:
    """The tutorial's title: the first level-1 heading of its first markdown cell."""
    match = re.search(r"^#\s+(.+?)\s*$", markdown[0] if markdown else "", re.M)
    assert match, "the tutorial does not start with a '# Title' markdown cell"
    return match.group(1)


TINY = """# %% [markdown]
# # Tiny: one sum and one figure
#
# The sum $a + b$ of two numbers.

# %%
import matplotlib.pyplot as plt
import minigrad as mg
from _common import savefig

# %%
x = mg.tensor([1.0, 2.0])
print("sum", (x + x).sum().item())
fig, ax = plt.subplots()
ax.plot([0, 1], [0, 1])
savefig(fig, "tiny")
"""
BROKEN = TINY.replace("# # Tiny: one sum", "# # Broken: one sum").replace(
    'print("sum"', 'assert x.shape == (3,), "x has two elements"\nprint("sum"')
ENV = dict(os.environ, NUMBA_NUM_THREADS="1")


@pytest.fixture(scope="module")
def book_packages():
    for module in ("sphinx", "myst_nb", "furo", "nbclient", "jupytext", "selenium"):
        pytest.importorskip(module, reason="the book needs `pip install -e .[book]`")


def _build_tiny(folder: Path, out: Path, *extra):
    return subprocess.run([sys.executable, str(ROOT / "book" / "build.py"), "--tutorials",
                           str(folder), "--out", str(out), *extra],
                          cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=600)


def _tiny_folder(tmp_path: Path, **files) -> Path:
    folder = tmp_path / "tutorials"
    folder.mkdir()
    shutil.copy(ROOT / "tutorials" / "_common.py", folder)
    for name, text in files.items():
        (folder / f"{name}.py").write_text(text, encoding="utf-8")
    return folder


@slow
def test_a_failing_tutorial_fails_the_build_naming_it_and_its_cell(book_packages, tmp_path):
    folder = _tiny_folder(tmp_path, **{"01_tiny": TINY, "02_broken": BROKEN})
    done = _build_tiny(folder, tmp_path / "out")
    assert done.returncode == 1, done.stdout + done.stderr
    line = BROKEN.splitlines().index('assert x.shape == (3,), "x has two elements"') + 1
    assert (f"book: tutorial 02_broken.py failed in code cell 2 at line {line} of the file: "
            "AssertionError: x has two elements") in done.stderr, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert not (tmp_path / "out" / "html").exists(), "a failed run still rendered the book"


@slow
def test_an_unchanged_tutorial_is_not_run_again(book_packages, tmp_path):
    folder = _tiny_folder(tmp_path, **{"01_tiny": TINY})
    out = tmp_path / "out"
    first, second = _build_tiny(folder, out), _build_tiny(folder, out)
    assert "01_tiny.py: ran in" in first.stdout, first.stdout + first.stderr
    assert "01_tiny.py: cached" in second.stdout, second.stdout + second.stderr
    (folder / "01_tiny.py").write_text(TINY + '\n# %%\nprint("one more cell")\n')
    third = _build_tiny(folder, out)
    assert "01_tiny.py: ran in" in third.stdout, "a changed tutorial was taken from the cache"
    page = (out / "html" / "tutorials" / "01_tiny.html").read_text(encoding="utf-8")
    assert "one more cell" in page and "sum 6.0" in page
    assert re.search(r'<img [^>]*src="\.\./_images/[0-9a-f]+\.png"', page), "the saved figure is not shown"


@pytest.fixture(scope="module")
def site(book_packages):
    """Build the book (reusing cached runs) and return its html folder."""
    env = ENV
    done = subprocess.run([sys.executable, str(ROOT / "book" / "build.py")], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, f"the book did not build:\n{done.stdout}\n{done.stderr}"
    warnings = [ln for ln in done.stderr.splitlines() if "WARNING" in ln or "ERROR" in ln]
    assert not warnings, "the build warned:\n" + "\n".join(warnings[:20])
    assert (SITE / "index.html").is_file()
    return SITE


@pytest.fixture(scope="module")
def browser(site):
    with chromium() as driver:
        yield driver


def straight_quotes(text: str) -> str:
    """`text` with Sphinx's typographic quotes turned back into the straight ones of the source."""
    return text.translate(str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"',
                                         "\u201d": '"'}))


def _open(driver, page: Path):
    """Load `page`, wait for MathJax to typeset it, and return the console's errors."""
    driver.get(page.as_uri())
    state = driver.execute_async_script(WAIT_MATH_JS)
    assert not state.startswith("error"), f"{page.name}: MathJax failed: {state}"
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


@slow
def test_site_loads_nothing_from_the_internet(site):
    remote = re.compile(r"<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)=\"(?:https?:)?//", re.I)
    offenders = [str(p.relative_to(site)) for p in site.rglob("*.html")
                 if remote.search(p.read_text(encoding="utf-8"))]
    assert not offenders, f"pages that load scripts, styles or images from the web: {offenders}"


@slow
def test_table_of_contents_follows_the_reading_order(site):
    sys.path.insert(0, str(ROOT / "book"))
    try:
        import build
    finally:
        sys.path.remove(str(ROOT / "book"))
    order = [p.stem for p in build.tutorial_order()]
    index = (site / "index.html").read_text(encoding="utf-8")
    toc = index[index.index('<div class="toctree-wrapper'):]
    linked = list(dict.fromkeys(re.findall(r'href="tutorials/([\w.-]+)\.html"', toc)))
    assert linked == order, f"the contents list {linked}, the reading order is {order}"
    for heading in ("The layout", "The Tensor API"):
        assert heading in index, f"the front page lacks the README's section '{heading}'"


@slow
@pytest.mark.parametrize("tutorial", TUTORIALS, ids=[p.stem for p in TUTORIALS])
def test_tutorial_page(tutorial, site, browser):
    page = site / "tutorials" / (tutorial.stem + ".html")
    assert page.is_file(), f"no page for {tutorial.name}"
    errors = _open(browser, page)
    text = tutorial.read_text(encoding="utf-8")
    markdown = _markdown(tutorial)
    title = _title(markdown)
    h1 = browser.execute_script("return document.querySelector('article h1').textContent")
    # Sphinx prints a typographic apostrophe for the source's straight one
    assert straight_quotes(h1.rstrip("#¶ ").strip()) == title, (
        f"{page.name}: heading {h1!r}, want {title!r}")
    assert straight_quotes(browser.title).startswith(title), (
        f"{page.name}: window title {browser.title!r}")

    figures = browser.execute_script(
        "return Array.from(document.querySelectorAll('.cell_output img'))"
        ".filter(img => img.complete && img.naturalWidth > 0).length")
    # the screenshots first, so that a page that fails a check below can still be looked at
    SHOTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(SHOTS / f"{tutorial.stem}.png"))
    if figures:
        browser.execute_script("document.querySelector('.cell_output img')"
                               ".scrollIntoView({block: 'center', behavior: 'instant'})")
        browser.save_screenshot(str(SHOTS / f"{tutorial.stem}-figure.png"))
        browser.execute_script("window.scrollTo({top: 0, behavior: 'instant'})")
    if MAKES_FIGURE.search(text):
        assert figures >= 1, f"{page.name}: {tutorial.name} makes a figure but none is shown"

    if any("$" in m for m in markdown):  # the text has math
        typeset = browser.execute_script("return document.querySelectorAll('mjx-container').length")
        assert typeset > 0, f"{page.name}: no math was typeset"
        tex_errors = browser.execute_script(
            "return Array.from(document.querySelectorAll('mjx-merror'))"
            ".map(e => e.getAttribute('data-mjx-error') || e.textContent)")
        assert not tex_errors, f"{page.name}: MathJax could not typeset {tex_errors}"
    raw = browser.execute_script(RAW_MATH_JS)
    assert not raw, f"{page.name}: TeX left untypeset in the text: {raw[:5]}"
    assert "Source used" in browser.page_source, f"{page.name}: no 'Source used' section"
    folding = folding_problems(page.read_text(encoding="utf-8"))
    assert not folding, f"{page.name}: " + "; ".join(folding)
    if "tags=[\"solution\"]" in text:
        hidden = browser.execute_script(SOLUTION_SHOWN_JS)
        assert hidden == [False], f"{page.name}: a solution is visible before any click"
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import WebDriverWait

        summary = browser.find_element(By.CSS_SELECTOR, ".tag_solution details > summary")
        browser.execute_script("arguments[0].scrollIntoView({block: 'center', behavior: 'instant'})", summary)
        summary.click()
        WebDriverWait(browser, 5).until(lambda b: b.execute_script(SOLUTION_SHOWN_JS) == [True],
                                        f"{page.name}: a click on the bar does not show the solution")
    if "backward-stepper" in text:
        check_stepper(browser)
    assert not errors, f"{page.name}: console errors {errors}"


@slow
def test_every_page_has_its_images_and_working_links(site, browser):
    pages = sorted(site.rglob("*.html"))
    problems = []
    for page in pages:
        name = str(page.relative_to(site))
        errors = _open(browser, page)
        problems += [f"{name}: console error {e}" for e in errors]
        problems += [f"{name}: image not shown {src}"
                     for src in browser.execute_script(BROKEN_IMAGES_JS)]
        problems += [f"{name}: loaded from the web {url}"
                     for url in browser.execute_script(REMOTE_LOADS_JS)]
        hrefs = browser.execute_script(
            "return Array.from(document.querySelectorAll('a[href]')).map(a => a.href)")
        for href in hrefs:
            url = urlsplit(href)
            if url.scheme != "file":
                continue
            target = Path(unquote(url.path))
            if not target.is_file():
                problems.append(f"{name}: broken link {href}")
            elif url.fragment and target.suffix == ".html" and unquote(url.fragment) not in _ids(target):
                problems.append(f"{name}: link to a missing anchor {href}")
    assert len(pages) > 3 + len(TUTORIALS), f"only {len(pages)} pages were built"
    assert not problems, "\n".join(problems[:30])
