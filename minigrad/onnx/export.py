"""`export`: PyTorch's `torch.onnx.export`, tracing minigrad's own ops."""
from __future__ import annotations

import enum
import inspect
import os
import warnings

import numpy as np

from ..grad_mode import no_grad
from ..tensor import Tensor
from . import trace

DEFAULT_OPSET = 18  # the operators are written for opset 18; other versions are converted


class TrainingMode(enum.IntEnum):
    """The mode the model is exported in, as `torch.onnx.TrainingMode`."""
    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


class ONNXProgram:
    """What `export` returns with `dynamo=True`, as PyTorch's: `model_proto`, `save`, and
    calling it runs the model in onnxruntime on tensors, returning a list of tensors."""

    def __init__(self, model_proto):
        self.model_proto = model_proto
        self._session = None

    def save(self, destination):
        import onnx
        onnx.save(self.model_proto, destination)

    def __call__(self, *args, **kwargs):
        import onnxruntime
        if self._session is None:
            self._session = onnxruntime.InferenceSession(
                self.model_proto.SerializeToString(), providers=["CPUExecutionProvider"])
        feeds = [np.asarray(x._array if isinstance(x, Tensor) else x)
                 for x in (*args, *kwargs.values()) if _is_input(x)]
        names = [i.name for i in self._session.get_inputs()]
        return [Tensor._wrap(a) for a in self._session.run(None, dict(zip(names, feeds)))]

    def __repr__(self):
        return f"ONNXProgram({len(self.model_proto.graph.node)} nodes)"


def is_in_onnx_export():
    """True while `export` traces a model (in this thread), as in PyTorch."""
    return trace.current() is not None


def export(model, args=(), f=None, *, kwargs=None, verbose=None, input_names=None,
           output_names=None, opset_version=None, dynamo=True, external_data=True,
           dynamic_shapes=None, custom_translation_table=None, report=False, optimize=True,
           verify=False, profile=False, dump_exported_program=False, artifacts_dir=".",
           export_params=True, keep_initializers_as_inputs=False, dynamic_axes=None,
           training=TrainingMode.EVAL, operator_export_type=None, do_constant_folding=True,
           custom_opsets=None, export_modules_as_functions=False, autograd_inlining=True):
    """Run `model(*args, **kwargs)` once, record every op, and write the ONNX model to `f`.

    model: a Module (or any callable) built from minigrad ops; args: a tensor, or a tuple of
    tensors and other values (a trailing dict is keyword arguments, as in PyTorch); f: a path
    or a binary file (None: only returned). input_names / output_names name the graph's inputs
    (the tensors among args, then kwargs) and outputs (default: forward's parameter names,
    and output_0, output_1, ...). dynamic_axes {name: {axis: "dim name"} or [axes]} (or
    dynamic_shapes in the same form, keyed by name or by position) declare dims that may
    change; an output not listed there has its dims of a dynamic input dim's traced size
    named like it. training: EVAL (default: the model runs in eval mode and is put back after),
    PRESERVE or TRAINING (dropout then cannot be exported). opset_version: 18 by default;
    another is converted by `onnx.version_converter` (if it cannot, the file stays in opset
    18, with a warning, as PyTorch's exporter does). export_params=False leaves the weights
    out (they become inputs); keep_initializers_as_inputs lists them as inputs too.
    verify=True runs the file in onnxruntime and compares with minigrad's outputs.

    The export is a trace, as PyTorch's: Python control flow and shapes are fixed at the
    values of this run (recurrent layers are unrolled over the given sequence length). What
    the model computes from its inputs with NumPy is traced too (`mask = ids == pad`), except
    through conversions that leave NumPy's dispatch (`np.asarray(x, dtype=other)`, `.item()`);
    the model runs again on perturbed inputs (values moved along the array, then moved by
    noise), and an op whose constants then change
    is an error (UnsupportedOperatorError) instead of a file wrong for other inputs; Python
    control flow that changes is a warning. Accepted for compatibility and ignored:
    dynamo (both exporters are this tracer), external_data, report, optimize, profile,
    dump_exported_program, artifacts_dir, do_constant_folding, autograd_inlining,
    operator_export_type (ONNX only). An op that cannot be expressed raises
    UnsupportedOperatorError naming it and the module that ran it.
    Returns an ONNXProgram when dynamo=True (PyTorch's default), else None.
    """
    try:
        import onnx
    except ImportError:
        raise ImportError("onnx.export: needs the onnx package (pip install onnx, or "
                          "pip install minigrad[onnx] with onnxruntime to run the files)") from None
    for name, value in (("custom_translation_table", custom_translation_table),
                        ("export_modules_as_functions", export_modules_as_functions),
                        ("custom_opsets", custom_opsets)):
        if value:
            raise NotImplementedError(f"onnx.export: {name} is not supported by minigrad")
    if (operator_export_type not in (None, 0)
            and getattr(operator_export_type, "name", "") != "ONNX"):
        raise NotImplementedError(f"onnx.export: operator_export_type {operator_export_type} is "
                                  f"not supported; only plain ONNX operators are written")
    opset = DEFAULT_OPSET if opset_version is None else int(opset_version)
    args = (args,) if not isinstance(args, tuple) else args
    if kwargs is None and args and isinstance(args[-1], dict):
        args, kwargs = args[:-1], args[-1]
    kwargs = dict(kwargs or {})
    with _mode(model, training):
        proto, outputs = _trace_to_proto(model, args, kwargs, input_names, output_names,
                                         _dynamic(dynamic_axes, dynamic_shapes), export_params,
                                         keep_initializers_as_inputs)
    if opset != DEFAULT_OPSET:
        proto = _convert_opset(proto, opset)
    onnx.checker.check_model(proto)
    if verbose:
        print(onnx.printer.to_text(proto.graph))
    if verify:
        _verify(proto, args, kwargs, outputs)
    if f is not None:
        if isinstance(f, (str, os.PathLike)):
            onnx.save(proto, os.fspath(f))
        else:
            f.write(proto.SerializeToString())
    return ONNXProgram(proto) if dynamo else None


