"""A user's ``torch.nn.Module`` as a model: its state as a ``{name: tensor}`` dict.

:class:`TorchNet` runs the module the ``torch_module`` config's factory makes through
``torch.func.functional_call``, so it trains and evaluates any version of the state
without copying modules, as the built-in models do (:mod:`simfl.train.models`).

The state the run federates is the module's parameters and its floating-point buffers
(BatchNorm's running mean and variance), under their ``state_dict`` names. Only the
parameters get gradients (:attr:`TorchNet.trainable`); the buffers change in training
as the module changes them (in train mode) and are averaged with the aggregator's
weights like any other entry, and kept out of the server optimiser's step. Integer
buffers (BatchNorm's ``num_batches_tracked``) are counters: they travel as floating-point
numbers (:attr:`TorchNet.counters`), so they are averaged like the rest (the global
count is the weighted mean of the clients' counts) and ``model.pt`` holds them rounded
back to their integer type. With ``local_buffers`` each client keeps the buffers its last job ended
with (:attr:`TorchNet.client_buffers`, checkpointed) and starts its next job from
them; its upload still carries them, so the global model that evaluation scores holds
their aggregate.

Training runs the module in train mode (Dropout on, BatchNorm on batch statistics),
evaluation in eval mode, so a score does not depend on the evaluation batch size.
Inputs reach the module in the data set's shape (``input_shape``), not flattened.
Dropout's draws come from a torch generator seeded from the job's own stream
(:meth:`TorchNet.randomness`), so runs stay reproducible.
"""

from __future__ import annotations

import contextlib
import math
from typing import TYPE_CHECKING, Any, Iterator

from simfl.core.errors import ConfigError
from simfl.train.module_checks import check_gradients, check_parameters, run_error
from simfl.train.net import Params, Shapes

if TYPE_CHECKING:
    import torch


