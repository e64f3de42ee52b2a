"""`TorchVersion`, as `torch.torch_version`'s: the type of `minigrad.__version__`, a str that
compares as a version (PEP 440) with strings, tuples such as (2, 1) and `packaging`'s
`Version`, so that `torch.__version__ >= "1.10"` compares 2.13 with 1.10, not "2" with "1".

A string that is not a version ("parrot") compares as a plain string, as PyTorch's does.
The version grammar is PEP 440's: [N!]N(.N)*[{a|b|rc}N][.postN][.devN][+local]."""
import re

from .version import __version__ as _text

__all__ = ["InvalidVersion", "TorchVersion", "__version__"]

_PATTERN = re.compile(
    r"^\s*v?(?:(?P<epoch>\d+)!)?(?P<release>\d+(?:\.\d+)*)"
    r"(?:[-_.]?(?P<pre_l>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?P<pre_n>\d+)?)?"
    r"(?:-(?P<post_n1>\d+)|[-_.]?(?P<post_l>post|rev|r)[-_.]?(?P<post_n2>\d+)?)?"
    r"(?:[-_.]?(?P<dev_l>dev)[-_.]?(?P<dev_n>\d+)?)?"
    r"(?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?\s*$", re.I)
_PRE = {"alpha": "a", "a": "a", "beta": "b", "b": "b", "c": "rc", "pre": "rc", "preview": "rc",
        "rc": "rc"}
_INF = float("inf")


class InvalidVersion(ValueError):
    """A string that PEP 440 does not read as a version (packaging's exception of that name)."""


def _key(text):
    """The sort key of a PEP 440 version, as packaging orders them: epoch, release (trailing
    zeros dropped), pre-release (a < b < rc < none), post-release, dev-release (a dev release
    with neither pre nor post comes before the release's pre-releases), then the local label
    (none first; its numbers after its words)."""
    m = _PATTERN.match(text)
    if m is None:
        raise InvalidVersion(f"Invalid version: {text!r}")
    release = [int(p) for p in m["release"].split(".")]
    while len(release) > 1 and release[-1] == 0:
        release.pop()
    has_post = m["post_n1"] is not None or m["post_l"] is not None
    has_dev = m["dev_l"] is not None
    if m["pre_l"]:
        pre = (0, _PRE[m["pre_l"].lower()], int(m["pre_n"] or 0))
    else:
        pre = (-_INF,) if has_dev and not has_post else (_INF,)
    post = (int(m["post_n1"] or m["post_n2"] or 0),) if has_post else (-_INF,)
    dev = (int(m["dev_n"] or 0),) if has_dev else (_INF,)
    local = tuple((int(p), "") if p.isdigit() else (-_INF, p.lower())
                  for p in re.split(r"[-_.]", m["local"])) if m["local"] else ()
    return int(m["epoch"] or 0), tuple(release), pre, post, dev, local


def _other_key(other):
    """The key of what a version is compared with: a string, a `Version` (any object with
    packaging's `release` and `epoch`, by its text), or a tuple of parts, (2, 1) for '2.1'."""
    if isinstance(other, str):
        return _key(other)
    if hasattr(other, "release") and hasattr(other, "epoch"):
        return _key(str(other))
    if isinstance(other, (tuple, list)):
        return _key(".".join(str(part) for part in other))
    raise InvalidVersion(f"Invalid version: {other!r}")


class TorchVersion(str):
    """A str that compares as a version: with a string ('2.1'), a `packaging.version.Version`
    or a tuple ((2, 1)); a string that is not a version compares as a plain string."""

    __slots__ = ()

    def _compare(self, other, method):
        try:
            return getattr(_key(self), method)(_other_key(other))
        except InvalidVersion:
            return getattr(str, method)(self, other)

    def __lt__(self, other):
        return self._compare(other, "__lt__")

    def __le__(self, other):
        return self._compare(other, "__le__")

    def __gt__(self, other):
        return self._compare(other, "__gt__")

    def __ge__(self, other):
        return self._compare(other, "__ge__")

    def __eq__(self, other):
        return self._compare(other, "__eq__")

    __hash__ = str.__hash__  # a str's, as PyTorch's (defining __eq__ would drop it)


__version__ = TorchVersion(_text)
