"""`SummaryWriter`: what a training loop logs, written as TensorBoard event files, with
PyTorch's methods, arguments and on-disk layout (`add_scalars` writes one run per key,
`log_dir/<main_tag>_<key>`, as PyTorch does). `tensorboard --logdir runs` shows them."""
import os
import socket
import time
from datetime import datetime

from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from .summary import figure_to_image, histogram, image, scalar, text

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

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None,
                      max_bins=None):
        """The distribution of `values` (a tensor or array of any shape)."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._get_file_writer().add_summary(histogram(tag, values, bins, max_bins=max_bins),
                                            global_step, walltime)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        """A string (Markdown in TensorBoard's text tab) under `tag/text_summary`."""
        self._get_file_writer().add_summary(text(tag, text_string), global_step, walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """An image: floats in [0, 1] or uint8, laid out as `dataformats` says."""
        self._get_file_writer().add_summary(image(tag, img_tensor, dataformats=dataformats),
                                            global_step, walltime)

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None):
        """A matplotlib figure (or a list of them, side by side) as an image; closes it unless
        `close=False`."""
        dataformats = "NCHW" if isinstance(figure, list) else "CHW"
        self.add_image(tag, figure_to_image(figure, close), global_step, walltime,
                       dataformats=dataformats)

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
