"""Sequential, ModuleList and ModuleDict edited as lists and dicts (slices, item assignment
and deletion, insert, pop, extend, +, *, update, clear), each script run with PyTorch and with
minigrad: the same names, the same modules at them (by tag), the same errors."""
import re
from collections import OrderedDict

import pytest

import minigrad


def tagged(lib, tag):
    """A layer whose identity survives the edits: an Identity carrying a tag."""
    m = lib.nn.Identity()
    m.tag = tag
    return m


def layout(container):
    """(name, tag) of each registered child (a module held twice: twice), and of each child
    as `named_children` lists it (once); the attributes agree with the table."""
    for name, m in container._modules.items():
        assert getattr(container, name) is m
    return ([(name, m.tag) for name, m in container._modules.items()],
            [(name, m.tag) for name, m in container.named_children()])


def sequential_script(lib):
    nn = lib.nn
    t = lambda tag: tagged(lib, tag)  # noqa: E731
    out = {}
    named = nn.Sequential(OrderedDict([("conv_1", t("a")), ("relu_1", t("b")),
                                       ("loss_1", t("c")), ("pool_1", t("d"))]))
    cut = named[:3]
    out["slice"] = (type(cut).__name__, layout(cut), layout(named[::-2]), layout(named[5:]))
    out["index"] = (named[-1].tag, named[0].tag)
    seq = nn.Sequential(t("a"), t("b"), t("c"), t("d"), t("e"))
    seq[1] = t("B")
    seq[-1] = t("E")
    out["setitem"] = layout(seq)
    del seq[0]
    out["delitem"] = layout(seq)
    del seq[1:3]
    out["del slice"] = layout(seq)
    named_copy = nn.Sequential(OrderedDict([("x", t("x")), ("y", t("y")), ("z", t("z"))]))
    del named_copy[1]
    out["del renumbers"] = layout(named_copy)
    seq = nn.Sequential(t("a"), t("b"), t("c"))
    out["pop"] = (seq.pop(1).tag, layout(seq))
    out["insert"] = (layout(seq.insert(0, t("i"))), layout(seq.insert(-1, t("j"))),
                     layout(seq.insert(4, t("k"))))
    out["extend"] = layout(nn.Sequential(t("a")).extend(nn.Sequential(t("b"), t("c"))))
    a, b = nn.Sequential(t("a"), t("b")), nn.Sequential(t("c"))
    out["add"] = layout(a + b)
    a += b
    out["iadd"] = layout(a)
    twice = nn.Sequential(t("a"), t("b")) * 2
    out["mul"] = (layout(twice), twice[0] is twice[2], layout(3 * nn.Sequential(t("a"))))
    c = nn.Sequential(t("a"), t("b"))
    c *= 2
    out["imul"] = layout(c)
    out["params"] = [n for n, _ in nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))[1:]
                     .named_parameters()]
    return out


def module_list_script(lib):
    nn = lib.nn
    t = lambda tag: tagged(lib, tag)  # noqa: E731
    out = {}
    ml = nn.ModuleList([t("a"), t("b"), t("c"), t("d")])
    out["slice"] = (type(ml[1:]).__name__, layout(ml[1:]), ml[-2].tag)
    ml[0] = t("A")
    out["setitem"] = layout(ml)
    del ml[1]
    out["delitem"] = layout(ml)
    del ml[::2]
    out["del slice"] = layout(ml)
    ml = nn.ModuleList([t("a"), t("b")])
    ml.insert(1, t("i"))
    ml.insert(0, t("j"))
    out["insert"] = layout(ml)
    out["pop"] = (ml.pop(-1).tag, layout(ml))
    added = ml + [t("x")]
    out["add"] = (type(added).__name__, layout(added))
    ml += nn.ModuleList([t("y")])
    out["iadd"] = layout(ml)
    return out


def module_dict_script(lib):
    nn = lib.nn
    t = lambda tag: tagged(lib, tag)  # noqa: E731
    out = {}
    md = nn.ModuleDict([("a", t("a")), ("b", t("b"))])
    out["pairs"] = layout(md)
    md.update({"c": t("c"), "a": t("A")})
    out["update mapping"] = layout(md)
    md.update([("d", t("d"))])
    md.update(nn.ModuleDict({"e": t("e")}))
    out["update pairs"] = layout(md)
    md.clear()
    out["clear"] = (layout(md), len(md))
    return out


@pytest.mark.parametrize("script", [sequential_script, module_list_script, module_dict_script])
def test_container_edits_match_pytorch(torch, script):
    expected, got = script(torch), script(minigrad)
    assert sorted(got) == sorted(expected)
    for key in expected:
        assert got[key] == expected[key], key


def _errors(lib):
    nn = lib.nn
    seq = nn.Sequential(nn.Identity(), nn.Identity())
    ml = nn.ModuleList([nn.Identity()])
    md = nn.ModuleDict()
    return [lambda: seq[2], lambda: seq[-3], lambda: seq["0"],
            lambda: seq.__setitem__(5, nn.Identity()), lambda: seq.__delitem__(2),
            lambda: seq.insert(3, nn.Identity()), lambda: seq.insert(0, "relu"),
            lambda: seq + [nn.Identity()], lambda: seq * 0, lambda: seq * 1.5,
            lambda: ml[1], lambda: ml.__delitem__(-2), lambda: ml.extend(nn.Identity()),
            lambda: md.update(3), lambda: md.update([("a", nn.Identity(), 1)]),
            lambda: md.update([5])]


def test_container_errors_match_pytorch(torch):
    for i, (want, have) in enumerate(zip(_errors(torch), _errors(minigrad))):
        with pytest.raises(Exception) as expected:
            want()
        with pytest.raises(Exception) as got:
            have()
        assert type(got.value) is type(expected.value), (i, got.value, expected.value)
        if i != 15:  # PyTorch's message there lacks a space ("is" "int" joined)
            assert _short(got.value) == _short(expected.value), i


def _short(error):
    """The message with classes named without their module path, which differs by library."""
    return re.sub(r"<class '[\w.]*\.(\w+)'>", r"\1", str(error))
