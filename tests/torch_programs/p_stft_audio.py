"""Audio as users handle it in plain torch: generated one-second clips (a chirp, a two-tone
chord, noise bursts) at 2 kHz; torch.stft with a Hann window (center, reflect padding,
onesided, return_complex), the magnitude and its log, istft round trip, an FFT band-pass
filter with rfft/irfft and rfftfreq, then log-spectrogram features into a small CNN
classifier trained for a few epochs."""
# same-source tolerance: 3e-4 1e-5
# same-source exact: ^data
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(8)
sr, n = 2000, 2000
t = torch.arange(n) / sr


def clip(kind):
    amp = 0.5 + 0.5 * torch.rand(())
    if kind == 0:  # a chirp from f0 upwards
        f0 = 100 + 100 * torch.rand(())
        sig = torch.sin(2 * math.pi * (f0 * t + 150 * t ** 2))
    elif kind == 1:  # a chord
        f1, f2 = 200 + 50 * torch.rand(()), 450 + 50 * torch.rand(())
        sig = torch.sin(2 * math.pi * f1 * t) + 0.5 * torch.sin(2 * math.pi * f2 * t)
    else:  # noise bursts
        env = (torch.sin(2 * math.pi * 3 * t) > 0.5).float()
        sig = env * torch.randn(n)
    return amp * sig + 0.05 * torch.randn(n)


labels = torch.randint(0, 3, (48,))
waves = torch.stack([clip(k) for k in labels.tolist()])
print("data", labels[:12].tolist())

window = torch.hann_window(128)
spec = torch.stft(waves, n_fft=128, hop_length=32, win_length=128, window=window,
                  center=True, pad_mode="reflect", return_complex=True)
print("stft", list(spec.shape), spec.is_complex(), spec.dtype == torch.complex64)
mag = spec.abs()
print("magnitude", [round(v, 4) for v in mag[0, 10:14, 5].tolist()])
back = torch.istft(spec, n_fft=128, hop_length=32, window=window, length=n)
print("istft error", f"{(back - waves).abs().max().item():.2e}")

# a band-pass filter in the frequency domain
freqs = torch.fft.rfftfreq(n, d=1 / sr)
X = torch.fft.rfft(waves[:4])
band = ((freqs > 150) & (freqs < 350)).to(X.dtype)
filtered = torch.fft.irfft(X * band, n=n)
energy = filtered.pow(2).mean(-1) / waves[:4].pow(2).mean(-1)
print("band energy", [round(v, 4) for v in energy.tolist()], labels[:4].tolist())
peak = freqs[X.abs().argmax(-1)]
print("peaks", peak.tolist())

features = torch.log1p(mag).unsqueeze(1)  # (B, 1, F, T)
features = (features - features.mean()) / features.std()
print("features", list(features.shape), f"{features.mean().item():.2e}")


class SpecCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.pool = nn.AdaptiveAvgPool2d((4, 4))
        self.fc = nn.Linear(16 * 16, 3)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = self.pool(F.relu(self.conv2(x)))
        return self.fc(x.flatten(1))


model = SpecCNN()
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
train_x, train_y, test_x, test_y = features[:36], labels[:36], features[36:], labels[36:]
for epoch in range(5):
    model.train()
    for i in range(0, 36, 12):
        loss = F.cross_entropy(model(train_x[i:i + 12]), train_y[i:i + 12])
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("epoch", epoch, f"{loss.item():.5f}")
model.eval()
with torch.no_grad():
    pred = model(test_x).argmax(-1)
print("test", pred.tolist(), test_y.tolist())
print("running var", [round(v, 5) for v in model.bn1.running_var[:4].tolist()])