class TorchNet:
    """The module ``cfg.factory(input_shape, n_classes)`` makes, run functionally.

    ``batching`` is ``"stacked"`` (``torch.func.vmap`` over the clients' stacked
    parameters) for modules without buffers and None (one job at a time) for modules
    with buffers: BatchNorm in train mode updates its running statistics in place,
    which vmap cannot do for a stack of clients.
    """

    #: test samples per forward pass of an evaluation: a module may be convolutional, and
    #: the activations of 512 CIFAR-sized images through two convolutions take ~0.2 GB
    eval_rows = 128

    def __init__(self, cfg: Any, input_shape: tuple[int, ...], n_classes: int) -> None:
        self.factory_path = cfg.factory
        self.factory = cfg.make()
        self.input_shape = tuple(input_shape)
        self.n_classes = n_classes
        self.local_buffers = bool(cfg.local_buffers)
        self.module = self._make(0)
        self.trainable = tuple(name for name, _ in self.module.named_parameters())
        check_parameters(self.module, self.factory_path, self.trainable)
        buffers = dict(self.module.named_buffers())
        saved = self.module.state_dict()  # persistent buffers only
        self.buffer_names = tuple(name for name in buffers if name in saved)
        #: integer buffers (counters such as num_batches_tracked) and their own dtype: they
        #: travel as floating-point numbers, so the aggregator can average them
        self.counters = {name: buffers[name].dtype for name in self.buffer_names
                         if not buffers[name].is_floating_point()}
        self.batching = None if buffers else "stacked"
        self.client_buffers: dict[int, Params] = {}
        self._check_forward()

    def _make(self, seed: int) -> Any:
        import torch

        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            try:
                module = self.factory(self.input_shape, self.n_classes)
            except (Exception, SystemExit) as err:  # sys.exit() in the factory is an error too
                raise self._error(f"calling it with ({self.input_shape}, {self.n_classes}) "
                                  "failed", err) from None
        if not isinstance(module, torch.nn.Module):
            raise ConfigError("task.model.factory", self.factory_path, "a factory that returns "
                              f"a torch.nn.Module (it returned a {type(module).__name__})")
        return module

    def _check_forward(self) -> None:
        """One line, not a traceback, when the module cannot read two samples."""
        import torch

        state = {k: v.detach() for k, v in self.module.state_dict().items()}
        first: BaseException | None = None
        for dtype in (torch.float32, torch.int64):  # numbers, or token ids
            try:
                with torch.no_grad():
                    out = self.forward(state, torch.zeros((2, math.prod(self.input_shape)),
                                                          dtype=dtype))
                break
            except (Exception, SystemExit) as err:
                first = first or err
        else:
            assert first is not None
            raise self._error(f"its module fails on a batch of shape (2, "
                              f"{', '.join(map(str, self.input_shape))})", first)
        if tuple(out.shape) != (2, self.n_classes):
            raise ConfigError("task.model.factory", self.factory_path, "a module that returns "
                              f"[batch, {self.n_classes}] logits (it returned "
                              f"{list(out.shape)} for a batch of 2)")
        check_gradients(self, state, dtype)

    def _error(self, what: str, err: BaseException) -> ConfigError:
        reason = str(err).strip().splitlines()[0] if str(err).strip() else ""
        return ConfigError("task.model.factory", self.factory_path, "a factory whose module "
                           f"reads the data set's samples ({what}: {type(err).__name__}"
                           f"{': ' + reason if reason else ''})")

    def param_shapes(self) -> Shapes:
        """The federated state's names and shapes: parameters, then buffers."""
        state = self.module.state_dict()
        return {name: tuple(state[name].shape) for name in (*self.trainable, *self.buffer_names)
                if name in state}

    def init(self, generator: "torch.Generator") -> Params:
        """A fresh module's state: the factory run with torch seeded from ``generator``."""
        import torch

        seed = int(torch.randint(0, 2**62, (1,), generator=generator))
        state = self._make(seed).state_dict()
        return {name: state[name].detach().to(torch.get_default_dtype()) if name in self.counters
                else state[name].detach().clone() for name in self.param_shapes()}

    def forward(self, params: Params, x: "torch.Tensor") -> "torch.Tensor":
        """Logits of ``x`` (flattened samples) in eval mode."""
        self.module.train(False)
        return self._call(params, x)

    def train_forward(self, params: Params, x: "torch.Tensor") -> "torch.Tensor":
        """Logits of ``x`` in train mode; the module updates buffers in ``params`` in place."""
        self.module.train(True)
        return self._call(params, x)

    def _call(self, params: Params, x: "torch.Tensor") -> "torch.Tensor":
        from torch.func import functional_call

        state = dict(params)
        for name in self.buffer_names:  # never differentiated, whoever asks
            if name in state and state[name].requires_grad:
                state[name] = state[name].detach()
        try:
            return functional_call(self.module, state, (x.reshape(-1, *self.input_shape),))
        except Exception as err:  # the user's module may fail in any way
            raise run_error(self, x, err) from None

    def stacked_forward(self, params: Params, x: "torch.Tensor") -> "torch.Tensor":
        """Logits ``[K, B, classes]`` of K clients' stacked parameters on their batches
        ``x`` ``[K, B, features]`` in train mode (``torch.func.vmap``; no buffers)."""
        from torch.func import functional_call, vmap

        self.module.train(True)

        def one(p: Params, xb: "torch.Tensor") -> "torch.Tensor":
            return functional_call(self.module, p, (xb.reshape(-1, *self.input_shape),))

        try:
            return vmap(one, randomness="different")(params, x)  # type: ignore[no-any-return]
        except Exception as err:  # the user's module may fail in any way
            raise run_error(self, x, err, " (clients stacked by run.executor = 'batched', "
                                  "torch.func.vmap)") from None

    @contextlib.contextmanager
    def randomness(self, seed: int) -> Iterator[None]:
        """Torch's default generators seeded with ``seed`` for a block (Dropout's draws),
        and given back as they were afterwards."""
        import torch

        devices = [torch.cuda.current_device()] if torch.cuda.is_initialized() else []
        with torch.random.fork_rng(devices=devices):
            torch.manual_seed(seed)
            yield

    def client_start(self, client: int, base: Params) -> Params:
        """The state ``client`` trains from: ``base``, with its own buffers if it keeps them."""
        own = self.client_buffers.get(client) if self.local_buffers else None
        return base if own is None else {**base, **own}

    def keep(self, client: int, local: Params) -> None:
        """Remember the buffers ``client``'s job ended with (``local_buffers`` only)."""
        if self.local_buffers and self.buffer_names:
            self.client_buffers[client] = {k: local[k].detach().clone() for k in self.buffer_names}

    def state_dict(self, params: Params) -> dict[str, "torch.Tensor"]:
        """``params`` as the module's ``state_dict``, on the CPU (counters rounded back to
        their integer type)."""
        out = {}
        for name, own in self.module.state_dict().items():
            value = params[name].detach().cpu() if name in params else own
            if name in self.counters:
                value = value.round().to(self.counters[name])
            out[name] = value.clone()
        return out
