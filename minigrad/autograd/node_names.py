"""The names PyTorch gives the graph nodes of minigrad's ops: `MulBackward0`, `MmBackward0`.

PyTorch names a node after the ATen function that recorded it, with a digit for the overload
(`SumBackward0` for `x.sum()`, `SumBackward1` for `x.sum(dim)`). minigrad's op classes are
named for what they compute (`Mul`, `MatMul`, `Reshape`), and one class can serve several of
PyTorch's functions, so a node's name comes from its class: most add `Backward0`, the table
below renames those whose PyTorch function has another name, and a few classes look at what
the node recorded (the dims of a sum, the ranks of a product) to name the overload. An op
minigrad builds from others (`x.square()` is a `Mul`) names its last one, where PyTorch may
have a node of its own; a function built so can give that node PyTorch's name of its own
node (`as_pytorch_node`: `F.embedding_bag`'s last `index_add` or division is
`EmbeddingBagBackward0`). An `Op` defined outside the library is named as PyTorch names a
custom Function's node, after its class and without a digit: `MyFnBackward` (a custom
`autograd.Function`'s node is a class of that name itself: function.py).
"""
import numpy as np

__all__ = ["as_pytorch_node", "node_name"]

_OWN_PACKAGES = ("minigrad", "nn")

_RENAMED = {
    "AsStrided": "AsStridedBackward0", "AvgPool": "AvgPool2DBackward0",
    "Cast": "ToCopyBackward0", "Cholesky": "LinalgCholeskyExBackward0",
    "Clamp": "ClampBackward1", "Contiguous": "CloneBackward0", "CopySlices": "CopySlices",
    "CrossEntropy": "NllLossBackward0", "CTCNegLogLikelihood": "CtcLossBackward0",
    "Det": "LinalgDetBackward0", "Dropout": "MulBackward0", "Eig": "LinalgEigBackward0",
    "Eigh": "LinalgEighBackward0", "Entr": "SpecialEntrBackward0",
    "Erfcx": "SpecialErfcxBackward0", "FMod": "FmodBackward0", "Fold": "Col2ImBackward0",
    "Gammainc": "IgammaBackward0", "GridSample2d": "GridSampler2DBackward0",
    "I0e": "SpecialI0EBackward0", "I1": "SpecialI1Backward0", "I1e": "SpecialI1EBackward0",
    "Inv": "LinalgInvExBackward0", "LayerNorm": "NativeLayerNormBackward0",
    "Linear": "AddmmBackward0", "Log1p": "Log1PBackward0", "LogAbsDet": "LinalgSlogdetBackward0",
    "LogAddExp": "LogaddexpBackward0", "LogAddExp2": "Logaddexp2Backward0",
    "LogCumSumExp": "LogcumsumexpBackward0", "LogNdtr": "SpecialLogNdtrBackward0",
    "LogSumExp": "LogsumexpBackward0", "MatrixExp": "LinalgMatrixExpBackward0",
    "MaxPool": "MaxPool2DWithIndicesBackward0", "MedianAll": "MedianBackward0",
    "Ndtri": "SpecialNdtriBackward0", "Norm": "LinalgVectorNormBackward0",
    "QR": "LinalgQrBackward0", "Reshape": "ViewBackward0", "Solve": "LinalgSolveExBackward0",
    "SVD": "LinalgSvdBackward0", "SvdVals": "LinalgSvdBackward0",
    "Unfold": "Im2ColBackward0", "UnfoldDim": "UnfoldBackward0",
    "Xlog1py": "SpecialXlog1pyBackward0", "Zeta": "SpecialZetaBackward0",
}


def _reduction(node, whole, along):
    """`whole` for a reduction to a 0-d result, `along` for one that keeps some dims."""
    return whole if getattr(node, "out_shape", ()) == () else along


def _product(node):
    ranks = getattr(node, "ndims", (2, 2))
    if ranks == (1, 1):
        return "DotBackward0"
    if ranks == (2, 1):
        return "MvBackward0"
    if ranks == (2, 2):
        return "MmBackward0"
    return "UnsafeViewBackward0" if min(ranks) > 1 else "ViewBackward0"  # batched: bmm


def _indexing(node):
    """PyTorch indexes one component after another: the last that does something names it."""
    index = getattr(node, "index", None)
    parts = index if isinstance(index, tuple) else (index,)
    if any(isinstance(p, (list, np.ndarray)) for p in parts):
        return "IndexBackward0"
    for p in reversed(parts):
        if isinstance(p, (int, np.integer)):
            return "SelectBackward0"
        if p is None:
            return "UnsqueezeBackward0"
        if isinstance(p, slice) and p != slice(None):
            return "SliceBackward0"
    return "AliasBackward0"


_BY_NODE = {
    "Sum": lambda n: _reduction(n, "SumBackward0", "SumBackward1"),
    "Mean": lambda n: _reduction(n, "MeanBackward0", "MeanBackward1"),
    "Amax": lambda n: _reduction(n, "MaxBackward1", "AmaxBackward0"),
    "Amin": lambda n: _reduction(n, "MinBackward1", "AminBackward0"),
    "MatMul": _product,
    "GetItem": _indexing,
}


def as_pytorch_node(out, name):
    """`out` (a tensor), its graph node named `name` (a function built from several ops
    whose PyTorch counterpart records one node); a tensor without a node is left as it is."""
    if out.grad_fn is not None:
        out.grad_fn.pytorch_name = name
    return out


def node_name(node):
    """PyTorch's name for graph node `node` (an `Op` instance)."""
    named = getattr(node, "pytorch_name", None)
    if named is not None:
        return named
    cls = type(node)
    name = cls.__name__
    if cls.__module__.partition(".")[0] not in _OWN_PACKAGES:
        return name + "Backward"
    by_node = _BY_NODE.get(name)
    if by_node is not None:
        return by_node(node)
    return _RENAMED.get(name, name + "Backward0")
