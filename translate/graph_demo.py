"""`minigrad-viz`: draw the computation graph behind the toy Transformer's loss.

    minigrad-viz --max-depth 3 --out transformer_graph.svg

Depth 1 shows the embeddings, encoder, decoder and output layer as boxes, depth 2 each
layer, depth 3 the attention and feed-forward blocks inside them; -1 draws every op.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

import minigrad
from minigrad.viz import draw_graph, recording, render_graph

from minigrad.models import Seq2SeqTransformer

from .cmdline import CliError, Parser, bounded
from .files import atomic_write_text


@recording()
def transformer_loss(vocab=2000, batch=2, length=6, d_model=128, nhead=4, layers=2, seed=0):
    """A freshly initialised toy Transformer and the loss on one random batch, its ops
    recorded with their modules and values for drawing."""
    minigrad.manual_seed(seed)
    model = Seq2SeqTransformer(vocab, vocab, d_model=d_model, nhead=nhead,
                               num_encoder_layers=layers, num_decoder_layers=layers,
                               dim_feedforward=4 * d_model, dropout=0.1)
    rng = np.random.default_rng(seed)
    src = rng.integers(3, vocab, (batch, length))
    tgt = rng.integers(3, vocab, (batch, length + 1))
    return model, model.loss(src, tgt[:, :-1], tgt[:, 1:], label_smoothing=0.1)


def main(argv=None):
    p = Parser(prog="minigrad-viz", description=__doc__,
               formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--max-depth", type=bounded(int, -1), default=3,
                   help="collapse modules deeper than this (-1: draw every op; default: %(default)s)")
    p.add_argument("--out", default="transformer_graph.svg",
                   help="output file; its suffix picks the format: svg, png or pdf (default: %(default)s)")
    p.add_argument("--layers", type=bounded(int, 1, 12), default=2,
                   help="encoder and decoder layers (default: %(default)s)")
    p.add_argument("--rankdir", default="TB", choices=["LR", "TB"], help="layout direction (default: %(default)s)")
    p.add_argument("--dot-only", action="store_true", help="write the DOT text only (no Graphviz needed)")
    try:
        args = p.parse_args(argv)
        fmt = args.out.rsplit(".", 1)[-1].lower() if "." in os.path.basename(args.out) else ""
        if not args.dot_only and fmt not in ("svg", "png", "pdf"):
            raise CliError(f"minigrad-viz: --out {args.out!r} must end in .svg, .png or .pdf")
        _, loss = transformer_loss(layers=args.layers)
        depth = None if args.max_depth < 0 else args.max_depth
        graph = draw_graph(loss, max_depth=depth, rankdir=args.rankdir)
        if args.dot_only:
            path = args.out if args.out.endswith(".dot") else os.path.splitext(args.out)[0] + ".dot"
            atomic_write_text(path, graph.source)
            print(f"wrote {path}")
            return 0
        print(f"wrote {render_graph(graph, args.out, format=fmt)}")
    except (CliError, RuntimeError, ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
