"""Build the tutorials into a static HTML book that a learner opens in a browser.

    python book/build.py            # tutorials in small mode (tiny sizes, about two minutes)
    python book/build.py --full     # the real sizes and training runs
    python book/build.py --rerun    # run every tutorial again, even if its cached run is current
    python book/build.py --publish 13_toy_translation   # keep its full-size run in book/published

The site lands in book/_build/html (open index.html; nothing is fetched from the internet).
Each tutorial in tutorials/ runs as a notebook (see execute.py); a run is reused while the
tutorial, tutorials/_common.py, the library and the mode are unchanged. A tutorial with a
current full-size run in book/published/ (see published.py) shows that run in every build.
Each page says which kind of run produced it. The pages are staged in book/_build/src and
Sphinx (myst-nb, Furo theme, MathJax served locally) renders them; solution cells and the
answers of "Test yourself" are folded until the reader clicks.
"""
from __future__ import annotations

import argparse
import importlib.util
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

try:
    import nbformat

    import execute
    import published
    import sources
except ImportError as err:  # the book's packages are an extra, not a dependency of minigrad
    sys.exit(f"book: the Python package {err.name!r} is missing; "
             'install the book\'s packages with pip install -e ".[book]"')

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
TUTORIALS = ROOT / "tutorials"
BUILD = BOOK / "_build"
# the README sections the front page repeats, found by the start of their heading
FRONT_SECTIONS = ("The layout", "The Tensor API")
SMALL_NOTE = """```{note}
This copy of the book was built in small mode (`MINIGRAD_TUTORIAL_SMALL=1`): tutorials run at
tiny sizes with short training, so their trained results are not meaningful. The chapters whose
text discusses trained results show a full-size run kept in `book/published/` instead, while
that run matches the chapter's code. Each chapter says at its top which kind of run it shows;
`python book/build.py --full` runs every chapter at the real sizes.
```"""
PAGE_SMALL = """```{note}
This page shows a **small-mode run** (`MINIGRAD_TUTORIAL_SMALL=1`): tiny sizes and short
training, so trained results on it are not meaningful. `python book/build.py --full` runs it at
the real sizes.
```"""
PAGE_FULL = """```{note}
This page shows a **full-size run** (the real sizes and training runs){how}.
```"""
# the answer of a "Test yourself" question: a <details> block in markdown
ANSWER = re.compile(r"<details>\s*<summary>", re.I)


class BuildError(Exception):
    """A build step failed; the message says which and why, in one line per problem."""


def tutorial_order(folder: Path = TUTORIALS) -> list[Path]:
    """The tutorials in reading order: the numbered ones by their number, then the appendices
    (names that do not start with a digit) by name.

    A tutorial is a `*.py` file in `folder` whose name does not start with "_".
    """
    files = [p for p in folder.glob("*.py") if not p.name.startswith("_")]
    return sorted(files, key=lambda p: (is_appendix(p), p.name))


def is_appendix(path: Path) -> bool:
    """An appendix is a tutorial outside the numbered path, such as A1_inside_the_kernels.py."""
    return not path.name[:1].isdigit()


def open_details(markdown: str) -> str:
    """Blank lines inside each <details> block, so that its text is read as markdown (and its
    math typeset) rather than passed through as raw HTML, as Jupyter shows it."""
    markdown = re.sub(r"(</summary>)[ \t]*\n*", r"\1\n\n", markdown)
    return re.sub(r"\n*[ \t]*(</details>)", r"\n\n\1", markdown)


def title_of(notebook, name: str) -> str:
    """The text of the first level-1 heading of the notebook's first markdown cell."""
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            match = re.search(r"^#\s+(.+?)\s*$", cell.source, re.M)
            if match:
                return match.group(1)
            break
    raise BuildError(f"tutorial {name} does not start with a '# Title' markdown cell")


def readme_sections(readme: str, starts=FRONT_SECTIONS) -> str:
    """The README's level-2 sections whose headings begin with `starts`, in that order."""
    parts = re.split(r"^(?=## )", readme, flags=re.M)
    chosen = []
    for start in starts:
        found = [p for p in parts if p.startswith("## " + start)]
        if not found:
            raise BuildError(f"README.md has no section '## {start}...' for the front page")
        chosen.append(found[0].rstrip())
    return "\n\n".join(chosen)


def _toctree(caption: str, entries: list[str]) -> str:
    return f"```{{toctree}}\n:caption: {caption}\n:maxdepth: 1\n\n" + "\n".join(entries) + "\n```"


