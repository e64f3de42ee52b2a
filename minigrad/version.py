"""`minigrad.version`, as `torch.version`: the library's version and the accelerator toolkits
it was built with (none: minigrad runs on the CPU, so `version.cuda` is None, which is what
scripts test before printing GPU details).

`__version__` names the PyTorch release whose API and numbers minigrad follows (the one its
tests compare against), with minigrad's own release as the local label, where PyTorch's names
its build (`2.13.0+cpu`): a script that gates a feature on `torch.__version__ >= "2.0"` takes
the branch written for the API minigrad has. minigrad's own release is `release`."""

release = "0.1.0"
pytorch = "2.13.0"
__version__ = f"{pytorch}+minigrad.{release}"
cuda = None
hip = None
debug = False
