"""How a radio link turns an attempt's SINR into a rate and a loss (``network.radio.link``).

``shannon`` (the default) runs an attempt at the capacity of its SINR, with the outage
rule of ``network.sinr_threshold_db``. ``nr`` adapts the rate as a 5G NR link does: a
modulation and coding scheme (MCS) of 3GPP TS 38.214 table 5.1.3.1-1 chosen from the
mean SINR for a target block error rate, a block error drawn at the SINR the attempt
actually gets, and hybrid ARQ (HARQ) retransmissions with chase combining.
"""

from __future__ import annotations

from dataclasses import dataclass

from simfl.core.config.checks import finite, require
from simfl.core.config.node import Choice

#: most HARQ transmissions of one block accepted (NR has at most 32 HARQ processes and
#: configures a few retransmissions; beyond this the combined SINR only grows)
MAX_HARQ = 32


@dataclass(frozen=True)
class RadioLinkModel(Choice, point="radio_links"):
    """How an attempt's SINR on the shared radio becomes its rate and its loss."""


@dataclass(frozen=True)
class ShannonLink(RadioLinkModel):
    """The capacity of the attempt's SINR, B log2(1 + SINR), with the threshold's outage
    rule (an attempt below ``network.sinr_threshold_db`` is sent at R(threshold) and lost)."""

    kind = "shannon"
    paper = "Shannon, A mathematical theory of communication, BSTJ 27, 1948"


@dataclass(frozen=True)
class NrLink(RadioLinkModel):
    """5G NR link adaptation: MCS from the mean SINR, block errors at the faded SINR, HARQ.

    The transmitter knows the mean SINR (path loss, shadowing and power; not the fade of
    the attempt) and picks the highest MCS of TS 38.214 table 5.1.3.1-1 whose BLER there
    is at most ``target_bler`` (MCS 0 when none is). The rate is
    (1 - ``overhead``) x spectral efficiency x bandwidth; ``overhead`` (default 0) is the
    share of the resources spent on reference signals and control. Each transmission of a
    block is lost with the BLER of the combined SINR it has reached; up to ``max_harq``
    transmissions, each adding its faded SINR (chase combining). A block lost after the
    last one is a lost attempt for the ARQ above.
    """

    kind = "nr"
    paper = ("3GPP TS 38.214 V17, table 5.1.3.1-1 (MCS index table 1, 64QAM); BLER curves "
             "fitted to the AWGN NR tables of NVIDIA Sionna 2.2 (Apache-2.0)")
    target_bler: float = 0.1
    max_harq: int = 4
    overhead: float = 0.0

    def validate(self) -> None:
        finite(self, "target_bler", "overhead")
        require(0.0 < self.target_bler < 1.0, "target_bler", self.target_bler,
                "a block error rate in (0, 1)")
        require(1 <= self.max_harq <= MAX_HARQ, "max_harq", self.max_harq,
                f"a number of HARQ transmissions in [1, {MAX_HARQ}]")
        require(0.0 <= self.overhead < 1.0, "overhead", self.overhead,
                "a share of the resources in [0, 1)")
