"""Port test: two programs in ordinary PyTorch style that compute in complex numbers, run by
PyTorch and by minigrad (passed in as `torch`) from the same weights; the loss curves and the
trained weights must agree.

- A unitary recurrent network: the recurrent matrix is the Cayley transform of a
  skew-Hermitian matrix, (I - A)^-1 (I + A) by linalg.solve, so it stays unitary while Adam
  trains its real and imaginary parts; modReLU (relu(|z| + b) sgn z) as the nonlinearity.
- A damped oscillator fitted through linalg.eig: x(t) is the first component of
  V diag(exp(L t)) V^-1 x0 for the system matrix [[0, 1], [-k, -c]], and k, c and x0 are
  fitted to a noisy trajectory."""
import numpy as np

from port_runner import assert_curves_match, assert_states_match, run_both, state_numpy


def urnn_program(torch, X, Y, order, init=None, epochs=2, batch_size=16, hidden=6):
    """Train the unitary RNN classifier with Adam; report every step's loss, how far the
    recurrent matrix is from unitary, its eigenvalues' moduli and the final weights."""
    nn = torch.nn
    F = torch.nn.functional
    torch.manual_seed(0)

    class UnitaryCell(nn.Module):
        def __init__(self, d_in, hidden):
            super().__init__()
            self.p_re = nn.Parameter(torch.randn(hidden, hidden) * 0.3)
            self.p_im = nn.Parameter(torch.randn(hidden, hidden) * 0.3)
            self.u_re = nn.Parameter(torch.randn(hidden, d_in) * 0.5)
            self.u_im = nn.Parameter(torch.randn(hidden, d_in) * 0.5)
            self.bias = nn.Parameter(torch.full((hidden,), -0.1))

        def recurrent(self):
            p = torch.complex(self.p_re, self.p_im)
            a = (p - p.mH) / 2                                  # skew-Hermitian
            eye = torch.eye(a.shape[0], dtype=a.dtype)
            return torch.linalg.solve(eye - a, eye + a)         # Cayley: unitary

        def forward(self, x, h):
            u = torch.complex(self.u_re, self.u_im)
            z = h @ self.recurrent().mT + x.to(u.dtype) @ u.mT
            return F.relu(z.abs() + self.bias) * torch.sgn(z)   # modReLU

    class Model(nn.Module):
        def __init__(self, d_in, hidden, classes):
            super().__init__()
            self.hidden = hidden
            self.cell = UnitaryCell(d_in, hidden)
            self.head = nn.Linear(2 * hidden, classes)

        def forward(self, xs):
            h = torch.zeros(xs.shape[0], self.hidden, dtype=torch.complex64)
            for t in range(xs.shape[1]):
                h = self.cell(xs[:, t], h)
            return self.head(torch.view_as_real(h).flatten(1))

    model = Model(X.shape[2], hidden, 3)
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(model)
    x_all, y_all = torch.tensor(X), torch.from_numpy(Y).long()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for epoch in range(epochs):
        perm = torch.from_numpy(order[epoch])
        for i in range(0, len(perm), batch_size):
            idx = perm[i:i + batch_size]
            loss = F.cross_entropy(model(x_all[idx]), y_all[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    with torch.no_grad():
        w = model.cell.recurrent()
        drift = torch.linalg.matrix_norm(w @ w.mH - torch.eye(hidden, dtype=w.dtype)).item()
        moduli = torch.linalg.eigvals(w).abs().sort().values.numpy()
    return {"init": start, "losses": losses, "drift": drift, "moduli": moduli,
            "final": state_numpy(model)}


def sequences(n_per_class=24, steps=6, d_in=3, seed=0):
    """Class c: a rotating phasor of frequency c + 1 in the first two channels, noise in all."""
    rng = np.random.default_rng(seed)
    X, Y = [], []
    t = np.arange(steps)
    for c in range(3):
        phase = rng.uniform(0, 2 * np.pi, (n_per_class, 1))
        x = 0.4 * rng.standard_normal((n_per_class, steps, d_in))
        x[:, :, 0] += np.cos(0.7 * (c + 1) * t + phase)
        x[:, :, 1] += np.sin(0.7 * (c + 1) * t + phase)
        X.append(x)
        Y.append(np.full(n_per_class, c))
    return np.concatenate(X).astype(np.float32), np.concatenate(Y)


def test_unitary_rnn_trains_the_same_in_both(torch):
    X, Y = sequences()
    rng = np.random.default_rng(1)
    order = [rng.permutation(len(X)) for _ in range(2)]
    expected, got = run_both(urnn_program, torch, X, Y, order)
    assert_curves_match("unitary rnn", expected["losses"], got["losses"], rtol=5e-5)
    assert expected["losses"][-1] < expected["losses"][0]  # it learns something
    assert got["drift"] < 1e-5 and expected["drift"] < 1e-5  # still unitary after training
    np.testing.assert_allclose(got["moduli"], expected["moduli"], rtol=1e-5)
    np.testing.assert_allclose(got["moduli"], 1.0, rtol=1e-5)
    assert_states_match(expected["final"], got["final"], rtol=1e-4, atol=1e-5)


def oscillator_program(torch, t, observed, init=None, steps=40):
    """Fit log k, log c and x0 of x'' = -k x - c x' to `observed` with Adam; report every
    step's loss and the fitted parameters."""
    nn = torch.nn
    torch.manual_seed(0)

    class Oscillator(nn.Module):
        def __init__(self):
            super().__init__()
            self.log_k = nn.Parameter(torch.tensor(0.0, dtype=torch.float64))
            self.log_c = nn.Parameter(torch.tensor(0.0, dtype=torch.float64))
            self.x0 = nn.Parameter(torch.randn(2, dtype=torch.float64))

        def forward(self, t):
            k, c = self.log_k.exp(), self.log_c.exp()
            zero, one = torch.zeros_like(k), torch.ones_like(k)
            system = torch.stack([torch.stack([zero, one]), torch.stack([-k, -c])])
            values, vectors = torch.linalg.eig(system)           # a complex pair
            coeff = torch.linalg.solve(vectors, self.x0.to(vectors.dtype))
            modes = torch.exp(values * t[:, None].to(values.dtype))   # (T, 2)
            return (modes * (vectors[0] * coeff)).sum(-1).real   # the phases cancel

    model = Oscillator()
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(model)
    t, observed = torch.from_numpy(t), torch.from_numpy(observed)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    losses = []
    for _ in range(steps):
        loss = ((model(t) - observed) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return {"init": start, "losses": losses, "final": state_numpy(model)}


def trajectory(k=3.0, c=0.4, x0=(1.0, 0.0), n=50, seed=0):
    """x(t) of the damped oscillator on [0, 6], with a little noise."""
    t = np.linspace(0, 6, n)
    w = np.sqrt(k - c * c / 4)
    a, b = x0[0], (x0[1] + c / 2 * x0[0]) / w
    x = np.exp(-c / 2 * t) * (a * np.cos(w * t) + b * np.sin(w * t))
    return t, x + 0.01 * np.random.default_rng(seed).standard_normal(n)


def test_oscillator_fit_through_eig_is_the_same_in_both(torch):
    t, observed = trajectory()
    expected, got = run_both(oscillator_program, torch, t, observed)
    assert_curves_match("oscillator", expected["losses"], got["losses"], rtol=1e-9, every=4)
    assert expected["losses"][-1] < 0.5 * expected["losses"][0]  # the fit improves
    assert_states_match(expected["final"], got["final"], rtol=1e-9, atol=1e-11)
