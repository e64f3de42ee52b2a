"""`minigrad.version`, as `torch.version`: the library's version and the accelerator toolkits
it was built with (none: minigrad runs on the CPU, so `version.cuda` is None, which is what
scripts test before printing GPU details)."""

__version__ = "0.1.0"
cuda = None
hip = None
debug = False
