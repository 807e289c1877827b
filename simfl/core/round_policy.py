"""The contract of a per-round radio resource policy: what it sees and what it decides.

When a synchronous round opens, the server's sampler picks its candidates; a policy
(``server.policy``) then sees each candidate's :class:`RoundState` and returns an
:class:`Allocation`: the clients it invites (a subset of the candidates) and, per invited
client, any of a fraction of its cell's band (OFDMA), a transmit power and a CPU clock
(DVFS). The simulation runs the round with those decisions; :func:`check_allocation`
turns a decision it cannot run into one :class:`~simfl.core.errors.ConfigError` line.
Decisions hold for the round they are made in.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, NoReturn, Protocol, Sequence

import numpy as np

from simfl.core.errors import ConfigError

#: how far above 1 a cell's shares may sum (rounding of fractions computed in floats)
SHARE_SLACK = 1e-9


@dataclass(frozen=True)
class RadioState:
    """The shared radio as the policy sees it (arrays aligned with the candidates).

    Client k's rate on ``b`` Hz at transmit power P (W) is
    ``b log2(1 + P g_k / (noise_w_per_hz b))`` with g_k = 10^(gain_db_k / 10): the mean
    path gain (fast fading is not known in advance).
    """

    x_m: np.ndarray
    y_m: np.ndarray
    ap: np.ndarray
    gain_db: np.ndarray
    tx_power_dbm: np.ndarray      # each candidate's power now (after power control)
    max_tx_power_dbm: np.ndarray  # the most it may transmit (network.radio.tx_power_dbm)
    mean_snr_db: np.ndarray       # over the whole band at tx_power_dbm
    bandwidth_hz: float
    noise_w_per_hz: float


@dataclass(frozen=True)
class Dvfs:
    """The candidates' CPUs when the population sets a clock (``population.compute.cpu_hz``):
    a round's work of D samples takes ``cycles_per_sample * D / f`` seconds at clock f and
    costs ``kappa * cycles_per_sample * D * f^2`` joules; ``max_cpu_hz`` is each client's
    clock, the fastest it may run."""

    max_cpu_hz: np.ndarray
    work_samples: np.ndarray
    cycles_per_sample: float
    kappa: float

    @property
    def cycles(self) -> np.ndarray:
        """Each candidate's cycles for one round of local training."""
        return np.asarray(self.cycles_per_sample * self.work_samples)


@dataclass(frozen=True)
class RoundState:
    """What the server knows of a round's candidates when it opens (arrays aligned with
    ``clients``, sorted ids).

    ``compute_s`` is each candidate's time for the round's training at its own clock,
    ``download_s`` and ``upload_s`` the model's download and one upload at the link's
    nominal full-band rate (``uplink_bps``; no losses, no sharing). ``tx_w`` is the
    power a transmitting radio draws (``population.energy``), ``battery_j`` the energy
    stored (inf: no battery), ``energy_used_j`` the energy spent on round work so far,
    ``last_round`` the last round whose update was received (-1: never). ``ofdma``
    says whether band shares can be given (``resource_blocks``: the band's blocks, 0 for
    a continuous split).
    """

    round: int
    t_s: float
    deadline_s: float
    clients: np.ndarray
    n_samples: np.ndarray
    compute_s: np.ndarray
    download_s: np.ndarray
    uplink_bps: np.ndarray
    upload_bits: float
    tx_w: float
    battery_j: np.ndarray
    energy_used_j: np.ndarray
    last_round: np.ndarray
    ofdma: bool = False
    resource_blocks: int = 0
    radio: RadioState | None = None
    dvfs: Dvfs | None = None

    @property
    def upload_s(self) -> np.ndarray:
        """One upload's airtime at each candidate's full-band rate."""
        return np.asarray(self.upload_bits / self.uplink_bps)

    def cells(self) -> np.ndarray:
        """Each candidate's cell (its access point; 0 without a radio)."""
        return (np.zeros(self.clients.size, dtype=np.int64) if self.radio is None
                else np.asarray(self.radio.ap))


@dataclass(frozen=True)
class Allocation:
    """A policy's decisions for one round.

    ``selected``: the clients invited (candidates only). Per selected client, any of:
    ``share`` (a fraction of its cell's band, OFDMA: the cell's shares sum to at most 1),
    ``resource_blocks`` (whole blocks instead, with ``resource_blocks`` set),
    ``tx_power_dbm`` (at most the radio's cap) and ``cpu_hz`` (DVFS: in (0, its clock]).
    A round with shares gives one to every selected client.
    """

    selected: Sequence[int]
    share: Mapping[int, float] = field(default_factory=dict)
    resource_blocks: Mapping[int, int] = field(default_factory=dict)
    tx_power_dbm: Mapping[int, float] = field(default_factory=dict)
    cpu_hz: Mapping[int, float] = field(default_factory=dict)

    def shares(self, blocks: int) -> dict[int, float]:
        """Each selected client's fraction of its band (from blocks when given so)."""
        if self.resource_blocks:
            return {int(c): int(n) / blocks for c, n in self.resource_blocks.items()}
        return {int(c): float(f) for c, f in self.share.items()}


