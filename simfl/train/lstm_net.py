"""The recurrent classifier (the character LSTM) as a pure function of its parameters."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from simfl.train.net import Params, Shapes, uniform_init

if TYPE_CHECKING:
    import torch


class LstmNet:
    """Token embedding, stacked LSTM layers, and a linear layer on the last step's output.

    Parameter names and gate order (input, forget, cell, output) are those of
    ``nn.LSTM``; the recurrence runs in ``torch.lstm``, the op ``nn.LSTM`` itself calls,
    with the parameters passed in (no module state). Initialisation follows PyTorch's
    defaults: N(0, 1) embeddings, Uniform(-1/sqrt(hidden), 1/sqrt(hidden)) for the LSTM
    and the output layer.
    """

    batching = None
    eval_rows = 1024

    def __init__(self, vocab: int, embed: int, hidden: int, layers: int, n_classes: int) -> None:
        self.vocab, self.embed, self.hidden, self.layers = vocab, embed, hidden, layers
        self.n_classes = n_classes

    def param_shapes(self) -> Shapes:
        shapes: Shapes = {"embed.weight": (self.vocab, self.embed)}
        n_in = self.embed
        for i in range(self.layers):
            shapes[f"lstm{i}.weight_ih"] = (4 * self.hidden, n_in)
            shapes[f"lstm{i}.weight_hh"] = (4 * self.hidden, self.hidden)
            shapes[f"lstm{i}.bias_ih"] = (4 * self.hidden,)
            shapes[f"lstm{i}.bias_hh"] = (4 * self.hidden,)
            n_in = self.hidden
        shapes["out.weight"] = (self.n_classes, self.hidden)
        shapes["out.bias"] = (self.n_classes,)
        return shapes

    def init(self, generator: "torch.Generator") -> Params:
        import torch

        shapes = self.param_shapes()
        bound = 1.0 / math.sqrt(self.hidden)
        params = uniform_init(shapes, {name: bound for name in shapes}, generator)
        params["embed.weight"] = torch.randn(shapes["embed.weight"], generator=generator)
        return params

    def forward(self, params: Params, x: "torch.Tensor") -> "torch.Tensor":
        import torch
        import torch.nn.functional as F

        h = F.embedding(x.long(), params["embed.weight"])  # [N, T, embed]
        flat = [params[f"lstm{i}.{kind}"] for i in range(self.layers)
                for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
        zeros = h.new_zeros(self.layers, len(h), self.hidden)
        out, _, _ = torch.lstm(h, (zeros, zeros), flat, True, self.layers, 0.0, False, False, True)
        return F.linear(out[:, -1], params["out.weight"], params["out.bias"])
