"""Update compression (``server.compression``): how a client's update travels on the uplink.

A kind names a client-side encoder and its server-side decoder
(:mod:`simfl.algorithms.compression`) and counts the payload's bits exactly. The count
depends only on the sizes of the update's tensors and the kind's parameters, never on
the values, so the timing side knows each upload's size before anything is trained.
docs/compression.md gives every bit convention.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal, Sequence

from simfl.core.config.checks import positive, require
from simfl.core.config.node import Choice

#: bits of one float32 number (a norm, a scale, a value)
FLOAT_BITS = 32

QSGD = ("Alistarh et al., QSGD: Communication-Efficient SGD via Gradient Quantization and "
        "Encoding, NeurIPS 2017, Lemma 3.1")
TOP_K = ("Stich et al., Sparsified SGD with Memory, NeurIPS 2018 (top-k with error "
         "feedback)")
SIGN = ("Bernstein et al., signSGD: Compressed Optimisation for Non-Convex Problems, ICML "
        "2018 (majority vote); Karimireddy et al., Error Feedback Fixes SignSGD, ICML 2019 "
        "(scaled sign)")


def index_bits(d: int) -> int:
    """ceil(log2 d): the bits that name one of ``d`` coordinates (0 when d = 1)."""
    return (d - 1).bit_length()


@dataclass(frozen=True)
class Compression(Choice, point="compressions"):
    """What a client's model update becomes before its upload (``none``: sent exact).

    :meth:`bits` is the payload's exact size for an update whose tensors hold ``sizes``
    numbers each; the uplink carries it padded to whole bytes (:func:`upload_bytes`).
    """

    def bits(self, sizes: Sequence[int]) -> int:
        """Payload bits of an update of tensors with ``sizes`` entries each."""
        return FLOAT_BITS * sum(sizes)


@dataclass(frozen=True)
class NoCompression(Compression):
    """Uncompressed float32 updates (32 bits per number): the run is as without compression."""

    kind = "none"


@dataclass(frozen=True)
class Qsgd(Compression):
    """QSGD: stochastic, unbiased rounding of |v_i| / ||v|| to one of ``levels`` + 1 levels.

    Bits: a float32 norm, then per coordinate a sign bit and the level index in
    ceil(log2(levels + 1)) bits (fixed-length code, no Elias coding).
    """

    kind = "qsgd"
    paper = QSGD
    levels: int = 16

    def validate(self) -> None:
        positive(self, "levels")

    def bits(self, sizes: Sequence[int]) -> int:
        return FLOAT_BITS + sum(sizes) * (1 + index_bits(self.levels + 1))


@dataclass(frozen=True)
class TopK(Compression):
    """Top-k: send the k largest |v_i| (value and index), with error feedback by default.

    k = ``k`` if set, else floor(``fraction`` * d) (at least 1), over the whole update of
    d numbers. Bits: k * (32 + ceil(log2 d)). With ``error_feedback`` each client keeps
    what it did not send and adds it to its next update.
    """

    kind = "top_k"
    paper = TOP_K
    fraction: float = 0.01
    k: int | None = None
    error_feedback: bool = True

    def validate(self) -> None:
        require(0.0 < self.fraction <= 1.0, "fraction", self.fraction, "a share in (0, 1]")
        if self.k is not None:
            positive(self, "k")

    def kept(self, d: int) -> int:
        """How many of ``d`` coordinates are sent (the fraction read as the decimal it is
        written as, so 0.29 of 100 is 29)."""
        if self.k is not None:
            return min(self.k, d)
        return max(1, math.floor(Fraction(repr(self.fraction)) * d))

    def bits(self, sizes: Sequence[int]) -> int:
        d = sum(sizes)
        return self.kept(d) * (FLOAT_BITS + index_bits(d))


@dataclass(frozen=True)
class Sign(Compression):
    """signSGD: one bit per coordinate; ``scaled`` adds mean |v| per tensor, ``majority`` votes.

    ``scaled``: the server decodes sign(v) * mean|v| of each tensor (32 bits per tensor).
    ``majority``: no scale is sent; the aggregator's mean of the clients' signs is the
    vote, and the server moves each coordinate by ``server_step`` * sign(vote).
    """

    kind = "sign"
    paper = SIGN
    vote: Literal["scaled", "majority"] = "scaled"
    server_step: float = 0.001

    def validate(self) -> None:
        positive(self, "server_step")

    def bits(self, sizes: Sequence[int]) -> int:
        return sum(sizes) + (FLOAT_BITS * len(sizes) if self.vote == "scaled" else 0)


@dataclass(frozen=True)
class Float16(Compression):
    """Cast to IEEE half precision: 16 bits per number."""

    kind = "float16"

    def bits(self, sizes: Sequence[int]) -> int:
        return 16 * sum(sizes)


@dataclass(frozen=True)
class Int8(Compression):
    """Symmetric 8-bit integers: q = round(v / s), s = max|v| / 127 per tensor (32 bits)."""

    kind = "int8"

    def bits(self, sizes: Sequence[int]) -> int:
        return 8 * sum(sizes) + FLOAT_BITS * len(sizes)


def upload_bytes(bits: int) -> int:
    """Bytes an upload of ``bits`` payload bits occupies on the uplink (padded to a byte)."""
    return -(-bits // 8)
