"""Sphinx settings of the book; `python book/build.py` stages the pages and runs Sphinx with them."""
project = "minigrad"
html_title = "minigrad: the Transformer, block by block"
author = "the minigrad authors"

extensions = [
    "myst_nb",                 # notebooks and MyST markdown
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",  # serves MathJax 3 from the built folder, not from a CDN
]

# build.py runs the tutorials itself (cache, failure report, saved figures shown), so Sphinx
# only renders the notebooks it is given
nb_execution_mode = "off"
nb_merge_streams = True        # one block per cell for text printed in several pieces
nb_ipywidgets_js = {}          # no widgets; otherwise myst-nb adds scripts from a CDN
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_dmath_double_inline = True  # "$$...$$" inside a paragraph is display math, as in Jupyter

html_theme = "furo"            # bundles its CSS, JS and fonts: the site works offline
html_copy_source = False
html_show_sourcelink = False
html_show_copyright = False
html_static_path = ["static"]
html_css_files = ["book.css"]
pygments_style = "friendly"
exclude_patterns = ["**.ipynb_checkpoints"]
