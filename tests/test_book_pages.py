"""What a learner must not see at once on a book page, and what each page says about its run.

Solutions and the answers of "Test yourself" stay folded until clicked, and no solution is
shown earlier on its page; each page says whether it shows a small or a full-size run, and a
published full-size run is shown only while its tutorial is unchanged. The fast tests render a
tiny book with the book's own Sphinx settings but no kernel (a few seconds); the slow one runs
a tiny tutorial with an HTML stepper and clicks through it in headless Chromium.
"""
from __future__ import annotations

import contextlib
import html
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")

# myst-nb's markup of one code cell, up to the next cell or the end of the article
CELL = re.compile(r'<div class="cell ([^"]*)">(.*?)(?=<div class="cell |</article>|\Z)', re.S)
CODE = re.compile(r'<div class="cell_input[^"]*">\s*<div class="highlight[^"]*">'
                  r'<div class="highlight"><pre>(.*?)</pre>', re.S)
# a folded element: a <details> that is not open
FOLDED = re.compile(r"\s*<details\b(?![^>]*\bopen\b)[^>]*>\s*<summary", re.S)
ANSWER = re.compile(r"<details\b([^>]*)>\s*<summary>\s*Answer", re.S)


def _text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def _lines(code: str) -> set[str]:
    """The lines of `code` that say something: not blank, not a comment or a docstring line."""
    out = set()
    for line in code.splitlines():
        line = line.strip()
        if line and not line.startswith(("#", '"""', "'''")):
            out.add(line)
    return out


def folding_problems(page: str) -> list[str]:
    """What a built page shows that it should fold: a solution's code or an answer outside a
    closed <details>, or a solution shown in an earlier cell (more than half of the lines it
    adds to its exercise's stub, found in one earlier cell)."""
    problems = []
    cells = [(cls.split(), body) for cls, body in CELL.findall(page)]
    codes = []  # the code of each cell so far, in page order
    for classes, body in cells:
        code_match = CODE.search(body)
        code = _text(code_match.group(1)) if code_match else ""
        if "tag_solution" in classes:
            first = code.strip().splitlines()[0] if code.strip() else "(empty)"
            if not code_match or not FOLDED.match(body[: code_match.start()]):
                problems.append(f"solution {first!r} is not inside a closed <details>")
            stub = _lines(codes[-1]) if codes else set()
            added = _lines(code) - stub
            for k, earlier in enumerate(codes[:-1]):
                shown = added & _lines(earlier)
                if len(added) >= 2 and len(shown) * 2 > len(added):
                    problems.append(f"solution {first!r}: code cell {k + 1} already shows "
                                    f"{sorted(shown)}")
        codes.append(code)
    for attrs in ANSWER.findall(page):
        if re.search(r"\bopen\b", attrs):
            problems.append("a 'Test yourself' answer is an open <details>")
    return problems


def test_the_front_page_names_only_files_that_exist():
    text = (ROOT / "book" / "front.md").read_text(encoding="utf-8")
    # `tutorials/x.py`, `python tutorials/x.py`, `book/published/`: paths of the repository
    named = [w for code in re.findall(r"`([^`]+)`", text) for w in code.split()
             if "/" in w or re.search(r"\.(py|md)$", w)]
    assert named, "the front page names no file; the test looks for `path` spans"
    missing = [w for w in named if not (ROOT / w.rstrip("/")).exists()
               and not (ROOT / "tutorials" / w).exists()]
    assert not missing, f"book/front.md names files that do not exist: {missing}"


@contextlib.contextmanager
def chromium(window="1280,1400"):
    """Headless Chromium through chromedriver, with a profile of its own, closed afterwards."""
    if not (CHROMIUM and CHROMEDRIVER):
        pytest.skip("needs Debian's chromium and chromium-driver")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="book-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
                f"--window-size={window}", "--hide-scrollbars"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_script_timeout(60)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


