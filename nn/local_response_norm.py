"""Local response normalisation: `local_response_norm` of `torch.nn.functional` and the
LocalResponseNorm layer, AlexNet's normalisation across neighbouring channels:
x / (k + alpha * mean of x^2 over the `size` channels around it)^beta.

Composed as PyTorch composes it (the squares padded with zeros along the channels, then
averaged by a (size, 1) pooling window), so values and gradients are PyTorch's.
"""
from __future__ import annotations

from .functional_pad import pad
from .functional_pool import avg_pool2d, avg_pool3d
from .module import Module


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """input (N, C, *) divided by (k + alpha * the mean of its squares over the window of
    `size` channels centred at each channel)^beta; the window is cut off (zero padded) at
    the first and last channels."""
    if input.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          "
                         f"input (got {input.ndim} dimensions)")
    if input.numel() == 0:
        return input
    div = input * input
    if input.ndim == 3:
        div = pad(div.unsqueeze(1), (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.shape
        div = div.reshape(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1).reshape(sizes)
    return input / (div * alpha + k).pow(beta)


class LocalResponseNorm(Module):
    """Normalises (N, C, *) across `size` neighbouring channels (see local_response_norm)."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