def front_page(paths: list[Path], small: bool) -> str:
    """index.md: the hand-written opening, the README's layout and API, the table of contents."""
    intro = (BOOK / "front.md").read_text(encoding="utf-8").rstrip()
    readme = readme_sections((ROOT / "README.md").read_text(encoding="utf-8"))
    main = [f"tutorials/{p.stem}" for p in paths if not is_appendix(p)]
    extra = [f"tutorials/{p.stem}" for p in paths if is_appendix(p)]
    return "\n\n".join(part for part in [
        intro, SMALL_NOTE if small else "", readme, _toctree("Tutorials", main),
        _toctree("Appendix", extra) if extra else "", _toctree("Library", ["source/index"]),
    ] if part) + "\n"


def write_if_changed(path: Path, text: str) -> bool:
    """Write `text` unless `path` already holds it, so Sphinx re-reads only changed pages."""
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return True


def fold(cell, show: str, hide: str, what: str = "input"):
    """Show the cell's code (`what` "input") or the whole cell ("cell") folded in a closed
    <details>, with `show` on the bar that opens it."""
    tags = cell.metadata.setdefault("tags", [])
    if f"hide-{what}" not in tags:
        tags.append(f"hide-{what}")
    cell.metadata.setdefault("mystnb", {}).update(code_prompt_show=show, code_prompt_hide=hide)


def page_notebook(notebook, used: dict, note: str):
    """The notebook as the book shows it: `note` after the title, solutions and the code that
    checks a "Test yourself" answer folded, "Source used" last."""
    notebook = nbformat.from_dict(notebook)
    if note:
        notebook.cells.insert(1, nbformat.v4.new_markdown_cell(note))
    if used:
        notebook.cells.append(nbformat.v4.new_markdown_cell(sources.section(used)))
    after_answer = False
    for i, cell in enumerate(notebook.cells):
        if cell.cell_type == "markdown":
            cell.source = open_details(cell.source)
            after_answer = bool(ANSWER.search(cell.source))
        elif "solution" in cell.metadata.get("tags", []):
            fold(cell, "Show the solution", "Hide the solution")
        elif after_answer:  # it computes the answer just given: its output shows it too
            fold(cell, "Show the code that checks this answer", "Hide the code", "cell")
            after_answer = False
        cell["id"] = f"cell-{i}"  # stable ids keep the staged file identical between builds
    return notebook


def page_note(nb) -> str:
    """The note at the top of a page: which kind of run produced what it shows."""
    meta = nb.metadata.get("minigrad_book", {})
    if meta.get("mode") != "full":
        return PAGE_SMALL
    if "source" not in meta:  # a --full build
        return PAGE_FULL.replace("{how}", "")
    minutes = meta.get("seconds", 0) / 60
    took = f", which took {minutes:.0f} minutes" if minutes >= 1 else ""
    return PAGE_FULL.replace("{how}", (
        f", kept in `book/published/` and made with the library at commit "
        f"`{meta.get('commit', 'unknown')}`{took}. It is shown while this tutorial and "
        "`tutorials/_common.py` are unchanged; `python book/build.py --publish` makes it again"))


def run_tutorials(paths, mode, rerun, out: Path, runs: Path = published.FOLDER):
    """Execute (or take from the cache, or from the published full-size runs in `runs`) every
    tutorial; raise BuildError naming each failure."""
    lib = execute.library_digest(ROOT)
    notebooks, failures = {}, []
    for path in paths:
        start = time.perf_counter()
        kept = published.load(path, runs)
        if kept and kept.current:
            print(f"  {path.name}: published full-size run (library at {kept.commit})", flush=True)
            notebooks[path] = kept.notebook
            continue
        if kept:
            print(f"  {path.name}: its published full-size run is stale (the tutorial or "
                  f"_common.py changed): showing a {mode.name} run; refresh it with "
                  f"python book/build.py --publish {path.stem}", flush=True)
        try:
            nb, ran = execute.executed(path, mode, out / "cache", out / "figures" / mode.name,
                                       ROOT, lib, rerun)
        except execute.TutorialFailed as err:
            failures.append(str(err))
            print(f"  FAILED {path.name}", flush=True)
            continue
        how = f"ran in {time.perf_counter() - start:.1f} s" if ran else "cached"
        print(f"  {path.name}: {how}", flush=True)
        notebooks[path] = nb
    if failures:
        raise BuildError("\n".join(failures))
    return notebooks


def publish(names: list[str], tutorials: Path, out: Path, runs: Path = published.FOLDER):
    """Run the named tutorials at full size and keep their executed notebooks in `runs`."""
    lib = execute.library_digest(ROOT)
    for name in names:
        path = tutorials / (name if name.endswith(".py") else name + ".py")
        if not path.is_file():
            raise BuildError(f"--publish: no tutorial {path.name} in {tutorials}")
        print(f"  {path.name}: running at full size", flush=True)
        try:
            saved = published.publish(path, ROOT, out / "cache", out / "figures" / "full", lib, runs)
        except execute.TutorialFailed as err:
            raise BuildError(str(err)) from None
        print(f"  {path.name}: kept in {saved} ({saved.stat().st_size // 1024} KB)", flush=True)


