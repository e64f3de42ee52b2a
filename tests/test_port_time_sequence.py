"""Port test: time-sequence prediction as in pytorch/examples: two stacked `LSTMCell`s and a
linear read-out, stepped by hand over sine waves (`input.split(1, dim=1)`), in float64
(`seq.double()`), trained with `optim.LBFGS` and a closure that prints the loss, then asked
to continue the waves past their end (`future` steps fed back from the model's own output).

Run by PyTorch and by minigrad (passed in as `torch`) from the same weights: the losses of
every closure call, the test losses and the predicted continuation must agree. The data are
the example's `generate_sine_wave.py`, made in the program, cut to 10 waves of 60 steps."""
import numpy as np

from port_runner import assert_curves_match, run_both, state_numpy


def time_sequence_program(torch, init=None, steps=3, hidden=12, future=20):
    nn = torch.nn
    optim = torch.optim

    # generate_sine_wave.py, smaller
    np.random.seed(2)
    T, L, N = 20, 60, 10
    x = np.empty((N, L), "int64")
    x[:] = np.array(range(L)) + np.random.randint(-4 * T, 4 * T, N).reshape(N, 1)
    data = np.sin(x / 1.0 / T).astype("float64")

    class Sequence(nn.Module):
        def __init__(self):
            super(Sequence, self).__init__()
            self.lstm1 = nn.LSTMCell(1, hidden)
            self.lstm2 = nn.LSTMCell(hidden, hidden)
            self.linear = nn.Linear(hidden, 1)

        def forward(self, input, future=0):
            outputs = []
            h_t = torch.zeros(input.size(0), hidden, dtype=torch.double)
            c_t = torch.zeros(input.size(0), hidden, dtype=torch.double)
            h_t2 = torch.zeros(input.size(0), hidden, dtype=torch.double)
            c_t2 = torch.zeros(input.size(0), hidden, dtype=torch.double)

            for input_t in input.split(1, dim=1):
                h_t, c_t = self.lstm1(input_t, (h_t, c_t))
                h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
                output = self.linear(h_t2)
                outputs += [output]
            for i in range(future):  # if we should predict the future
                h_t, c_t = self.lstm1(output, (h_t, c_t))
                h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
                output = self.linear(h_t2)
                outputs += [output]
            outputs = torch.cat(outputs, dim=1)
            return outputs

    torch.manual_seed(0)
    input = torch.from_numpy(data[3:, :-1])
    target = torch.from_numpy(data[3:, 1:])
    test_input = torch.from_numpy(data[:3, :-1])
    test_target = torch.from_numpy(data[:3, 1:])
    seq = Sequence()
    seq.double()
    if init is not None:
        seq.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(seq)
    criterion = nn.MSELoss()
    # use LBFGS as optimizer since we can load the whole data to train
    optimizer = optim.LBFGS(seq.parameters(), lr=0.8)
    closure_losses, test_losses = [], []
    for i in range(steps):
        def closure():
            optimizer.zero_grad()
            out = seq(input)
            loss = criterion(out, target)
            closure_losses.append(loss.item())  # the example prints it
            loss.backward()
            return loss
        optimizer.step(closure)
        # begin to predict, no need to track gradient here
        with torch.no_grad():
            pred = seq(test_input, future=future)
            loss = criterion(pred[:, :-future], test_target)
            test_losses.append(loss.item())
            y = pred.detach().numpy()
    return {"init": start, "closure": closure_losses, "test": test_losses, "pred": y,
            "dtype": str(pred.dtype), "state": state_numpy(seq),
            "n_iter": optimizer.state[optimizer._params[0]]["n_iter"]}


def test_time_sequence_prediction_with_lbfgs(torch):
    expected, got = run_both(time_sequence_program, torch)
    assert_curves_match("time-sequence closure", expected["closure"], got["closure"], rtol=1e-7)
    assert_curves_match("time-sequence test", expected["test"], got["test"], rtol=1e-7)
    assert got["dtype"].split(".")[-1] == expected["dtype"].split(".")[-1] == "float64"
    assert got["pred"].shape == expected["pred"].shape == (3, 59 + 20)
    # Each L-BFGS step multiplies the weights' last-bit differences by 30 to 100 (after one
    # step they are 1e-12, after three 1e-8), and the free-running prediction, fed its own
    # output for 20 steps, multiplies them again; the losses stay at 1e-11.
    np.testing.assert_allclose(got["pred"], expected["pred"], rtol=1e-6, atol=1e-6)
    assert got["n_iter"] == expected["n_iter"]
    for k, v in expected["state"].items():
        np.testing.assert_allclose(got["state"][k], v, rtol=1e-6, atol=1e-7, err_msg=k)
    assert expected["test"][-1] < expected["test"][0]  # it learns
