"""How the exercise checkers search for a mistake and report it, as a teacher would.

A checker describes its inputs as a hypothesis strategy and a verdict on one input (raise `Wrong`
with a sentence naming the likely mistake). `search` lets hypothesis draw inputs and, once one
fails, shrink it to the smallest input that still fails, so the message shows a gradient of shape
(1, 2) and not one of shape (4, 3, 5). Hypothesis runs derandomized without its example database,
so a learner sees the same message on every run, and nothing is written to disk.

A difference within float32 rounding is not a mistake: `compare` accepts it, and the checker
says so beside "correct".
"""
import warnings

import numpy as np


class Wrong(AssertionError):
    """The learner's answer is wrong; the message says how."""


TIGHT = 1e-9      # relative to the largest expected value: two correct float64 formulas agree
FLOAT32 = 1e-5    # float32 keeps about 7 digits; a few dozen roundings stay under this


def hypothesis_modules():
    """(hypothesis, its strategies), or a clear error saying how to install it."""
    try:
        import hypothesis
        from hypothesis import strategies
    except ImportError:
        raise ImportError("the exercise checkers search for mistakes with hypothesis, which is "
                          "not installed: pip install hypothesis (it comes with "
                          "pip install -e \".[book]\" and \".[dev]\")") from None
    return hypothesis, strategies


def expect(condition, message):
    if not condition:
        raise Wrong(message)


def as_array(value, who):
    """The learner's result as a float64 array, and whether it was computed in float32."""
    try:
        raw = value.numpy() if hasattr(value, "numpy") else value
        low = getattr(np.asarray(raw), "dtype", None) in (np.float32, np.float16)
        return np.asarray(raw, dtype=np.float64), low
    except (TypeError, ValueError) as e:
        raise Wrong(f"{who} should return an array or a tensor, got {type(value).__name__}") from e


def expect_shape(out, expected, who):
    expect(out.shape == tuple(expected), f"{who} should return shape {tuple(expected)}, "
                                         f"got {out.shape}")


def show(a):
    """A small array as a nested list (whole numbers without '.0'); a large one by its shape."""
    a = np.asarray(a)
    if a.size > 16:
        return f"an array of shape {a.shape}"
    if a.dtype == bool:
        return str(a.astype(int).tolist())
    if a.dtype.kind == "f" and np.all(np.isfinite(a)) and np.all(a == np.round(a)):
        return str(a.astype(np.int64).tolist())
    return str(np.round(a, 4).tolist() if a.dtype.kind == "f" else a.tolist())


def compare(got, want, floor=1.0):
    """'exact', 'float32' (agrees to float32 rounding only) or the largest difference (a float).
    NaN or infinity where the answer is finite is always wrong.

    Rounding errors scale with the terms a result is made of, not with the result: a gradient
    that cancels to 1e-17 in float64 is 0 in float32. `floor` is the size of those terms
    (about 1 for the checkers' inputs); pass 0 for results that are small by nature."""
    finite = np.isfinite(want)
    if not np.array_equal(np.isfinite(got), finite) or np.any(got[~finite] != want[~finite]):
        return float("inf")
    diff = float(np.abs(got[finite] - want[finite]).max(initial=0.0))
    scale = max(float(np.abs(want[finite]).max(initial=0.0)), floor) or 1.0
    if diff <= TIGHT * scale:
        return "exact"
    if diff <= FLOAT32 * scale:
        return "float32"
    return diff


def float32_note(who, diff_kind, low_precision):
    """The remark printed beside "correct" when an answer agrees to float32 rounding only."""
    if diff_kind != "float32":
        return None
    how = "your result is float32" if low_precision else "part of it is computed in float32"
    return (f"{who} agrees to float32 rounding ({how}): the rule is right; computed in float64 "
            f"it would agree to about 15 digits")


def _key(case):
    """A hashable summary of a drawn case (arrays by dtype, shape and bytes)."""
    if isinstance(case, np.ndarray):
        return ("array", case.dtype.str, case.shape, case.tobytes())
    if isinstance(case, (list, tuple)):
        return (type(case).__name__, tuple(_key(c) for c in case))
    if isinstance(case, dict):
        return ("dict", tuple((k, _key(v)) for k, v in sorted(case.items())))
    return (type(case).__name__, repr(case))


class Later(Wrong):
    """A failure whose message is worked out only if it is the one reported: naming the
    mistake may cost more runs, and a shrink meets many failing cases on its way."""

    def __init__(self, diagnose):
        super().__init__("(not diagnosed yet)")
        self.diagnose = diagnose

    def resolve(self):
        """The `Wrong` that names the mistake (what `diagnose()` raises)."""
        try:
            self.diagnose()
        except Wrong as e:
            return e
        return Wrong("the answer differs from the expected one")


def _resolved(e):
    return e.resolve() if isinstance(e, Later) else e


class _Enough(BaseException):
    """Ends a shrink that has run long enough (hypothesis lets a BaseException through)."""