EXERCISE = '''# %% [markdown]
# # Tiny: an exercise
#
# Write `double(x)`, which returns $2x$.

# %%
def double(x):
    """2 x."""
    raise NotImplementedError

# %% tags=["solution"] jupyter={"source_hidden": true}
# Solution
def double(x):
    """2 x."""
    twice = x + x
    return twice


assert double(2) == 4

# %% [markdown]
# ## Test yourself
#
# **1.** What is $1 + 1$?
#
# <details><summary>Answer</summary>
#
# Two: $1 + 1 = 2$.
#
# </details>

# %%
assert 1 + 1 == 2
print("answer", 1 + 1)
'''
TRAINED = '''# %% [markdown]
# # Trained: a result that needs the real sizes
#
# After training, the accuracy is high.

# %%
print("accuracy 0.97")
'''


@pytest.fixture(scope="module")
def book():
    """The book's build module, imported from book/ (skipped without the `book` extra)."""
    for module in ("sphinx", "myst_nb", "furo", "jupytext"):
        pytest.importorskip(module, reason="the book needs `pip install -e .[book]`")
    sys.path.insert(0, str(ROOT / "book"))
    try:
        import build
        import published
    finally:
        sys.path.remove(str(ROOT / "book"))
    return build, published


def _notebook(path: Path, mode="small"):
    """The tutorial as a notebook whose cells were not run, marked as a run in `mode`."""
    import jupytext

    nb = jupytext.read(path)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    nb.metadata["minigrad_book"] = {"mode": mode}
    return nb


@pytest.fixture(scope="module")
def tiny_book(book, tmp_path_factory):
    """A two-page book: an exercise (a small run) and a page from a published full-size run."""
    build, published = book
    tmp = tmp_path_factory.mktemp("book")
    folder, runs = tmp / "tutorials", tmp / "published"
    folder.mkdir()
    shutil.copy(ROOT / "tutorials" / "_common.py", folder)
    (folder / "01_exercise.py").write_text(EXERCISE, encoding="utf-8")
    trained = folder / "02_trained.py"
    trained.write_text(TRAINED, encoding="utf-8")
    kept = _notebook(trained, "full")
    kept.metadata["minigrad_book"].update(source=published.execute.source_digest(trained),
                                          commit="abc1234", seconds=300)
    runs.mkdir()
    published.nbformat.write(kept, runs / "02_trained.ipynb")
    loaded = published.load(trained, runs)
    assert loaded.current and loaded.commit == "abc1234"
    exercise = _notebook(folder / "01_exercise.py")
    # what the last cell prints when run: the answer, which must be folded with the code
    exercise.cells[-1].outputs = [published.nbformat.v4.new_output(
        "stream", name="stdout", text="answer 2\n")]
    notebooks = {folder / "01_exercise.py": exercise, trained: loaded.notebook}
    src, changed = build.stage(notebooks, True, tmp / "out")
    site = build.sphinx(src, tmp / "out", changed)
    return {p.stem: (site / "tutorials" / f"{p.stem}.html").read_text(encoding="utf-8")
            for p in notebooks}


def test_solutions_and_answers_are_folded_in_the_built_page(tiny_book):
    page = tiny_book["01_exercise"]
    assert not folding_problems(page), folding_problems(page)
    before, solution = page.split('<div class="cell tag_solution', 1)
    assert "twice = x + x" in _text(solution) and "twice = x + x" not in _text(before)
    assert "Show the solution" in solution
    assert re.search(r"<details><summary>Answer</summary>\s*<p>Two", page), "answer not folded"
    # the cell after the answer computes it, so its code and output are folded as well
    check = page[page.index('<div class="cell tag_hide-cell'):]
    assert FOLDED.match(check[check.index(">") + 1:]), "the answer's check is not folded"
    folded = _text(check[: check.index("</details>")])
    assert "Show the code that checks this answer" in folded and "assert 1 + 1 == 2" in folded
    assert "answer 2" in folded and "answer 2" not in _text(page.replace(check, ""))


