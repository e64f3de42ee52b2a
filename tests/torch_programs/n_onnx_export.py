"""Exporting a trained model for deployment: a small CNN with batch norm, dropout and a
classifier head is trained briefly, switched to eval mode and written with torch.onnx.export
(the TorchScript-style call with input and output names, a dynamic batch dim and opset 17).
What a user checks afterwards: the file exists and its size against the parameter bytes,
onnx's checker, the graph's declared inputs and outputs, and the outputs onnxruntime computes
for another batch size beside the model's own (skipped cleanly where onnxruntime is missing)."""
# same-source tolerance: 1e-4 1e-6
# same-source exact: ^(file|names|dims)
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import onnx
    import onnxruntime as ort
except ImportError:  # the export still runs; the checks that need the runtime are skipped
    onnx = ort = None

torch.manual_seed(21)


class SmallCNN(nn.Module):
    def __init__(self, classes=4):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 3, padding=1, bias=False)  # the batch norm has the shift
        self.bn1 = nn.BatchNorm2d(6)
        self.conv2 = nn.Conv2d(6, 8, 3, padding=1)
        self.drop = nn.Dropout(0.2)
        self.head = nn.Linear(8 * 4 * 4, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.avg_pool2d(F.relu(self.conv2(x)), 2)
        return self.head(self.drop(torch.flatten(x, 1)))


images = torch.randn(64, 1, 16, 16)
labels = (images[:, 0, :8].mean((1, 2)) > images[:, 0, 8:].mean((1, 2))).long() * 2 + (images[:, 0, :, :8].mean((1, 2)) > 0).long()
model = SmallCNN()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(15):
    idx = torch.randint(0, 64, (16,))
    loss = F.cross_entropy(model(images[idx]), labels[idx])
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 5 == 0:
        print(f"step {step} loss {loss.item():.6f}")

model.eval()
n_params = sum(p.numel() for p in model.parameters())
path = os.path.join(tempfile.mkdtemp(), "small_cnn.onnx")
example = torch.randn(2, 1, 16, 16)
torch.onnx.export(model, (example,), path, dynamo=False, opset_version=17,
                  input_names=["images"], output_names=["logits"],
                  dynamic_axes={"images": {0: "batch"}, "logits": {0: "batch"}})
size = os.path.getsize(path)
print("file", os.path.exists(path), n_params, size > 4 * n_params, size < 4 * n_params + 40000)

batch = torch.randn(5, 1, 16, 16)
with torch.no_grad():
    expected = model(batch)
print("model", expected.shape, [round(v, 5) for v in expected[0].tolist()])
if ort is None:
    print("onnxruntime is not installed: the file was written, its run is skipped")
else:
    proto = onnx.load(path)
    onnx.checker.check_model(proto)
    print("names", [i.name for i in proto.graph.input if i.name == "images"], [o.name for o in proto.graph.output])
    dims = proto.graph.input[0].type.tensor_type.shape.dim
    print("dims", [d.dim_param or d.dim_value for d in dims], proto.opset_import[0].version)
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    (got,) = session.run(["logits"], {"images": batch.numpy()})
    print("runtime", got.shape, got.dtype, [round(float(v), 5) for v in got[0]])
    print("agree", bool(abs(torch.from_numpy(got) - expected).max() < 1e-4),
          (torch.from_numpy(got).argmax(1) == expected.argmax(1)).all().item())
