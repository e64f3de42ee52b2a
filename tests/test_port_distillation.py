"""Port test: knowledge distillation as PyTorch's distillation tutorial and blog posts write it:
a wide teacher with `Dropout`, trained by cross entropy unless its checkpoint file exists
(`os.path.exists`), saved by `torch.save` and loaded into a fresh teacher put in `eval()` mode
with its parameters frozen (`requires_grad = False`); a
small student trained on a mix of the hard-label cross entropy and the soft-target term at a
temperature, written three ways: `nn.KLDivLoss(reduction="batchmean")` of `log_softmax(s / T)`
against `softmax(t / T)`, `F.kl_div(..., log_target=True)` of two `log_softmax`es, and the
tutorial's `torch.sum(p * (p.log() - log_q)) / batch`, each times T**2; a feature "hint" term,
`CosineEmbeddingLoss` between the student's hidden layer and the teacher's pooled by
`F.avg_pool1d` to the same width, with a target of `torch.ones`; Adam under `CosineAnnealingLR`;
and the student's accuracy and its agreement with the teacher under `torch.no_grad()`. Run by
PyTorch and by minigrad (passed in as `torch`) from the same weights.

The teacher's dropout draws from each library's random stream, so PyTorch's run trains the
teacher and writes the file, and minigrad's run finds it and loads PyTorch's file, as a
script given a pretrained teacher does."""
import os

import numpy as np
import pytest

import minigrad
from port_runner import assert_curves_match, run_both, state_numpy


def distillation_program(torch, X, Y, X_test, Y_test, orders, teacher_path, init=None,
                         soft="kldivloss", T=4.0, alpha=0.7, hint_weight=0.0, batch_size=32):
    nn = torch.nn
    F = torch.nn.functional
    DataLoader, TensorDataset = torch.utils.data.DataLoader, torch.utils.data.TensorDataset
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(42)

    class Teacher(nn.Module):
        def __init__(self, n_in, n_classes, hidden=32):
            super().__init__()
            self.features = nn.Sequential(nn.Linear(n_in, 64), nn.ReLU(), nn.Dropout(0.3),
                                          nn.Linear(64, hidden), nn.ReLU())
            self.classifier = nn.Sequential(nn.Dropout(0.3), nn.Linear(hidden, n_classes))

        def forward(self, x):
            hidden = self.features(x)
            return self.classifier(hidden), hidden

    class Student(nn.Module):
        def __init__(self, n_in, n_classes, hidden=16):
            super().__init__()
            self.features = nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU())
            self.classifier = nn.Linear(hidden, n_classes)

        def forward(self, x):
            hidden = self.features(x)
            return self.classifier(hidden), hidden

    n_in, n_classes = X.shape[1], int(Y.max()) + 1
    teacher, student = Teacher(n_in, n_classes).to(device), Student(n_in, n_classes).to(device)
    if init is not None:
        teacher.load_state_dict({k: torch.from_numpy(v) for k, v in init["teacher"].items()})
        student.load_state_dict({k: torch.from_numpy(v) for k, v in init["student"].items()})
    start = {"teacher": state_numpy(teacher), "student": state_numpy(student)}
    total_params_teacher = sum(p.numel() for p in teacher.parameters())
    total_params_student = sum(p.numel() for p in student.parameters())

    train_set = TensorDataset(torch.from_numpy(X), torch.from_numpy(Y))
    test_loader = DataLoader(TensorDataset(torch.from_numpy(X_test), torch.from_numpy(Y_test)),
                             batch_size=64, shuffle=False)
    ce_loss = nn.CrossEntropyLoss()

    # 1) the teacher, trained on the labels alone, unless a trained one is on disk
    teacher_losses = []
    if not os.path.exists(teacher_path):
        optimizer = torch.optim.Adam(teacher.parameters(), lr=1e-2)
        for order in orders[:2]:
            teacher.train()
            for inputs, labels in DataLoader(train_set, batch_size=batch_size,
                                             sampler=order.tolist()):
                inputs, labels = inputs.to(device), labels.to(device)
                optimizer.zero_grad()
                logits, _ = teacher(inputs)
                loss = ce_loss(logits, labels)
                loss.backward()
                optimizer.step()
                teacher_losses.append(loss.item())
        torch.save(teacher.state_dict(), teacher_path)

    # 2) a fresh teacher from the file, frozen, in eval mode (dropout off)
    teacher = Teacher(n_in, n_classes).to(device)
    teacher.load_state_dict(torch.load(teacher_path, map_location=device))
    teacher.eval()
    for param in teacher.parameters():
        param.requires_grad = False

    kl = nn.KLDivLoss(reduction="batchmean")
    cosine_loss = nn.CosineEmbeddingLoss()

    def soft_term(student_logits, teacher_logits):
        if soft == "kldivloss":
            return kl(F.log_softmax(student_logits / T, dim=-1),
                      F.softmax(teacher_logits / T, dim=-1)) * (T * T)
        if soft == "log_target":
            return F.kl_div(F.log_softmax(student_logits / T, dim=1),
                            F.log_softmax(teacher_logits / T, dim=1), reduction="batchmean",
                            log_target=True) * T ** 2
        soft_targets = nn.functional.softmax(teacher_logits / T, dim=-1)
        soft_prob = nn.functional.log_softmax(student_logits / T, dim=-1)
        return (torch.sum(soft_targets * (soft_targets.log() - soft_prob))
                / soft_prob.size()[0] * (T ** 2))

    optimizer = torch.optim.Adam(student.parameters(), lr=5e-3)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=len(orders) - 2)
    losses, soft_losses, lrs = [], [], []
    for order in orders[2:]:
        student.train()
        for inputs, labels in DataLoader(train_set, batch_size=batch_size, sampler=order.tolist()):
            inputs, labels = inputs.to(device), labels.to(device)
            optimizer.zero_grad()
            with torch.no_grad():
                teacher_logits, teacher_hidden = teacher(inputs)
            student_logits, student_hidden = student(inputs)
            soft_loss = soft_term(student_logits, teacher_logits)
            label_loss = ce_loss(student_logits, labels)
            loss = alpha * soft_loss + (1 - alpha) * label_loss
            if hint_weight:
                pooled = F.avg_pool1d(teacher_hidden.unsqueeze(1), 2).squeeze(1)
                target = torch.ones(inputs.size(0)).to(device)
                loss = loss + hint_weight * cosine_loss(student_hidden, pooled, target)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            soft_losses.append(soft_loss.item())
        scheduler.step()
        lrs.append(scheduler.get_last_lr()[0])

    student.eval()
    correct, agree, total = 0, 0, 0
    with torch.no_grad():
        for inputs, labels in test_loader:
            s_logits, _ = student(inputs)
            t_logits, _ = teacher(inputs)
            _, predicted = torch.max(s_logits.data, 1)
            total += labels.size(0)
            correct += (predicted == labels).sum().item()
            agree += (predicted == torch.argmax(t_logits, dim=1)).sum().item()
    frozen = [p.grad is None for p in teacher.parameters()]
    return {"init": start, "teacher_losses": teacher_losses, "losses": losses,
            "soft_losses": soft_losses, "lrs": lrs, "accuracy": 100 * correct / total,
            "agreement": agree / total, "frozen": frozen,
            "sizes": (total_params_teacher, total_params_student),
            "student": state_numpy(student)}