def test_the_check_finds_an_unfolded_or_early_solution(tiny_book):
    page = tiny_book["01_exercise"]
    opened = page.replace('<details class="admonition hide above-input">',
                          '<details class="admonition hide above-input" open>')
    assert any("not inside a closed" in p for p in folding_problems(opened))
    # the same solution shown once before the stub, as an ordinary cell
    first = page.index('<div class="cell ')
    solution = page[page.index('<div class="cell tag_solution'):]
    solution = solution[: solution.index("</details>") + len("</details>")]
    early = page[:first] + solution.replace("tag_solution", "tag_example") + page[first:]
    assert any("already shows" in p for p in folding_problems(early))
    assert any("answer is an open" in p for p in folding_problems(
        page.replace("<details><summary>Answer", "<details open><summary>Answer")))


def test_each_page_says_which_run_it_shows(tiny_book):
    small, full = tiny_book["01_exercise"], tiny_book["02_trained"]
    assert "small-mode run" in small and "full-size run" not in small
    assert "full-size run" in full and "small-mode run" not in full
    assert "commit <code" in full and "abc1234" in full and "5 minutes" in full


def test_a_published_run_is_stale_once_its_tutorial_changes(book, tmp_path):
    build, published = book
    folder = tmp_path / "tutorials"
    folder.mkdir()
    tutorial = folder / "02_trained.py"
    tutorial.write_text(TRAINED, encoding="utf-8")
    kept = _notebook(tutorial, "full")
    kept.metadata["minigrad_book"]["source"] = published.execute.source_digest(tutorial)
    published.nbformat.write(kept, tmp_path / "02_trained.ipynb")
    assert published.load(tutorial, tmp_path).current
    # the build shows it without running a kernel
    shown = build.run_tutorials([tutorial], published.execute.Mode(), False, tmp_path / "out",
                                tmp_path)
    assert shown[tutorial].metadata["minigrad_book"]["mode"] == "full"
    tutorial.write_text(TRAINED.replace("0.97", "0.98"), encoding="utf-8")
    assert not published.load(tutorial, tmp_path).current
    (folder / "_common.py").write_text("# changed\n", encoding="utf-8")
    tutorial.write_text(TRAINED, encoding="utf-8")
    assert not published.load(tutorial, tmp_path).current, "_common.py is part of the check"
    assert published.load(folder / "03_other.py", tmp_path) is None


def test_published_runs_are_full_size_runs_of_existing_tutorials(book):
    build, published = book
    for path in sorted(published.FOLDER.glob("*.ipynb")):
        tutorial = ROOT / "tutorials" / (path.stem + ".py")
        assert tutorial.is_file(), f"{path.name} is kept for a tutorial that does not exist"
        meta = published.nbformat.read(path, as_version=4).metadata["minigrad_book"]
        assert meta["mode"] == "full" and meta["source"] and meta["commit"], path.name


STEPPER = '''# %% [markdown]
# # Stepper: frames stepped through with buttons

# %%
from IPython.display import HTML, display

frames = "".join(
    f'<div class="frame" data-step="{k}" style="display:{"block" if k == 0 else "none"}">'
    f"<p>Step {k + 1} of 3</p></div>" for k in range(3))
display(HTML(f"""<div id="stepper1" class="backward-stepper">
<button class="prev">Previous</button> <button class="next">Next</button>
{frames}
<script>
(function() {{
  var root = document.getElementById("stepper1"), k = 0;
  var frames = root.querySelectorAll(".frame");
  function show(j) {{
    k = Math.max(0, Math.min(frames.length - 1, j));
    frames.forEach(function(f, i) {{ f.style.display = i === k ? "block" : "none"; }});
  }}
  root.querySelector(".prev").onclick = function() {{ show(k - 1); }};
  root.querySelector(".next").onclick = function() {{ show(k + 1); }};
}})();
</script></div>"""))
'''
VISIBLE_FRAMES_JS = """
return Array.from(document.querySelectorAll('.backward-stepper .frame'))
  .filter(f => f.offsetParent !== null).map(f => f.dataset.step);
"""