def stage(notebooks: dict, small: bool, out: Path) -> tuple[Path, bool]:
    """Write the book's source pages into `out`/src; return it and whether any page changed."""
    src = out / "src"
    wanted = {}
    users_of = {}
    for path, nb in notebooks.items():
        used = sources.used_source(path, ROOT)
        title = title_of(nb, path.name)
        for rel in used:
            users_of.setdefault(rel, []).append((path.stem, title))
        page = page_notebook(nb, used, page_note(nb))
        wanted[src / "tutorials" / (path.stem + ".ipynb")] = nbformat.writes(page)
    for rel, users in users_of.items():
        wanted[src / (sources.page_name(rel) + ".md")] = sources.source_page(rel, ROOT, users)
    wanted[src / "source" / "index.md"] = sources.source_index(users_of)
    wanted[src / "index.md"] = front_page(list(notebooks), small)
    changed = False
    for old in [p for p in src.rglob("*") if p.is_file() and p not in wanted] if src.exists() else []:
        old.unlink()  # a renamed or removed tutorial must not linger as a page
        changed = True
    for path, text in wanted.items():
        changed |= write_if_changed(path, text)
    return src, changed


def sphinx(src: Path, out: Path, changed: bool) -> Path:
    """Render the staged pages to HTML with Sphinx; raise BuildError with its messages if it fails.

    Only changed pages are read again, but if any changed, every page is written (-a): each
    one carries the whole table of contents in its sidebar, which a changed title makes stale.
    """
    html = out / "html"
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-c", str(BOOK),
           "-d", str(out / "doctrees"), str(src), str(html)] + (["-a"] if changed else [])
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.stderr.strip():
        print(done.stderr.rstrip(), file=sys.stderr)
    if done.returncode != 0:
        raise BuildError(f"Sphinx failed (exit {done.returncode}); its messages are above")
    return html


def build(small=True, rerun=False, tutorials: Path = TUTORIALS, out: Path = BUILD,
          runs: Path = published.FOLDER) -> Path:
    """Run the tutorials, stage the pages, render them into `out`/html; return its index.html."""
    missing = [m for m in ("sphinx", "myst_nb", "furo") if importlib.util.find_spec(m) is None]
    if missing:
        raise BuildError(f"missing Python packages {missing}; pip install -e \".[book]\"")
    paths = tutorial_order(tutorials)
    if not paths:
        raise BuildError(f"no tutorials found in {tutorials}")
    mode = execute.Mode(small=small)
    print(f"running {len(paths)} tutorials ({mode.name} mode)", flush=True)
    notebooks = run_tutorials(paths, mode, rerun, out, runs)
    if rerun:
        shutil.rmtree(out / "doctrees", ignore_errors=True)
    src, changed = stage(notebooks, small, out)
    html = sphinx(src, out, changed)
    return html / "index.html"


def main(argv=None):
    parser = argparse.ArgumentParser(description="Build the tutorials into an HTML book.")
    parser.add_argument("--full", action="store_true",
                        help="run the tutorials at their real sizes (default: small mode)")
    parser.add_argument("--rerun", action="store_true",
                        help="run every tutorial again instead of reusing cached runs")
    parser.add_argument("--publish", nargs="+", metavar="NAME", default=[],
                        help="run these tutorials (e.g. 13_toy_translation) at full size, keep "
                             "the runs in book/published/ for every build, then build the book")
    parser.add_argument("--published", type=Path, default=published.FOLDER,
                        help="folder of the kept full-size runs (default: book/published/)")
    parser.add_argument("--tutorials", type=Path, default=TUTORIALS,
                        help="folder of the tutorials (default: tutorials/)")
    parser.add_argument("--out", type=Path, default=BUILD,
                        help="build folder; the site goes to OUT/html (default: book/_build)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    try:
        runs = args.published.resolve()
        publish(args.publish, args.tutorials.resolve(), args.out.resolve(), runs)
        index = build(small=not args.full, rerun=args.rerun, tutorials=args.tutorials.resolve(),
                      out=args.out.resolve(), runs=runs)
    except BuildError as err:
        for line in str(err).splitlines():
            print(f"book: {line}", file=sys.stderr)
        return 1
    shown = index.relative_to(ROOT) if index.is_relative_to(ROOT) else index
    print(f"built {shown} in {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
