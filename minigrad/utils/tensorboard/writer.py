"""`SummaryWriter`: what a training loop logs, written as TensorBoard event files, with
PyTorch's methods, arguments and on-disk layout (`add_scalars` writes one run per key,
`log_dir/<main_tag>_<key>`, `add_hparams` one run `log_dir/<run_name or the time>`,
`add_embedding` the projector's files in `log_dir/<step>/<tag>`, as PyTorch does).
`tensorboard --logdir runs` shows them."""
import os
import socket
import time
from datetime import datetime

from tensorboard.compat.proto.event_pb2 import Event, SessionLog, TaggedRunMetadata
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from .curves import custom_scalars, pr_curve, pr_curve_raw
from .embedding import Projector
from .graph import graph
from .hparams import hparams
from .media import audio, mesh, video
from .summary import figure_to_image, histogram, image, scalar, tensor_proto, text

__all__ = ["FileWriter", "SummaryWriter"]


def _tensorflow_bins():
    """The histogram edges TensorFlow (and PyTorch's `bins="tensorflow"`) use: +-1e-12 growing
    by 10 % per bucket up to +-1e20, and 0."""
    edges, v = [], 1e-12
    while v < 1e20:
        edges.append(v)
        v *= 1.1
    return [-e for e in reversed(edges)] + [0] + edges


class FileWriter:
    """One event file in `log_dir`: events are queued and written by tensorboard's writer
    thread, at the latest every `flush_secs` seconds or when `max_queue` are waiting."""

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix=""):
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self):
        return self.event_writer.get_logdir()

    def add_event(self, event, step=None, walltime=None):
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step=None, walltime=None):
        self.add_event(Event(summary=summary), global_step, walltime)

    def add_graph(self, graph_profile, walltime=None):
        """A (GraphDef, RunMetadata) pair: the graph, then the run metadata tagged "step1"."""
        graph, stats = graph_profile
        self.add_event(Event(graph_def=graph.SerializeToString()), None, walltime)
        self.add_event(Event(tagged_run_metadata=TaggedRunMetadata(
            tag="step1", run_metadata=stats.SerializeToString())), None, walltime)

    def flush(self):
        self.event_writer.flush()

    def close(self):
        self.event_writer.close()

    def reopen(self):
        self.event_writer.reopen()


