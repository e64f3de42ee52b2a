"""Port test: an audio classifier in ordinary PyTorch style: a learnable frequency-domain
filter (rfft, a complex gain built by torch.polar, irfft), a log-power spectrogram
(torch.stft with a Hann window), a small CNN; run by PyTorch and by minigrad (passed in as
`torch`) from the same weights, the loss curves and the trained weights must agree."""
import numpy as np

from port_runner import assert_curves_match, assert_states_match, run_both, state_numpy


def audio_program(torch, X, Y, order, init=None, epochs=4, batch_size=16):
    """Train the filter + spectrogram + CNN classifier with Adam; report every step's loss,
    the final accuracy and weights."""
    nn = torch.nn
    F = torch.nn.functional
    torch.manual_seed(0)

    class SpectralFilter(nn.Module):
        """y = irfft(rfft(x) * g e^{i phi}): a learnable gain and phase per frequency."""

        def __init__(self, n):
            super().__init__()
            self.n = n
            self.log_gain = nn.Parameter(torch.zeros(n // 2 + 1))
            self.phase = nn.Parameter(torch.zeros(n // 2 + 1))

        def forward(self, x):
            spectrum = torch.fft.rfft(x, norm="ortho")
            response = torch.polar(self.log_gain.exp(), self.phase)
            return torch.fft.irfft(spectrum * response, n=self.n, norm="ortho")

    class AudioNet(nn.Module):
        def __init__(self, n, n_fft=32, hop=8, classes=3):
            super().__init__()
            self.n_fft, self.hop = n_fft, hop
            self.filter = SpectralFilter(n)
            self.register_buffer("window", torch.hann_window(n_fft))
            self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
            self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
            self.head = nn.Linear(8, classes)

        def forward(self, x):
            x = self.filter(x)
            spec = torch.stft(x, self.n_fft, self.hop, window=self.window, return_complex=True)
            power = spec.real ** 2 + spec.imag ** 2          # |X|^2, (B, F, T)
            logspec = torch.log1p(power).unsqueeze(1)        # (B, 1, F, T)
            h = F.relu(self.conv1(logspec))
            h = F.max_pool2d(F.relu(self.conv2(h)), 2)
            return self.head(h.mean(dim=(2, 3)))

    model = AudioNet(X.shape[1])
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(model)
    x_all = torch.tensor(X)
    y_all = torch.from_numpy(Y).long()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    losses = []
    for epoch in range(epochs):
        model.train()
        perm = torch.from_numpy(order[epoch])
        for i in range(0, len(perm), batch_size):
            idx = perm[i:i + batch_size]
            loss = F.cross_entropy(model(x_all[idx]), y_all[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        accuracy = (model(x_all).argmax(dim=1) == y_all).float().mean().item()
    return {"init": start, "losses": losses, "accuracy": accuracy, "final": state_numpy(model)}


def tones(n_per_class=32, n=128, seed=0):
    """Noisy tones: class c is a sinusoid near frequency 6 + 10 c (cycles per clip), with a
    random phase and amplitude."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) / n
    X, Y = [], []
    for c in range(3):
        f = 6 + 10 * c + rng.uniform(-1, 1, (n_per_class, 1))
        amp = rng.uniform(0.5, 1.5, (n_per_class, 1))
        X.append(amp * np.sin(2 * np.pi * f * t + rng.uniform(0, 2 * np.pi, (n_per_class, 1)))
                 + 0.3 * rng.standard_normal((n_per_class, n)))
        Y.append(np.full(n_per_class, c))
    return np.concatenate(X).astype(np.float32), np.concatenate(Y)


def test_spectrogram_classifier_trains_the_same_in_both(torch):
    X, Y = tones()
    rng = np.random.default_rng(1)
    order = [rng.permutation(len(X)) for _ in range(4)]
    expected, got = run_both(audio_program, torch, X, Y, order)
    assert_curves_match("spectrogram", expected["losses"], got["losses"], rtol=2e-5, every=3)
    assert expected["losses"][-1] < expected["losses"][0]  # it learns something
    assert abs(got["accuracy"] - expected["accuracy"]) < 1e-6
    # Adam divides each step by the root of the squared gradients, so a filter weight whose
    # gradient is near zero moves by up to lr = 3e-3 per step in a direction set by float32
    # rounding, which differs between the libraries' FFTs: after 24 steps the weights agree
    # to within one step (the test below checks one step to the rounding)
    assert_states_match(expected["final"], got["final"], rtol=1e-3, atol=3e-3)


def test_one_full_batch_step_gives_the_same_weights(torch):
    X, Y = tones()
    order = [np.arange(len(X))]
    expected, got = run_both(audio_program, torch, X, Y, order, epochs=1, batch_size=len(X))
    assert_states_match(expected["final"], got["final"], rtol=1e-5, atol=1e-6)
