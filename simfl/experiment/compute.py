"""The compute half of a training run: data on the device, model, executor, evaluation.

Torch lives here; timing-only runs never import this module's dependencies (the
:class:`~simfl.experiment.trainer.NullTrainer` stands in for the whole model side).
"""

from __future__ import annotations

from simfl.core.config import Scenario, Task
from simfl.core.errors import ConfigError
from simfl.core.rng import RngTree


class ModelCompute:
    """The compute half of a run: data, model, executor, evaluation (torch lives here)."""

    def __init__(self, scenario: Scenario, data, rngs: RngTree) -> None:
        import torch

        from simfl.train.batched import executor_class
        from simfl.train.evaluate import Evaluator
        from simfl.train.local import sample_loss
        from simfl.train.models import build_model

        device = _device(scenario.run.device, torch)
        task = scenario.task
        self.net = build_model(task.model, data.input_shape or data.n_features, data.n_classes)
        generator = torch.Generator().manual_seed(rngs.int_seed("model/init"))
        self.params = {k: v.to(device) for k, v in self.net.init(generator).items()}
        executor = executor_class(scenario.run.executor, self.net, device)
        self.asked_executor = scenario.run.executor
        self.executor = executor(self.net, data, task, rngs, device)
        self.evaluate = Evaluator(self.net, data.x_test, data.y_test, device,
                                  sample_loss(task.dataset))

    def executor_for(self, task: Task, data, rngs: RngTree):
        """Another executor of the kind this run chose, on its device, for ``task``."""
        return type(self.executor)(self.net, data, task, rngs, self.executor.device)

    def inline_executor_for(self, task: Task, data, rngs: RngTree):
        """An inline executor on this run's device: the one that takes a loss penalty."""
        from simfl.train.executor import InlineExecutor

        return InlineExecutor(self.net, data, task, rngs, self.executor.device)

    @property
    def device(self):
        """The torch device the model, data and evaluations live on."""
        return self.executor.device


def _device(name: str, torch):
    if name == "cuda" and not torch.cuda.is_available():
        raise ConfigError("run.device", name, "cpu or auto: no CUDA device is visible")
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    return torch.device(name)
