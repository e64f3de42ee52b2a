"""`kl_divergence(p, q)`: KL(p || q) per element of the batch, from a table of closed forms
keyed by the two distributions' types (PyTorch's `register_kl` decorator adds to it)."""
from __future__ import annotations

import math

from .bernoulli import Bernoulli
from .categorical import Categorical
from .normal import Normal

__all__ = ["kl_divergence", "register_kl"]

_KL = {}


def register_kl(type_p, type_q):
    """Decorator: `@register_kl(P, Q)` over `fn(p, q)` makes it KL(p || q) for those types."""
    def register(fn):
        _KL[type_p, type_q] = fn
        return fn
    return register


def kl_divergence(p, q):
    """KL(p || q) = E_p[log p - log q], of the batch's shape."""
    for cls_p in type(p).__mro__:
        for cls_q in type(q).__mro__:
            if (cls_p, cls_q) in _KL:
                return _KL[cls_p, cls_q](p, q)
    raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                              f"{type(p).__name__} and q type {type(q).__name__}")


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale) ** 2
    t1 = ((p.loc - q.loc) / q.scale) ** 2
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    """sum_k p_k (log p_k - log q_k): inf where q_k = 0 < p_k, and a zero p_k counts 0."""
    from minigrad import where
    t = p.probs * (p.logits - q.logits)
    t = where((q.probs == 0).expand(t.shape), math.inf, t)
    t = where((p.probs == 0).expand(t.shape), 0.0, t)
    return t.sum(-1)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    """p log(p / q) + (1 - p) log((1 - p) / (1 - q)), through softplus of the logits; inf
    where q puts no mass on an outcome p can take, and a term of zero mass counts 0."""
    from minigrad import where
    from minigrad.nn.functional import softplus
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = where(q.probs == 0, math.inf, t1)
    t1 = where(p.probs == 0, 0.0, t1)
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = where(q.probs == 1, math.inf, t2)
    t2 = where(p.probs == 1, 0.0, t2)
    return t1 + t2