class SummaryWriter:
    """Logs to event files in `log_dir` (default `runs/<Mon>DD_HH-MM-SS_<host><comment>`,
    as PyTorch names them). `purge_step`: a restarted run hides the events at and after it."""

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120,
                 filename_suffix=""):
        if not log_dir:
            now = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", now + "_" + socket.gethostname() + comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue, self.flush_secs = max_queue, flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer = self.all_writers = None
        self._get_file_writer()
        self.default_bins = _tensorflow_bins()

    def _get_file_writer(self):
        """The writer of the main event file; after `close`, a new file is opened."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs,
                                          self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                self.file_writer.add_event(Event(step=self.purge_step,
                                                 file_version="brain.Event:2"))
                self.file_writer.add_event(Event(step=self.purge_step, session_log=SessionLog(
                    status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self):
        return self.log_dir

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        """One number (a float, or a one-element tensor or array) under `tag` at a step."""
        summary = scalar(tag, scalar_value, new_style=new_style, double_precision=double_precision)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Several numbers in one chart: each key's values go to its own run,
        `log_dir/<main_tag with / as _>_<key>`, under the tag `main_tag`."""
        walltime = time.time() if walltime is None else walltime
        root = self._get_file_writer().get_logdir()
        for key, value in tag_scalar_dict.items():
            run = root + "/" + main_tag.replace("/", "_") + "_" + key
            if run not in self.all_writers:
                self.all_writers[run] = FileWriter(run, self.max_queue, self.flush_secs,
                                                   self.filename_suffix)
            self.all_writers[run].add_summary(scalar(main_tag, value), global_step, walltime)

    def add_tensor(self, tag, tensor, global_step=None, walltime=None):
        """A whole tensor's values (any shape; float, int, bool or complex)."""
        self._get_file_writer().add_summary(tensor_proto(tag, tensor), global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None,
                      max_bins=None):
        """The distribution of `values` (a tensor or array of any shape)."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._get_file_writer().add_summary(histogram(tag, values, bins, max_bins=max_bins),
                                            global_step, walltime)

    def add_histogram_raw(self, tag, min, max, num, sum, sum_squares, bucket_limits,
                          bucket_counts, global_step=None, walltime=None):
        """A histogram counted elsewhere: bucket i holds the values up to `bucket_limits[i]`."""
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        self._get_file_writer().add_summary(Summary(value=[Summary.Value(tag=tag, histo=(
            HistogramProto(min=min, max=max, num=num, sum=sum, sum_squares=sum_squares,
                           bucket_limit=bucket_limits, bucket=bucket_counts)))]),
            global_step, walltime)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        """A string (Markdown in TensorBoard's text tab) under `tag/text_summary`."""
        self._get_file_writer().add_summary(text(tag, text_string), global_step, walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """An image: floats in [0, 1] or uint8, laid out as `dataformats` says."""
        self._get_file_writer().add_summary(image(tag, img_tensor, dataformats=dataformats),
                                            global_step, walltime)

    def add_image_with_boxes(self, tag, img_tensor, box_tensor, global_step=None,
                             walltime=None, rescale=1, dataformats="CHW", labels=None):
        """An image with (K, 4) boxes (x_min, y_min, x_max, y_max, in pixels) drawn on it,
        each with its label if `labels` has K of them (a string: one box's)."""
        if labels is not None:
            labels = [labels] if isinstance(labels, str) else labels
            if len(labels) != box_tensor.shape[0]:
                labels = None
        self._get_file_writer().add_summary(
            image(tag, img_tensor, dataformats=dataformats, boxes=box_tensor, labels=labels,
                  rescale=rescale), global_step, walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        """A batch of images (N, C, H, W by default) side by side, 8 to a row."""
        self.add_image(tag, img_tensor, global_step, walltime, dataformats=dataformats)

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None):
        """A matplotlib figure (or a list of them, side by side) as an image; closes it unless
        `close=False`."""
        dataformats = "NCHW" if isinstance(figure, list) else "CHW"
        self.add_image(tag, figure_to_image(figure, close), global_step, walltime,
                       dataformats=dataformats)

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None,
                    global_step=None):
        """One run's hyperparameters and final metrics for the HParams tab, written to the run
        `log_dir/<run_name>` (default: the current time, as PyTorch names it), with each
        metric also logged there as a scalar."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        records = hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        run_dir = os.path.join(self._get_file_writer().get_logdir(), run_name or str(time.time()))
        with SummaryWriter(log_dir=run_dir) as run:
            for record in records:
                run.file_writer.add_summary(record, global_step)
            for k, v in metric_dict.items():
                run.add_scalar(k, v, global_step)

    def add_pr_curve(self, tag, labels, predictions, global_step=None, num_thresholds=127,
                     weights=None, walltime=None):
        """The precision-recall curve of (N,) binary `labels` against (N,) probabilities."""
        self._get_file_writer().add_summary(
            pr_curve(tag, labels, predictions, num_thresholds, weights), global_step, walltime)

    def add_pr_curve_raw(self, tag, true_positive_counts, false_positive_counts,
                         true_negative_counts, false_negative_counts, precision, recall,
                         global_step=None, num_thresholds=127, weights=None, walltime=None):
        """A precision-recall curve from counts computed elsewhere (one per threshold)."""
        self._get_file_writer().add_summary(pr_curve_raw(
            tag, true_positive_counts, false_positive_counts, true_negative_counts,
            false_negative_counts, precision, recall, num_thresholds, weights),
            global_step, walltime)

    def add_embedding(self, mat, metadata=None, label_img=None, global_step=None,
                      tag="default", metadata_header=None):
        """(N, D) points for the projector, with N labels (or rows of columns named by
        `metadata_header`) and (N, C, H, W) images shown at the points."""
        if not hasattr(self, "_projector"):
            self._projector = Projector()
        self._projector.add(self._get_file_writer().get_logdir(), mat, metadata, label_img,
                            global_step, tag, metadata_header)

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        """The graph of `model(*input_to_model)`, traced once in eval mode, for the Graphs
        tab. `use_strict_trace` is accepted as PyTorch's and has no effect here."""
        self._get_file_writer().add_graph(graph(model, input_to_model, verbose))

    def add_onnx_graph(self, prototxt):
        """The graph of the ONNX model saved in the file `prototxt` (needs `onnx`)."""
        from .onnx_graph import load_onnx_graph
        graph = load_onnx_graph(prototxt)
        self._get_file_writer().add_event(Event(graph_def=graph.SerializeToString()))

    def add_custom_scalars(self, layout):
        """Charts that combine tags: {category: {title: ["Multiline", [tag regexes]] or
        ["Margin", [value, lower, upper]]}}."""
        self._get_file_writer().add_summary(custom_scalars(layout))

    def add_custom_scalars_multilinechart(self, tags, category="default", title="untitled"):
        self.add_custom_scalars({category: {title: ["Multiline", tags]}})

    def add_custom_scalars_marginchart(self, tags, category="default", title="untitled"):
        if len(tags) != 3:
            raise AssertionError(f"Expected 3 tags, got {len(tags)}.")
        self.add_custom_scalars({category: {title: ["Margin", tags]}})

    def add_audio(self, tag, snd_tensor, global_step=None, sample_rate=44100, walltime=None):
        """A (L,) waveform in [-1, 1], as 16-bit mono WAV."""
        self._get_file_writer().add_summary(audio(tag, snd_tensor, sample_rate=sample_rate),
                                            global_step, walltime)

    def add_video(self, tag, vid_tensor, global_step=None, fps=4, walltime=None):
        """(B, T, C, H, W) videos as one animated GIF (needs moviepy, as in PyTorch)."""
        self._get_file_writer().add_summary(video(tag, vid_tensor, fps), global_step, walltime)

    def add_mesh(self, tag, vertices, colors=None, faces=None, config_dict=None,
                 global_step=None, walltime=None):
        """A 3-D mesh or point cloud: (B, N, 3) vertices, (B, N, 3) colours, (B, F, 3)
        faces, `config_dict` the three.js settings."""
        self._get_file_writer().add_summary(mesh(tag, vertices, colors, faces, config_dict),
                                            global_step, walltime)

    def flush(self):
        """Write everything queued to disk now."""
        for writer in (self.all_writers or {}).values():
            writer.flush()

    def close(self):
        """Flush and close the event files; logging afterwards starts a new file."""
        for writer in (self.all_writers or {}).values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.close()