def search(cases, verdict, max_examples=30, budget=100, typical=()):
    """Run `verdict(case)` on cases drawn from the strategy `cases`; return a remark (the first
    one a verdict returned, e.g. about float32) or raise the `Wrong` of the smallest failing case.
    The `typical` cases run after the search, as a net for a mistake that few drawn cases show
    (one of them failing is reported as it is, unshrunk).

    Each distinct case is judged once. A shrink stops after `budget` tries in all: a failure
    found by then is the smallest so far (the shrinker only moves to smaller failing cases),
    and it is reported."""
    hypothesis, _ = hypothesis_modules()
    verdicts, remarks, tries, failures = {}, [], [0], []

    def judged(case):
        tries[0] += 1
        if failures and tries[0] > budget:
            raise _Enough
        key = _key(case)
        if key not in verdicts:
            try:
                remark = verdict(case)
                verdicts[key] = None
                if remark and not remarks:
                    remarks.append(remark)
            except (Wrong, NotImplementedError) as e:
                verdicts[key] = e
        if verdicts[key] is not None:
            failures.append(verdicts[key])
            raise verdicts[key]

    run = hypothesis.settings(
        database=None, derandomize=True, max_examples=max_examples, deadline=None,
        suppress_health_check=list(hypothesis.HealthCheck), report_multiple_bugs=False,
        verbosity=hypothesis.Verbosity.quiet,
        phases=(hypothesis.Phase.generate, hypothesis.Phase.shrink))(
            hypothesis.given(cases)(judged))
    try:
        run()
    except _Enough:
        raise _resolved(failures[-1]) from None
    except Later as e:
        raise _resolved(e) from None
    for case in typical:
        try:
            remark = verdict(case)
        except Later as e:
            raise _resolved(e) from None
        if remark and not remarks:
            remarks.append(remark)
    return remarks[0] if remarks else None


def call(fn, where, *args):
    """The learner's fn(*args); any error but NotImplementedError becomes a `Wrong` that names
    the input (hypothesis shrinks it like any other failure). NumPy's warnings about NaN and
    overflow are silenced: the verdict shows the NaN, on the input that made it."""
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)
            return fn(*args)
    except NotImplementedError:
        raise
    except Exception as e:
        raise Wrong(f"{where}, your function raised {type(e).__name__}: {e}") from e


def factor_hint(got, want):
    """'twice', 'half', 'minus' ... when `got` is a constant multiple of `want`, else None."""
    scale = float(np.abs(want).max(initial=0.0))
    if scale == 0 or not np.all(np.isfinite(got)):
        return None
    ratio = float(np.sum(got * want) / np.sum(want * want))
    if abs(ratio - 1) < 1e-6 or not np.allclose(got, ratio * want, rtol=1e-6, atol=1e-9 * scale):
        return None
    if abs(ratio + 1) < 1e-6:
        return "the sign is flipped"
    for n in (2, 3, 4):
        if abs(ratio - n) < 1e-6:
            return f"off by a factor {n}: it is {n} times the right value"
        if abs(ratio - 1 / n) < 1e-6:
            return f"off by a factor {n}: it is 1/{n} of the right value"
    return f"off by a constant factor: it is {ratio:.4g} times the right value"


def first_match(runs, mistakes):
    """The label of the first mistake that reproduces the learner's output on every run.

    runs: (args, learner's output) pairs, typically the shrunk failing input and random inputs
    of the same size, so that a coincidence of small numbers cannot name the wrong mistake.
    mistakes: (label, function of args) pairs; NaN matches NaN."""
    for label, mistake in mistakes:
        for args, got in runs:
            try:
                with warnings.catch_warnings(), np.errstate(all="ignore"):
                    warnings.simplefilter("ignore", RuntimeWarning)
                    wrong = np.asarray(mistake(*args), dtype=np.float64)
            except (ValueError, IndexError, ZeroDivisionError):
                break
            scale = float(np.abs(wrong[np.isfinite(wrong)]).max(initial=0.0)) or 1.0
            if wrong.shape != got.shape or not np.allclose(got, wrong, rtol=1e-6, equal_nan=True,
                                                           atol=FLOAT32 * scale):
                break
        else:
            return label
    return None


def whole_arrays(st, shape, lo=-2, hi=2):
    """float64 arrays of `shape` holding whole numbers in [lo, hi] (they shrink towards 0).

    The values are drawn for a block of at least 2 along each axis and cut to `shape`, so that
    when the shrinker makes an axis shorter, the values of the other arrays stay where they are
    (the failure it is shrinking does not vanish on the way)."""
    block = tuple(max(2, n) for n in shape)
    n = int(np.prod(block))
    return st.lists(st.integers(lo, hi), min_size=n, max_size=n).map(
        lambda v: np.array(v, dtype=np.float64).reshape(block)[tuple(slice(0, k) for k in shape)])
