"""The exchange model set written in PyTorch (see :mod:`onnxport_testkit.exchange`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from .exchange import H, Source


def _p(a: np.ndarray) -> nn.Parameter:
    return nn.Parameter(torch.from_numpy(np.ascontiguousarray(a)))


def _lin(w: np.ndarray, b: np.ndarray | None) -> nn.Linear:
    m = nn.Linear(*w.shape, bias=b is not None)
    m.weight = _p(w.T)
    if b is not None:
        m.bias = _p(b)
    return m


class MLP(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.l1, self.l2 = _lin(s["w1"], s["b1"]), _lin(s["w2"], s["b2"])

    def forward(self, x):
        return self.l2(torch.relu(self.l1(x)))


class CNN(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.c1 = nn.Conv2d(3, 4, 3, padding=1)
        self.c1.weight, self.c1.bias = _p(s["c1"]), _p(s["cb1"])
        self.bn = nn.BatchNorm2d(4)
        self.bn.weight, self.bn.bias = _p(s["gamma"]), _p(s["beta"])
        self.bn.running_mean.copy_(torch.from_numpy(s["mean"]))
        self.bn.running_var.copy_(torch.from_numpy(s["var"]))
        self.c2 = nn.Conv2d(4, 6, 3, padding=1)
        self.c2.weight, self.c2.bias = _p(s["c2"]), _p(s["cb2"])
        self.fc = _lin(s["fw"], s["fb"])

    def forward(self, x):
        y = torch.max_pool2d(torch.relu(self.bn(self.c1(x))), 2)
        y = torch.relu(self.c2(y)).mean(dim=(2, 3))
        return self.fc(y)


class Residual(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.a = nn.ModuleList([_lin(s[f"wa{i}"], s[f"ba{i}"]) for i in range(2)])
        self.b = nn.ModuleList([_lin(s[f"wb{i}"], s[f"bb{i}"]) for i in range(2)])

    def forward(self, x):
        for a, b in zip(self.a, self.b):
            x = x + b(torch.relu(a(x)))
        return x


class Encoder(nn.Module):
    def __init__(self, s):
        super().__init__()
        d = s["wq"].shape[0]
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.ln1.weight, self.ln1.bias = _p(s["ln1g"]), _p(s["ln1b"])
        self.ln2.weight, self.ln2.bias = _p(s["ln2g"]), _p(s["ln2b"])
        self.q, self.k, self.v, self.o = (_lin(s[n], None) for n in ("wq", "wk", "wv", "wo"))
        self.f1, self.f2 = _lin(s["w1"], s["b1"]), _lin(s["w2"], s["b2"])

    def forward(self, x):
        h = self.ln1(x)
        att = torch.softmax(self.q(h) @ self.k(h).transpose(1, 2) / float(np.sqrt(h.shape[-1])), dim=-1)
        x = x + self.o(att @ self.v(h))
        return x + self.f2(torch.relu(self.f1(self.ln2(x))))


class TiedDecoder(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.emb = nn.Embedding(*s["emb"].shape)
        self.emb.weight = _p(s["emb"])
        self.h = _lin(s["wh"], s["bh"])

    def forward(self, tokens):
        return torch.tanh(self.h(self.emb(tokens))) @ self.emb.weight.T  # output layer = the embedding


class LSTM(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.rnn = nn.LSTM(3, H, batch_first=True)
        self.rnn.weight_ih_l0.copy_(torch.from_numpy(s["wx"].T))
        self.rnn.weight_hh_l0.copy_(torch.from_numpy(s["wh"].T))
        self.rnn.bias_ih_l0.copy_(torch.from_numpy(s["b"]))
        # torch has a second (recurrent) bias: zero, and not trained, so the function and the
        # trainable count match the one-bias sources
        self.rnn.bias_hh_l0.zero_()
        self.rnn.bias_hh_l0.requires_grad_(False)
        self.fc = _lin(s["fw"], s["fb"])

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.fc(y[:, -1])


class ControlFlow(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.wa, self.wb, self.wl = _p(s["wa"]), _p(s["wb"]), _p(s["wl"])

    def forward(self, x):
        y = torch.cond(x.sum() > 0, lambda x: torch.tanh(x @ self.wa), lambda x: torch.sin(x @ self.wb), (x,))
        from torch._higher_order_ops.while_loop import while_loop

        i0 = torch.zeros((), dtype=torch.int64)

        def cond(i, y):
            return (i < 4) & (y.abs().sum() < 6.0)

        def body(i, y):
            return i + 1, y + torch.tanh(y @ self.wl)

        _, y = while_loop(cond, body, (i0, y))
        return y


MODELS = {"mlp": MLP, "cnn": CNN, "residual": Residual, "transformer": Encoder, "tied_decoder": TiedDecoder,
          "lstm": LSTM, "control_flow": ControlFlow}


def build(model: str, s: dict[str, np.ndarray], ins: tuple[np.ndarray, ...], count: int) -> Source:
    with torch.no_grad():
        m = MODELS[model](s).eval()
    args = tuple(torch.from_numpy(a.astype(np.int64) if a.dtype.kind == "i" else a) for a in ins)

    def run() -> list[np.ndarray]:
        with torch.no_grad():
            out = m(*args)
        return [o.numpy() for o in (out if isinstance(out, tuple) else (out,))]

    native = sum(p.numel() for p in m.parameters() if p.requires_grad)
    assert native == count, (model, native, count)
    return Source(model, "torch", m, args, {}, native, run)


def native_count(m: Any) -> int:
    return sum(p.numel() for p in m.parameters() if p.requires_grad)


def imported_count(m: Any) -> int:
    """Trainable values of an imported module."""
    return sum(p.numel() for p in m.parameters() if p.requires_grad)


def grad_step(m: Any, ins: list[np.ndarray]) -> tuple[float, float]:
    """The loss (mean square of the outputs) before and after one SGD step on ``m``."""
    args = [torch.from_numpy(a) for a in ins]
    params = [p for p in m.parameters() if p.requires_grad]
    opt = torch.optim.SGD(params, lr=0.1)

    def loss() -> torch.Tensor:
        out = m(*args)
        return sum((o.float() ** 2).mean() for o in (out if isinstance(out, (tuple, list)) else (out,)))

    before = loss()
    opt.zero_grad()
    before.backward()
    opt.step()
    with torch.no_grad():
        return float(before), float(loss())