class _mode:
    """Put the model in the mode `training` asks for, and back afterwards."""

    def __init__(self, model, training):
        self.modules = list(model.modules()) if hasattr(model, "modules") else []
        self.saved = [m.training for m in self.modules]
        self.training = TrainingMode(training)

    def __enter__(self):
        if self.training != TrainingMode.PRESERVE:
            for m in self.modules:  # as Module.train sets it
                object.__setattr__(m, "training", self.training == TrainingMode.TRAINING)

    def __exit__(self, *exc):
        for m, t in zip(self.modules, self.saved):
            object.__setattr__(m, "training", t)
        return False


def _dynamic(dynamic_axes, dynamic_shapes):
    """{input or output name or position: {axis: dim name}} from either argument."""
    merged = {}
    if isinstance(dynamic_shapes, (tuple, list)):
        dynamic_shapes = dict(enumerate(dynamic_shapes))
    for source in (dynamic_shapes or {}, dynamic_axes or {}):
        for key, axes in source.items():
            if axes is None:
                continue
            if not isinstance(axes, dict):
                axes = {a: f"{key}_dynamic_axes_{i + 1}" for i, a in enumerate(axes)}
            merged[key] = {int(a): (d if isinstance(d, str) else getattr(d, "__name__", str(d)))
                           for a, d in axes.items()}
    return merged


def _is_input(x):
    return isinstance(x, (Tensor, np.ndarray))


def _default_names(model, args, kwargs):
    """Forward's parameter names for the positional tensors, the keywords for the others."""
    try:
        params = list(inspect.signature(getattr(model, "forward", model)).parameters)
    except (TypeError, ValueError):
        params = []
    names = [params[i] if i < len(params) and params[i] not in ("args", "kwargs")
             else f"input_{i}" for i, a in enumerate(args) if _is_input(a)]
    return names + [k for k, v in kwargs.items() if _is_input(v)]


def _named_arrays(model):
    named = {}
    if hasattr(model, "named_parameters"):
        for name, t in (*model.named_parameters(), *model.named_buffers()):
            named.setdefault(name, t._array)
    return named


def _flatten(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flatten(o)]
    if isinstance(out, dict):
        return [t for o in out.values() for t in _flatten(o)]
    return [out] if _is_input(out) else []


def _run(model, args, kwargs, names, named, perturb=None):
    """Trace one call of the model: (tracer, output tensors). With `perturb` (a function of an
    array), the inputs' values are replaced by perturbed ones."""
    tracer = trace.Tracer(named)
    count = iter(range(len(names)))

    def traced(x):
        if not _is_input(x):
            return x
        arr = x._array if isinstance(x, Tensor) else np.asarray(x)
        return Tensor._wrap(tracer.input(names[next(count)], perturb(arr) if perturb else arr))
    with tracer, no_grad():
        out = model(*[traced(a) for a in args], **{k: traced(v) for k, v in kwargs.items()})
    return tracer, _flatten(out)


