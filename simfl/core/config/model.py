"""Models: the classifiers clients train, built from the data set's shape.

A model config says which network to build; its size follows from the data set
(``Dataset.input_shape`` and the number of classes) when the run builds it, so nothing
here counts parameters (``simfl.train.models.param_shapes`` does, once, for both the
transfer size and the tensors). :meth:`Model.input_problem` says whether a model can
read a data set's samples at all; the task checks it when a scenario is made.
"""

from __future__ import annotations

from dataclasses import dataclass

from simfl.core.config.node import Choice, require
from simfl.core.config.papers import FEDAVG, MIFA

LENET = "LeCun et al., Gradient-Based Learning Applied to Document Recognition, Proc. IEEE 1998"
LEAF = "Caldas et al., LEAF: A Benchmark for Federated Settings, arXiv 1812.01097, 2018"


@dataclass(frozen=True)
class Model(Choice, point="models"):
    """A classifier, built for the data set's sample shape and number of classes."""

    def input_problem(self, input_shape: tuple[int, ...], tokens: bool) -> str | None:
        """Why this model cannot read samples of ``input_shape`` (None when it can);
        ``tokens`` is True when samples are integer token ids rather than numbers."""
        if tokens:
            return ("a model for sequences of token ids (char_lstm): this one reads feature "
                    "vectors and images")
        return None


def _image_problem(input_shape: tuple[int, ...], tokens: bool, min_side: int) -> str | None:
    if tokens or len(input_shape) != 3:
        what = "token ids" if tokens else f"samples of shape {tuple(input_shape)}"
        return (f"a model for the data set's {what}: this one needs images "
                "(channels, height, width), e.g. mnist5k or digits")
    if min(input_shape[1:]) < min_side:
        return (f"a model for {input_shape[1]}x{input_shape[2]} images: this one needs "
                f"images of at least {min_side}x{min_side} pixels")
    return None


@dataclass(frozen=True)
class Logreg(Model):
    """Multinomial logistic regression (one linear layer, softmax cross-entropy)."""

    kind = "logreg"
    paper = f"{MIFA} (logistic regression on MNIST)"


@dataclass(frozen=True)
class Mlp(Model):
    """Fully connected network with ReLU hidden layers."""

    kind = "mlp"
    paper = f"{FEDAVG} (2NN)"
    hidden: tuple[int, ...] = (100,)

    def validate(self) -> None:
        require(len(self.hidden) > 0 and all(h > 0 for h in self.hidden), "hidden",
                self.hidden, "a non-empty list of positive layer widths")


@dataclass(frozen=True)
class Cnn(Model):
    """FedAvg's CNN: two 5x5 convolutions (32, 64 channels), max-pooling, 512 dense units.

    Each convolution is followed by ReLU and 2x2 max-pooling; a dense layer of 512 ReLU
    units comes before the linear output layer. The convolutions pad by 2 pixels ("same"
    size), so only the pooling shrinks an image: 28x28 becomes 7x7 (1,663,370 parameters
    on MNIST, the count the paper gives) and 32x32x3 becomes 8x8. ``channels`` and
    ``hidden`` change the widths.
    """

    kind = "cnn"
    paper = f"{FEDAVG} (CNN)"
    channels: tuple[int, ...] = (32, 64)
    hidden: int = 512

    def validate(self) -> None:
        require(len(self.channels) > 0 and all(c > 0 for c in self.channels), "channels",
                self.channels, "a non-empty list of positive channel counts")
        require(self.hidden > 0, "hidden", self.hidden, "a positive number of units")

    def input_problem(self, input_shape: tuple[int, ...], tokens: bool) -> str | None:
        return _image_problem(input_shape, tokens, 2 ** len(self.channels))


@dataclass(frozen=True)
class Lenet5(Model):
    """LeNet-5: two 5x5 convolutions (6, 16 channels), max-pooling, dense 120 and 84 units.

    Each convolution is followed by ReLU and 2x2 max-pooling. The first convolution
    pads by 2 pixels and the second does not, so a 28x28 image reaches the dense layers
    as 16x5x5, as the original 32x32 input without padding does; a 32x32x3 image
    reaches them as 16x6x6. ReLU and max-pooling replace the original's scaled tanh and
    trainable subsampling, as in most federated benchmarks.
    """

    kind = "lenet5"
    paper = LENET

    def input_problem(self, input_shape: tuple[int, ...], tokens: bool) -> str | None:
        return _image_problem(input_shape, tokens, 12)


@dataclass(frozen=True)
class CharLstm(Model):
    """LEAF's Shakespeare next-character model: embedding 8, two LSTM layers of 256 units.

    Each token is embedded in ``embed`` numbers, ``layers`` stacked LSTM layers of
    ``hidden`` units read the sequence, and a linear layer maps the last step's output
    to logits over the characters (the data set's classes, 80 for Shakespeare; the same
    alphabet as the input tokens)."""

    kind = "char_lstm"
    paper = f"{LEAF} (Shakespeare LSTM)"
    embed: int = 8
    hidden: int = 256
    layers: int = 2

    def validate(self) -> None:
        for name in ("embed", "hidden", "layers"):
            require(getattr(self, name) > 0, name, getattr(self, name), "a positive integer")

    def input_problem(self, input_shape: tuple[int, ...], tokens: bool) -> str | None:
        if not tokens:
            return ("a model for the data set's feature vectors or images: char_lstm needs "
                    "sequences of character ids (e.g. a Shakespeare data set)")
        return None