class RoundPolicy(Protocol):
    """Decides a round's invitees and their resources from the candidates' state."""

    def decide(self, state: RoundState) -> Allocation: ...


def _fail(name: str, value: Any, allowed: str) -> NoReturn:
    raise ConfigError(f"server.policy: {name}", value, allowed)


def check_allocation(state: RoundState, allocation: Allocation) -> None:
    """Refuse what the round cannot run: one :class:`ConfigError` naming the decision,
    its value and what is allowed."""
    known = set(state.clients.tolist())
    selected = [int(c) for c in allocation.selected]
    for client in selected:
        if client not in known:
            _fail("selected", client, f"candidates of round {state.round} only "
                  f"({sorted(known)[:10]}{' ...' if len(known) > 10 else ''})")
    if len(set(selected)) != len(selected):
        _fail("selected", selected, "each client at most once")
    chosen = set(selected)
    for name in ("share", "resource_blocks", "tx_power_dbm", "cpu_hz"):
        extra = [c for c in getattr(allocation, name) if int(c) not in chosen]
        if extra:
            _fail(f"{name}[{extra[0]}]", getattr(allocation, name)[extra[0]],
                  "decisions for selected clients only")
    _check_band(state, allocation, selected)
    _check_power(state, allocation)
    _check_clock(state, allocation)


def _check_band(state: RoundState, allocation: Allocation, selected: list[int]) -> None:
    if not (allocation.share or allocation.resource_blocks):
        return
    if not state.ofdma:
        _fail("share", dict(allocation.share or allocation.resource_blocks),
              "no band shares unless network.mac.kind = ofdma")
    if allocation.share and allocation.resource_blocks:
        _fail("resource_blocks", dict(allocation.resource_blocks), "shares or blocks, not both")
    if allocation.resource_blocks:
        if not state.resource_blocks:
            _fail("resource_blocks", dict(allocation.resource_blocks),
                  "fractions (share) with a continuous band (network.mac.resource_blocks unset)")
        for client, n in allocation.resource_blocks.items():
            if not (isinstance(n, (int, np.integer)) and 0 <= n <= state.resource_blocks):
                _fail(f"resource_blocks[{client}]", n,
                      f"a whole number of blocks in [0, {state.resource_blocks}]")
    else:
        for client, f in allocation.share.items():
            if not (isinstance(f, (float, int, np.floating)) and 0.0 <= f <= 1.0):
                _fail(f"share[{client}]", f, "a fraction of the band in [0, 1]")
    shares = allocation.shares(state.resource_blocks or 1)
    missing = [c for c in selected if c not in shares]
    if missing:
        _fail(f"share[{missing[0]}]", None, "a share for every selected client")
    cells = dict(zip(state.clients.tolist(), state.cells().tolist()))
    totals: dict[int, float] = {}
    for client, f in shares.items():
        totals[cells[client]] = totals.get(cells[client], 0.0) + f
    for cell, total in sorted(totals.items()):
        if total > 1.0 + SHARE_SLACK:
            _fail("share", {c: f for c, f in shares.items() if cells[c] == cell},
                  f"shares summing to at most 1 in each cell (cell {cell} sums to {total:.6g})")


def _check_power(state: RoundState, allocation: Allocation) -> None:
    if not allocation.tx_power_dbm:
        return
    if state.radio is None:
        _fail("tx_power_dbm", dict(allocation.tx_power_dbm),
              "no transmit powers without network.radio")
    caps = dict(zip(state.clients.tolist(), state.radio.max_tx_power_dbm.tolist()))
    for client, p in allocation.tx_power_dbm.items():
        cap = caps[int(client)]
        if not (isinstance(p, (float, int, np.floating)) and not math.isnan(p) and p <= cap):
            _fail(f"tx_power_dbm[{client}]", p,
                  f"a power of at most {cap:g} dBm (network.radio.tx_power_dbm), or -inf: silent")


def _check_clock(state: RoundState, allocation: Allocation) -> None:
    if not allocation.cpu_hz:
        return
    if state.dvfs is None:
        _fail("cpu_hz", dict(allocation.cpu_hz),
              "no CPU clocks unless population.compute.cpu_hz is set (DVFS)")
    caps = dict(zip(state.clients.tolist(), state.dvfs.max_cpu_hz.tolist()))
    for client, f in allocation.cpu_hz.items():
        cap = caps[int(client)]
        if not (isinstance(f, (float, int, np.floating)) and 0.0 < f <= cap):
            _fail(f"cpu_hz[{client}]", f, f"a clock in (0, {cap:.6g}] Hz (the client's own)")
