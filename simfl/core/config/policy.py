"""Per-round radio resource policies: who of the sampler's candidates takes part in a
round, and with which share of the band, transmit power and CPU clock.

The policy is asked when a round opens, after the sampler (``server.sampler``) has
picked its candidates; it sees each candidate's state
(:class:`~simfl.core.round_policy.RoundState`) and returns an
:class:`~simfl.core.round_policy.Allocation`. ``none`` (the default) invites the
sampler's picks as they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from simfl.core.config.node import Choice, positive, require


@dataclass(frozen=True)
class Policy(Choice, point="policies"):
    """What a round's invitees get: a selection among the sampler's candidates and, per
    selected client, a band share, a transmit power or a CPU clock.

    ``needs_band``: the kind gives band shares, so it needs ``network.mac.kind = ofdma``.
    """

    needs_band: ClassVar[bool] = False


@dataclass(frozen=True)
class NoPolicy(Policy):
    """No policy: the sampler's picks are invited and the MAC and devices decide the rest."""

    kind = "none"


@dataclass(frozen=True)
class FedCS(Policy):
    """FedCS: the most candidates whose update and sequential uploads fit the deadline.

    Greedy rule (Nishio & Yonetani, Algorithm 2): uploads go one at a time, each at the
    client's full-band rate, and a client may start its upload once its model is
    downloaded and its update computed. Starting from nobody, add the candidate that
    lengthens the schedule the least; keep it if the round (slowest download plus the
    schedule) still ends within ``server.deadline_s`` times ``deadline_fraction``.
    """

    kind = "fedcs"
    paper = ("Nishio, Yonetani, Client Selection for Federated Learning with Heterogeneous "
             "Resources in Mobile Edge, IEEE ICC 2019")
    deadline_fraction: float = 1.0

    def validate(self) -> None:
        positive(self, "deadline_fraction")
        require(self.deadline_fraction <= 1.0, "deadline_fraction", self.deadline_fraction,
                "a fraction of the deadline in (0, 1]")


@dataclass(frozen=True)
class MinEnergy(Policy):
    """Band shares (and DVFS clocks) of least round energy under the deadline.

    Every selected client must finish download, compute and upload by the deadline. Its
    energy is its radio's transmit energy (transmit power x upload time on its share)
    plus, with DVFS (``population.compute.cpu_hz``), kappa c D f^2 at the slowest clock
    f that still meets the deadline. The shares solve the convex problem by bisection on
    its Lagrange multiplier (docs/policies.md derives it). Candidates are admitted in the
    order of the least band they need while the needed shares fit in the band. Needs
    ``network.mac.kind = ofdma``.
    """

    kind = "min_energy"
    needs_band = True
    paper = ("Yang et al., Energy Efficient Federated Learning over Wireless Communication "
             "Networks, IEEE TWC 20(3), 2021 (the problem; simfl solves a reduced form)")
