"""Checkers for the tutorials' "implement it" exercises.

Each `check_*` function takes the learner's function and searches for an input on which it goes
wrong: hypothesis draws small inputs and shrinks a failure to the smallest one that shows it, and
the checker raises `Wrong` with that input and the likely mistake ("gradient of shape (1, 1) for
an input of shape (1,): the sum over the broadcast axis is missing"). An answer that agrees to
float32 rounding is right, and the checker says so. Each exercise stands alone: a checker runs
the learner's function with minigrad's versions of everything else.

`check(checker, fn)` runs one, prints the verdict and returns True only if all is well, so an
unfinished exercise (a function that raises NotImplementedError) never stops a tutorial.
The checkers live in the modules `_exercises_*.py` beside this one, by tutorial; how they search
and report is in `_exercise_search.py`.
"""
from _exercise_search import Wrong, hypothesis_modules
from _exercises_engine import (check_hvp, check_neuron_gradients, check_topological_order,
                               check_unbroadcast)
from _exercises_encoder import check_add_and_norm, check_encoder_layer
from _exercises_layers import (check_attention, check_causal_mask, check_layer_norm,
                               check_sinusoid_table, check_split_heads)
from _exercises_rules import (check_attention_backward, check_cross_entropy_backward,
                              check_layer_norm_backward, check_matmul_backward,
                              check_softmax_backward)
from _exercises_training import (check_greedy_decode, check_merge_pair, check_neighbour_softmax,
                                 check_noam, check_stable_softmax)


def check(checker, fn):
    """Run `checker(fn)`; print "correct" (with a remark on float32 rounding if there is one),
    "not implemented yet" or what is wrong; return bool."""
    hypothesis_modules()  # a missing hypothesis is an error to fix, not a wrong answer
    try:
        remark = checker(fn)
    except NotImplementedError:
        print(f"{fn.__name__}: not implemented yet (replace the `raise NotImplementedError`)")
        return False
    except Wrong as e:
        print(f"{fn.__name__}: not yet right: {e}")
        return False
    print(f"{fn.__name__}: correct" + (f" ({remark})" if remark else ""))
    return True


CHECKERS = {f.__name__: f for f in (
    check_topological_order, check_unbroadcast, check_matmul_backward, check_softmax_backward,
    check_layer_norm_backward, check_cross_entropy_backward, check_attention_backward,
    check_neuron_gradients, check_attention, check_split_heads, check_causal_mask,
    check_sinusoid_table, check_layer_norm, check_add_and_norm, check_encoder_layer, check_noam,
    check_merge_pair, check_greedy_decode, check_neighbour_softmax, check_stable_softmax,
    check_hvp)}