def check_stepper(driver) -> None:
    """The page's first stepper shows one frame at a time; Next moves forward and stops at the
    last frame, Previous moves back. The clicks are real clicks on the buttons."""
    from selenium.webdriver.common.by import By

    n = len(driver.find_elements(By.CSS_SELECTOR, ".backward-stepper .frame"))
    assert n >= 2, "the page has no stepper with two frames or more"
    shown = [driver.execute_script(VISIBLE_FRAMES_JS)]
    for name in ["next"] * n + ["prev"]:  # one Next past the end: the last frame stays
        button = driver.find_element(By.CSS_SELECTOR, f".backward-stepper .{name}")
        driver.execute_script(
            "arguments[0].scrollIntoView({block: 'center', behavior: 'instant'})", button)
        button.click()
        shown.append(driver.execute_script(VISIBLE_FRAMES_JS))
    want = [[str(k)] for k in range(n)] + [[str(n - 1)], [str(n - 2)]]
    assert shown == want, f"visible frames after each click {shown}, want {want}"


@pytest.mark.slow
def test_a_stepper_in_a_page_steps_through_its_frames(book, tmp_path):
    pytest.importorskip("selenium", reason="the book needs `pip install -e .[book]`")
    folder = tmp_path / "tutorials"
    folder.mkdir()
    shutil.copy(ROOT / "tutorials" / "_common.py", folder)
    (folder / "01_stepper.py").write_text(STEPPER, encoding="utf-8")
    done = subprocess.run([sys.executable, str(ROOT / "book" / "build.py"), "--tutorials",
                           str(folder), "--out", str(tmp_path / "out")], cwd=ROOT,
                          env=dict(os.environ, NUMBA_NUM_THREADS="1"), capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    page = tmp_path / "out" / "html" / "tutorials" / "01_stepper.html"
    with chromium() as driver:
        driver.get(page.as_uri())
        check_stepper(driver)
        errors = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert not errors, errors


def test_the_chapters_follow_their_numbers_then_the_appendices(book):
    build, _ = book
    names = [p.name for p in build.tutorial_order()]
    numbered = [n for n in names if n[:1].isdigit()]
    assert numbered == sorted(numbered, key=lambda n: int(n.split("_")[0]))
    assert names == numbered + sorted(n for n in names if not n[:1].isdigit()), names
    assert names[0].startswith("01_"), names


@pytest.mark.slow
def test_publish_keeps_a_full_run_that_builds_show_until_the_tutorial_changes(book, tmp_path):
    folder = tmp_path / "tutorials"
    folder.mkdir()
    shutil.copy(ROOT / "tutorials" / "_common.py", folder)
    size = 'n = 3 if SMALL else 30\nprint("trained on", n)\n'
    (folder / "01_sized.py").write_text(
        TRAINED.replace('print("accuracy 0.97")\n', "from _common import SMALL\n" + size))
    runs, out = tmp_path / "published", tmp_path / "out"

    def run(*extra):
        done = subprocess.run([sys.executable, str(ROOT / "book" / "build.py"), "--tutorials",
                               str(folder), "--out", str(out), "--published", str(runs), *extra],
                              cwd=ROOT, env=dict(os.environ, NUMBA_NUM_THREADS="1"),
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr
        page = (out / "html" / "tutorials" / "01_sized.html").read_text(encoding="utf-8")
        return done.stdout, _text(page)

    log, page = run("--publish", "01_sized")
    assert (runs / "01_sized.ipynb").is_file() and "published full-size run" in log, log
    assert "trained on 30" in page and "full-size run" in page
    (folder / "01_sized.py").write_text((folder / "01_sized.py").read_text() + "# one more line\n")
    log, page = run()
    assert "01_sized.py: its published full-size run is stale" in log, log
    assert "trained on 3\n" in page and "small-mode run" in page
