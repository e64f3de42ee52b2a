"""Sound, video and 3-D meshes as PyTorch writes them: audio as a mono 16-bit WAV file in an
audio summary, a video as an animated GIF in an image summary (made by moviepy, as in PyTorch;
without it the value holds only its tag), a mesh or point cloud as the mesh plugin's float
tensors (vertices, faces, colours), one value each."""
import io
import json
import tempfile
import wave

import numpy as np
from tensorboard.compat.proto.summary_pb2 import Summary
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto

from .summary import make_np

__all__ = ["audio", "mesh", "video"]


def audio(tag, sound, sample_rate=44100):
    """A (L,) (or (1, L)) waveform in [-1, 1] (clipped, with a printed warning, beyond)."""
    array = make_np(sound).squeeze()
    if abs(array).max() > 1:
        print("warning: audio amplitude out of range, auto clipped.")
        array = array.clip(-1, 1)
    if array.ndim != 1:
        raise AssertionError(f"add_audio: the sound of {tag!r} should be 1 dimensional, "
                             f"but has shape {array.shape}")
    array = (array * np.iinfo(np.int16).max).astype("<i2")
    wav = io.BytesIO()
    with wave.open(wav, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(sample_rate)
        out.writeframes(array.data)
    return Summary(value=[Summary.Value(tag=tag, audio=Summary.Audio(
        sample_rate=sample_rate, num_channels=1, length_frames=array.shape[-1],
        encoded_audio_string=wav.getvalue(), content_type="audio/wav"))])


def _frames(video):
    """(B, T, C, H, W) -> (T, rows*H, columns*W, C): each frame the batch laid out in a grid
    (the batch padded with black videos to a power of two)."""
    b, t, c, h, w = video.shape
    if video.dtype == np.uint8:
        video = np.float32(video) / 255.0
    if b & (b - 1):
        video = np.concatenate((video, np.zeros((2 ** b.bit_length() - b, t, c, h, w))), 0)
    rows = 2 ** ((b.bit_length() - 1) // 2)
    columns = video.shape[0] // rows
    video = video.reshape(rows, columns, t, c, h, w).transpose(2, 0, 4, 1, 5, 3)
    return video.reshape(t, rows * h, columns * w, c)


def _gif(frames, fps):
    """The frames as GIF bytes, through moviepy (None, with PyTorch's message, without it)."""
    try:
        import moviepy  # noqa: F401
    except ImportError:
        print("add_video needs package moviepy")
        return None
    try:
        from moviepy import editor as mpy
    except ImportError:
        print("moviepy is installed, but can't import moviepy.editor.",
              "Some packages could be missing [imageio, requests]")
        return None
    clip = mpy.ImageSequenceClip(list(frames), fps=fps)
    with tempfile.NamedTemporaryFile(suffix=".gif") as f:
        clip.write_gif(f.name, verbose=False, logger=None)
        f.seek(0)
        return f.read()


def video(tag, frames, fps=4):
    """A (B, T, C, H, W) batch of videos (floats in [0, 1] or uint8) as one animated image."""
    array = make_np(frames)
    if array.ndim != 5:
        raise ValueError(f"add_video: the video of {tag!r} should have 5 dimensions "
                         f"(B, T, C, H, W), but has shape {array.shape}")
    array = _frames(array)
    array = (array.astype(np.float32) * 255).clip(0, 255).astype(np.uint8)
    gif = _gif(array, fps)
    if gif is None:
        return Summary(value=[Summary.Value(tag=tag)])
    _, h, w, c = array.shape
    return Summary(value=[Summary.Value(tag=tag, image=Summary.Image(
        height=h, width=w, colorspace=c, encoded_image_string=gif))])


def mesh(tag, vertices, colors, faces, config_dict, display_name=None, description=None):
    """Vertices (B, N, 3), faces (B, F, 3) vertex indices and colours (B, N, 3), each given
    one as the mesh plugin's (B, n, 3) float tensor, tagged `tag_VERTEX`, ...; `config_dict`
    the three.js settings (camera, lights, material)."""
    from tensorboard.plugins.mesh import metadata
    from tensorboard.plugins.mesh.plugin_data_pb2 import MeshPluginData
    config = "{}" if config_dict is None else json.dumps(config_dict, sort_keys=True)
    parts = [(make_np(t), kind) for t, kind in ((vertices, MeshPluginData.VERTEX),
                                               (faces, MeshPluginData.FACE),
                                               (colors, MeshPluginData.COLOR)) if t is not None]
    components = metadata.get_components_bitmask([kind for _, kind in parts])
    values = []
    for array, kind in parts:
        if array.ndim != 3:
            raise ValueError(f"add_mesh: {MeshPluginData.ContentType.Name(kind).lower()} "
                             f"should have shape (B, N, 3), not {array.shape}")
        info = metadata.create_summary_metadata(tag, display_name, kind, components, array.shape,
                                                description, json_config=config)
        proto = TensorProto(dtype="DT_FLOAT", float_val=array.reshape(-1).tolist(),
                            tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=n)
                                                               for n in array.shape]))
        values.append(Summary.Value(tag=metadata.get_instance_name(tag, kind), tensor=proto,
                                    metadata=info))
    return Summary(value=values)