def clusters(n, seed, n_classes=4, dim=12):
    """Gaussian clusters, two per class, in `dim` dimensions: a task a wide net learns
    faster than a narrow one."""
    rng = np.random.default_rng(seed)
    centres = np.random.default_rng(7).normal(0, 1.5, (2 * n_classes, dim))
    k = rng.integers(0, 2 * n_classes, n)
    X = (centres[k] + rng.normal(0, 1.0, (n, dim))).astype(np.float32)
    return X, (k % n_classes).astype(np.int64)


def _data(epochs, n=128):
    X, Y = clusters(n, 0)
    X_test, Y_test = clusters(96, 1)
    rng = np.random.default_rng(2)
    return X, Y, X_test, Y_test, [rng.permutation(n) for _ in range(epochs)]


@pytest.mark.parametrize("soft, hint", [("kldivloss", 0.0), ("log_target", 0.5),
                                        ("written_out", 0.0)])
def test_distillation_trains_the_same_in_both(torch, tmp_path, soft, hint):
    expected, got = run_both(distillation_program, torch, *_data(5), str(tmp_path / "t.pt"),
                             soft=soft, hint_weight=hint)
    # the losses agree to float32 rounding (at most 4e-7 apart over the twelve steps);
    # the weights less tightly, as Adam moves one whose gradient is about zero by rounding
    assert len(expected["teacher_losses"]) == 8 and got["teacher_losses"] == []
    assert_curves_match(f"student {soft}", expected["losses"], got["losses"], rtol=1e-5)
    assert_curves_match(f"soft {soft}", expected["soft_losses"], got["soft_losses"], rtol=1e-5)
    np.testing.assert_allclose(got["lrs"], expected["lrs"], rtol=1e-12)
    assert got["accuracy"] == expected["accuracy"]
    assert got["agreement"] == expected["agreement"]
    assert got["sizes"] == expected["sizes"]
    assert all(got["frozen"]) and all(expected["frozen"])
    for key, want in expected["student"].items():
        np.testing.assert_allclose(got["student"][key], want, rtol=1e-3, atol=1e-4, err_msg=key)
    assert expected["agreement"] > 0.6  # the student learned from the teacher


def test_the_three_soft_terms_are_one_loss(torch, tmp_path):
    """KLDivLoss, kl_div with log targets and the written-out sum are the same number in each
    library: the curves of the three runs agree with each other."""
    data = _data(4)
    init = distillation_program(torch, *data, str(tmp_path / "t.pt"))["init"]
    runs = [distillation_program(minigrad, *data, str(tmp_path / "t.pt"), init=init, soft=soft)
            for soft in ("kldivloss", "log_target", "written_out")]
    for run in runs[1:]:
        np.testing.assert_allclose(run["soft_losses"], runs[0]["soft_losses"], rtol=1e-4)