def trace_call(model, args=(), kwargs=None):
    """One call of `model(*args, **kwargs)` traced without gradients, as `export` traces it:
    (the Tracer with its records, the output tensors). The inputs are named as `export`
    names them by default (forward's parameter names); for tools that draw the graph."""
    kwargs = dict(kwargs or {})
    return _run(model, tuple(args), kwargs, _default_names(model, args, kwargs),
                _named_arrays(model))


def _trace_to_proto(model, args, kwargs, input_names, output_names, dynamic, export_params,
                    keep_initializers_as_inputs):
    from onnx import helper
    from .build import build_graph, plan, value_info
    from .check import PERTURBATIONS, check_fixed, perturbed
    names = list(input_names or []) + _default_names(model, args, kwargs)[len(input_names or []):]
    named = _named_arrays(model)
    tracer, results = _run(model, args, kwargs, names, named)
    if not results:
        raise ValueError("onnx.export: the model returned no tensor to export")
    outputs = [tracer.value_of(t) for t in results]
    steps = plan(outputs)
    out_names = list(output_names or [])
    out_names += [f"output_{i}" for i in range(len(out_names), len(outputs))]
    g = build_graph(tracer, steps, outputs, out_names, DEFAULT_OPSET, export_params)
    buffers = [(b._array, b._array.copy()) for _, b in getattr(model, "named_buffers", list)()]
    for how in PERTURBATIONS:
        rng = np.random.default_rng(0)
        try:
            second, again = _run(model, args, kwargs, names, named,
                                 lambda a: perturbed(a, rng, how))
        except Exception:  # noqa: BLE001  (a model may refuse other values: nothing to compare)
            second = None
        for arr, values in buffers:  # a forward in training mode updates running statistics
            arr[...] = values
        if second is not None and not check_fixed(
                tracer, second, steps.order,
                [(n, v, second.value_of(t)) for n, v, t in zip(out_names, outputs, again)]):
            break

    def dims(name, pos):
        return dynamic.get(name, dynamic.get(pos, {}))
    sizes = {}  # the traced size of each dynamic input dim -> its name
    for i, v in enumerate(tracer.inputs):
        for a, d in dims(v.name, i).items():
            sizes.setdefault(v.shape[a], d)

    def out_dims(name, v):
        """An output's dims as given, else named like the dynamic input dims of their size."""
        return dims(name, None) or {i: sizes[n] for i, n in enumerate(v.shape) if n in sizes}
    inputs = [value_info(v.name, v, dims(v.name, i)) for i, v in enumerate(tracer.inputs)]
    if keep_initializers_as_inputs or not export_params:
        inputs += g.param_inputs
    graph = helper.make_graph(
        g.nodes, "minigrad", inputs,
        [value_info(n, v, out_dims(n, v)) for n, v in zip(out_names, outputs)], g.initializers)
    proto = helper.make_model(graph, producer_name="minigrad",
                              opset_imports=[helper.make_opsetid("", DEFAULT_OPSET)])
    return proto, [np.array(t._array if isinstance(t, Tensor) else t) for t in results]


def _convert_opset(proto, opset):
    """The model in `opset`, by onnx's version converter; where it cannot convert (most
    converters to opsets below 17 are missing), the model stays in opset 18 with a warning,
    as PyTorch's exporter does."""
    from onnx import version_converter
    try:
        return version_converter.convert_version(proto, opset)
    except Exception as e:  # noqa: BLE001  (the converter fails with errors of many kinds)
        warnings.warn(f"onnx.export: the model cannot be converted to opset {opset} (onnx's "
                      f"version converter: {str(e).splitlines()[0][:200]}); it is written in "
                      f"opset {DEFAULT_OPSET}", stacklevel=3)
        return proto


def _verify(proto, args, kwargs, expected):
    """Run the model in onnxruntime and compare with minigrad's outputs (verify=True)."""
    got = [t.numpy() for t in ONNXProgram(proto)(*args, **kwargs)]
    for i, (a, b) in enumerate(zip(got, expected)):
        if a.shape != b.shape or not np.allclose(a, b, rtol=1e-4, atol=1e-5, equal_nan=True):
            raise RuntimeError(f"onnx.export(verify=True): output {i} of onnxruntime differs from "
                               f"minigrad's (max abs difference "
                               f"{np.max(np.abs(a - b)) if a.shape == b.shape else 'shape'})")
