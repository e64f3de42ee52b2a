"""The HParams plugin's three records, as PyTorch's `add_hparams` writes them: the experiment
(which hyperparameters and metrics there are), the session start (this run's values) and the
session end (status success), each an empty value whose metadata carries the plugin data."""
from google.protobuf import struct_pb2
from tensorboard.compat.proto.summary_pb2 import Summary, SummaryMetadata
from tensorboard.plugins.hparams.api_pb2 import (DataType, Experiment, HParamInfo, MetricInfo,
                                                 MetricName, Status)
from tensorboard.plugins.hparams.metadata import (EXPERIMENT_TAG, PLUGIN_DATA_VERSION,
                                                  PLUGIN_NAME, SESSION_END_INFO_TAG,
                                                  SESSION_START_INFO_TAG)
from tensorboard.plugins.hparams.plugin_data_pb2 import (HParamsPluginData, SessionEndInfo,
                                                         SessionStartInfo)

from .summary import make_np

__all__ = ["hparams"]

# a hyperparameter's Python type -> (its field in a struct Value, the plugin's data type);
# bool is a subclass of int, so a bool is logged as a number, as PyTorch logs it
_KINDS = ((int, "number_value", "DATA_TYPE_FLOAT64"), (float, "number_value", "DATA_TYPE_FLOAT64"),
          (str, "string_value", "DATA_TYPE_STRING"), (bool, "bool_value", "DATA_TYPE_BOOL"))


def _record(tag, **content):
    data = HParamsPluginData(version=PLUGIN_DATA_VERSION, **content)
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
        plugin_name=PLUGIN_NAME, content=data.SerializeToString()))
    return Summary(value=[Summary.Value(tag=tag, metadata=metadata)])


def _check(hparam_dict, metric_dict, domains):
    for name, value in (("hparam_dict", hparam_dict), ("metric_dict", metric_dict),
                        ("hparam_domain_discrete", domains)):
        if not isinstance(value, dict):
            raise TypeError(f"parameter: {name} should be a dictionary, nothing logged.")
    for k, v in domains.items():
        if (k not in hparam_dict or not isinstance(v, list)
                or not all(isinstance(d, type(hparam_dict[k])) for d in v)):
            raise TypeError(f"parameter: hparam_domain_discrete[{k}] should be a list of same "
                            f"type as hparam_dict[{k}].")


def hparams(hparam_dict, metric_dict, hparam_domain_discrete=None):
    """(experiment, session start, session end) summaries for `hparam_dict` (name: int, float,
    str, bool or one-element tensor) and the names of `metric_dict`; `hparam_domain_discrete`
    {name: [every value it can take]} lists a hyperparameter's domain."""
    domains = hparam_domain_discrete or {}
    _check(hparam_dict, metric_dict, domains)
    start, infos = SessionStartInfo(), []
    for k, v in hparam_dict.items():
        if v is None:
            continue
        if hasattr(v, "detach"):  # a tensor: its first element, as a number without a domain
            start.hparams[k].number_value = make_np(v).reshape(-1)[0]
            infos.append(HParamInfo(name=k, type=DataType.Value("DATA_TYPE_FLOAT64")))
            continue
        kind = next((kind for kind in _KINDS if isinstance(v, kind[0])), None)
        if kind is None:
            raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")
        _, field, data_type = kind
        setattr(start.hparams[k], field, v)
        domain = None
        if k in domains:
            domain = struct_pb2.ListValue(values=[struct_pb2.Value(**{field: d})
                                                  for d in domains[k]])
        infos.append(HParamInfo(name=k, type=DataType.Value(data_type), domain_discrete=domain))
    experiment = Experiment(hparam_infos=infos,
                            metric_infos=[MetricInfo(name=MetricName(tag=k)) for k in metric_dict])
    return (_record(EXPERIMENT_TAG, experiment=experiment),
            _record(SESSION_START_INFO_TAG, session_start_info=start),
            _record(SESSION_END_INFO_TAG,
                    session_end_info=SessionEndInfo(status=Status.Value("STATUS_SUCCESS"))))
