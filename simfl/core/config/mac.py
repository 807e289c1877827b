"""Medium access (MAC): how the clients share the uplink.

The kinds: no contention (``ideal``), time division (``tdma``), slotted ALOHA with
optional backoff (``slotted_aloha``), a relay that forwards some uploads (``relay``) and
a band shared by the active uploads (``ofdma``); IEEE 802.11 DCF (``csma_ca``) is in
:mod:`simfl.core.config.csma`. Each kind declares what it supports
(:class:`MacCapabilities`, its ``capabilities``), which validation and the choice of a
round's engine read instead of its name, and its rules against the rest of the network
(:meth:`Mac.check_in`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal

from simfl.core.config.checks import finite, positive, probability, require
from simfl.core.config.fading import Fading
from simfl.core.config.node import Choice, Node
from simfl.core.config.papers import RANDOM_ACCESS
from simfl.core.config.scheduler import scheduler_named

if TYPE_CHECKING:
    from simfl.core.config.network import Network


#: the device-round engines: SimPy processes (every kind runs there), chained event
#: callbacks, and one loop off the clock (:mod:`simfl.sim.rounds.engines`)
PROCESS, CALLBACKS, OFF_CLOCK = "process", "callbacks", "off_clock"
ENGINES = (PROCESS, CALLBACKS, OFF_CLOCK)


@dataclass(frozen=True)
class MacCapabilities:
    """What a MAC kind supports, declared on its config class.

    Config validation reads it (which server modes and aggregators a kind works with,
    which of its fields are per-client lists or need positions), and the simulation
    reads ``engines`` to choose how a round's device work runs. The defaults claim the
    least: a kind that declares nothing runs synchronous rounds on SimPy processes.

    Attributes
    ----------
    engines:
        The device-round engines whose results for this kind equal the processes' to
        the last bit (``process`` always; ``callbacks``, ``off_clock``).
    placed_engines:
        The engines whose results for this kind equal the processes' when a link gives
        each client its own airtime (the shared radio's links: each client's SNR,
        shadowing and fading); they replace ``engines`` then.
    async_modes:
        Contention can stay open for a whole run (``server.mode`` async or buffered).
    late_updates:
        An upload may outlive its round (``keep_late``, ``late_policy = "store"``).
    aircomp:
        The kind may stand aside for ``aircomp``'s analog slot (no medium of its own).
    capture:
        With ``network.sinr_threshold_db`` the strongest of a busy slot may capture it.
    per_client:
        Fields that hold one number or one per client (``task.n_clients`` of them).
    needs_positions:
        Fields that must stay null unless ``population.placement`` is set.
    """

    engines: frozenset[str] = frozenset({PROCESS})
    placed_engines: frozenset[str] = frozenset({PROCESS})
    async_modes: bool = False
    late_updates: bool = False
    aircomp: bool = False
    capture: bool = False
    per_client: tuple[str, ...] = ()
    needs_positions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Mac(Choice, point="macs"):
    """Medium access between the clients and the server."""

    capabilities: ClassVar[MacCapabilities] = MacCapabilities()

    def check_in(self, network: Network) -> None:
        """The rules between this MAC and the rest of ``network`` (errors name fields
        relative to it, ``mac.<field>``); none unless a kind has some."""


def kinds_that(claim: str) -> str:
    """The registered MAC kinds whose capabilities claim ``claim`` ("ideal or tdma")."""
    names = [entry.name for entry in Mac._registry
             if getattr(entry.obj.capabilities, claim)]
    return " or ".join(names) if names else "none"


@dataclass(frozen=True)
class IdealMac(Mac):
    """No contention: every client has its own link."""

    kind = "ideal"
    capabilities = MacCapabilities(engines=frozenset(ENGINES), async_modes=True,
                                   placed_engines=frozenset({PROCESS, OFF_CLOCK}),
                                   late_updates=True, aircomp=True)


def _per_client(node: Node, name: str) -> None:
    """``name`` is one probability for every client or a non-empty list of them."""
    probability(node, name)
    require(getattr(node, name) != (), name, (), "a probability or a non-empty list of them")


#: shortest and longest MAC slot (seconds): a microsecond to a few hours
MIN_SLOT_S, MAX_SLOT_S = 1e-6, 1e4
#: smallest non-zero ALOHA access probability (mean wait 1e9 slots)
MIN_ACCESS_PROB = 1e-9
#: largest ALOHA contention window (slots)
MAX_WINDOW = 2 ** 30


def _slot(node: Node, name: str = "slot_s") -> None:
    value = getattr(node, name)
    require(MIN_SLOT_S <= value <= MAX_SLOT_S, name, value,
            f"a slot length in [{MIN_SLOT_S:g}, {MAX_SLOT_S:g}] seconds")


@dataclass(frozen=True)
class TdmaMac(Mac):
    """Time division: one slot per invited client per frame, or equal bandwidth shares.

    ``mode = "slots"``: frames start when the round opens and hold one slot of
    ``slot_s`` per client that starts the round (in client-id order); a client's uplink
    transmits only inside its own slot, so an attempt of airtime A ready at time t ends
    when A seconds of its slots have elapsed after t. ``mode = "shared"``: the uplink's
    rate is split equally among the n clients that start the round (frequency division,
    fixed for the round), so every attempt's airtime is n times longer. Energy: with
    slots the radio transmits only in its own slots (the attempt's airtime at ``tx_w``)
    and draws ``idle_w`` while it waits for them, piecewise: a battery that empties
    while waiting dies at the time that profile gives. Shared, the radio transmits for
    the whole, n times longer, attempt at ``tx_w``: n x airtime x ``tx_w``. An energy
    per bit ``tx_j_per_bit`` is that of a bit at the link's full rate R: the radio then
    draws ``tx_j_per_bit`` x R while on, so a transfer costs the same given in watts or
    per bit (bits x J/bit in its slots; n x bits x J/bit shared). Assumptions:
    perfect synchronisation, no guard times, a slot left unused by a finished client is
    not reassigned, the shares are not re-divided when clients finish.
    """

    kind = "tdma"
    capabilities = MacCapabilities(engines=frozenset({PROCESS, CALLBACKS}),
                                   placed_engines=frozenset({PROCESS, OFF_CLOCK}))
    mode: Literal["slots", "shared"] = "slots"
    slot_s: float = 0.1

    def validate(self) -> None:
        positive(self, "slot_s")
        finite(self, "slot_s")
        _slot(self)


@dataclass(frozen=True)
class SlottedAlohaMac(Mac):
    """Slotted ALOHA access to the uplink, optionally with binary exponential backoff.

    Before its upload a client contends for access in slots of ``slot_s`` on a grid
    from t = 0, starting with the first slot that begins at or after the time it is
    ready (a slot beginning exactly then counts). With
    ``backoff = "none"`` client i transmits in each slot with probability
    ``access_prob`` (one number, or a list with one per client); with
    ``"binary_exponential"`` it waits U{0..CW-1} slots before each transmission, CW =
    min(2^k cw_min, cw_max) after k collisions. Each transmitter picks one of
    ``channels`` orthogonal access channels uniformly; a slot's channel carries a
    success iff exactly one client chose it (N p (1-p)^(N-1) successes per slot for N
    saturated clients and one channel). A client still contending when the round
    closes, or after ``max_attempts`` collided transmissions, is missing with reason
    ``collided``. Every contention transmission costs ``slot_s`` of airtime, drawn at
    the transmit power instead of the idle power of waiting.

    What a success grants depends on ``data_phase``. ``"parallel"`` (default): the
    access slots are a request channel and a success gives the client its own data
    resource, so its upload (with ARQ) takes its link airtime at the full rate at once,
    however many other granted clients upload at the same time (as when random access
    is followed by scheduled, orthogonal data transmissions). ``"serialised"``: the
    uploads share ``channels`` data channels, one upload attempt per channel at a time:
    each attempt (an ARQ retry included) takes the channel that is free first, in order
    of request, and the client waits for it at idle power. A client that leaves while
    queued (deadline, battery, offline) frees its place, but attempts already queued
    behind it keep their start times. Not modelled: capture effect, carrier sensing,
    interference between data transfers.

    A slot k ends at (k + 1) slot_s and counts iff that is at or before the deadline,
    compared exactly (an event at the deadline is on time).

    ``contention`` picks how the slots are simulated. ``"vectorised"`` (default): in a
    round where every contender's ready time is known when the round starts (ideal
    links with one rate, infinite energy, the parallel data phase, nobody leaving
    mid-round, no over-selection, no late uploads kept), the whole round's contention
    is resolved at once in numpy, idle slots skipped; other rounds fall back to
    ``"per_event"``: busy slot by busy slot, in the clock's order. The two follow the
    same rules with the same distributions, drawn in another order.
    """

    kind = "slotted_aloha"
    paper = ("Roberts, ALOHA packet system with and without slots and capture, ACM SIGCOMM "
             "CCR 5(2), 1975")
    capabilities = MacCapabilities(engines=frozenset(ENGINES), async_modes=True, capture=True,
                                   per_client=("access_prob",))
    access_prob: float | tuple[float, ...] = 0.1
    slot_s: float = 0.01
    channels: int = 1
    backoff: Literal["none", "binary_exponential"] = "none"
    cw_min: int = 2
    cw_max: int = 1024
    max_attempts: int | None = None
    data_phase: Literal["parallel", "serialised"] = "parallel"
    contention: Literal["per_event", "vectorised"] = "vectorised"

    def validate(self) -> None:
        _per_client(self, "access_prob")
        probs = self.access_prob if isinstance(self.access_prob, tuple) else (self.access_prob,)
        require(all(p == 0.0 or p >= MIN_ACCESS_PROB for p in probs), "access_prob",
                self.access_prob, f"0 or a probability in [{MIN_ACCESS_PROB:g}, 1]")
        positive(self, "slot_s", "channels", "cw_min", "max_attempts")
        finite(self, "slot_s")
        _slot(self)
        require(self.cw_max >= self.cw_min, "cw_max", self.cw_max,
                f"an integer >= cw_min = {self.cw_min}")
        require(self.cw_max <= MAX_WINDOW, "cw_max", self.cw_max,
                f"an integer <= {MAX_WINDOW} (2^30 slots)")
        require(self.channels <= MAX_CHANNELS, "channels", self.channels,
                f"an integer in 1..{MAX_CHANNELS:,} (each data channel is simulated)")


#: most slotted ALOHA channels (each data channel keeps its own queue)
MAX_CHANNELS = 10_000


@dataclass(frozen=True)
class RelayMac(Mac):
    """The Random Access Model: a relay forwards uploads under a policy the server never sees.

    Each round, when it opens, the relay draws which of the clients that start the
    round it will forward, from a stationary policy: ``bernoulli`` forwards client i
    with probability ``probs[i]`` independently; ``capacity`` forwards ``capacity`` of
    them drawn without replacement with weights ``probs`` (successive sampling, so the
    inclusion probabilities are not proportional to the weights in general);
    ``aloha`` forwards those heard in ``slots`` slots of slotted ALOHA with access
    probabilities ``probs`` (a client stops after its success). ``probs`` is one number
    or a list with one per client. Uploads travel client to relay over the uplink; the
    relay drops the others on arrival (reason ``collided``). The decision is hidden in
    the relay: only the outcomes reach the server. Not modelled: the relay-to-server
    hop (ideal, instantaneous), the time the ALOHA slots take, buffering at the relay.
    """

    kind = "relay"
    paper = f"{RANDOM_ACCESS} (Random Access Model)"
    capabilities = MacCapabilities(engines=frozenset({PROCESS, CALLBACKS}), per_client=("probs",))
    policy: Literal["bernoulli", "capacity", "aloha"] = "bernoulli"
    probs: float | tuple[float, ...] = 0.5
    capacity: int = 1
    slots: int = 1

    def validate(self) -> None:
        _per_client(self, "probs")
        positive(self, "capacity", "slots")


#: the most resource blocks a band may have
MAX_RESOURCE_BLOCKS = 100_000
#: shortest and longest scheduling interval (TTI) with selectivity: NR's shortest slot
#: is 1/32 ms; a second is far coarser than any scheduler's
MIN_TTI_S, MAX_TTI_S = 1e-5, 1.0


@dataclass(frozen=True)
class OfdmaMac(Mac):
    """A band shared by the uploads of a cell, reallocated at every start and finish.

    Each access point's band (``network.radio.bandwidth_hz``, or without a radio the
    uplink's rate as the band's capacity) is split among the uploads active in its cell.
    The split changes only when an upload starts or finishes (or leaves), so a round is a
    true discrete-event simulation: each upload keeps its remaining bits, and its rate on
    ``b`` Hz is ``b log2(1 + P g / (N0 b))`` (noise grows with the share). ``scheduler``:
    ``equal`` (processor sharing: equal shares), ``round_robin`` (whole resource blocks dealt
    in turn: equal time shares), ``proportional_fair`` (shares in proportion to a client's
    full-band rate over its throughput averaged with time constant ``pf_time_constant_s``),
    ``max_rate`` (the whole band to the best active client), ``min_latency`` (a split
    fixed when the round opens under which the round's clients finish together; a client
    that cannot finish by the deadline even with the whole band gets none, and is logged
    as ``band_refused``). ``resource_blocks``: the band's number of blocks, or null (0)
    for a continuous split. The radio transmits for the whole time it holds a share.
    ``downlink``: with ``shared`` (the default) unicast downloads share each access
    point's downlink band the same way, in equal shares among the cell's active
    downloads (whole blocks with ``resource_blocks``); a download on a fraction f of the
    band gets f times its link's full-band rate (the access point spreads its power over
    the band). ``private``: each download has a link of its own, as without ``ofdma``.
    ``interference``: ``none`` (the default) lets every cell reuse the band unheard by the
    others; ``average`` (needs ``network.radio``) raises each cell's uplink noise floor by
    the uploads active at the same time in the other cells, each spreading its received
    power over the whole band (frequency reuse 1): an upload of client k sees
    ``a_k / (1 + I/N0)`` where ``I`` is the interference density at its access point.
    ``reuse``: 1 (every cell has the whole band) or 3 (with three sectors per site, sector
    s of every site uses the third s of the band: each cell has a third, and only cells
    of the same third interfere).
    ``selectivity``: null (the default: every block of the band sees the client's mean
    SNR, split as above) or a fading law (``rayleigh``, ``rician``; ``none``: unit gains)
    drawn per resource block and TTI (needs ``network.radio`` and ``resource_blocks``):
    ``coherence_blocks`` adjacent blocks share one gain (1: independent blocks), and in
    time the law's ``coherence_s`` (0: a fresh gain every TTI; else block fading over
    windows of that length) or ``doppler_hz`` (Gauss-Markov with Jakes' correlation per
    TTI). The scheduler then gives each block of each TTI of ``tti_s`` seconds to one
    upload (:mod:`simfl.sim.mac.tti_band`).
    """

    kind = "ofdma"
    paper = ("Tse, Viswanath, Fundamentals of Wireless Communication, 2005, ch. 5-6; "
             "Shi et al., Joint device scheduling and resource allocation for "
             "latency constrained wireless federated learning, IEEE TWC 20(1), 2021")
    # the band follows the clock: processes; placed clients with the equal split and no
    # interference also off the clock (the band's own code on the loop's heap)
    capabilities = MacCapabilities(placed_engines=frozenset({PROCESS, OFF_CLOCK}))
    scheduler: str = "equal"  # a kind of :mod:`simfl.core.config.scheduler`
    resource_blocks: int | None = None
    pf_time_constant_s: float = 1.0
    downlink: Literal["shared", "private"] = "shared"
    interference: Literal["none", "average"] = "none"
    reuse: Literal[1, 3] = 1
    selectivity: Fading | None = None
    coherence_blocks: int = 1
    tti_s: float = 1e-3

    def check_in(self, network: Network) -> None:
        require(self.interference == "none" or network.radio is not None,
                "mac.interference", self.interference,
                "none without network.radio (interference needs the gains toward every "
                "access point)")
        hexagonal = network.cells.hexagonal
        require(self.reuse == 1 or (network.radio is not None and hexagonal is not None
                                    and hexagonal.sectors == 3), "mac.reuse", self.reuse,
                "1 unless network.radio is set and network.cells.hexagonal has 3 sectors "
                "(each sector takes its own third of the band)")
        require(self.selectivity is None or network.radio is not None, "mac.selectivity",
                self.selectivity.kind if self.selectivity is not None else None,
                "null without network.radio (a block's rate needs the client's SNR)")

    def validate(self) -> None:
        blocks = self.resource_blocks
        scheduler_named(self.scheduler)
        require(blocks is None or 0 <= blocks <= MAX_RESOURCE_BLOCKS, "resource_blocks",
                blocks,
                f"null, 0 (a continuous split) or an integer in [1, {MAX_RESOURCE_BLOCKS}]")
        positive(self, "pf_time_constant_s")
        finite(self, "pf_time_constant_s")
        require(not (blocks and self.scheduler == "min_latency"), "resource_blocks", blocks,
                "null or 0 with scheduler min_latency (its split is continuous)")
        require(MIN_TTI_S <= self.tti_s <= MAX_TTI_S, "tti_s", self.tti_s,
                f"a scheduling interval in [{MIN_TTI_S:g}, {MAX_TTI_S:g}] seconds")
        require(1 <= self.coherence_blocks <= MAX_RESOURCE_BLOCKS, "coherence_blocks",
                self.coherence_blocks, f"an integer in [1, {MAX_RESOURCE_BLOCKS}]")
        fading = self.selectivity
        if fading is None:
            return
        require(bool(blocks), "resource_blocks", blocks,
                "an integer >= 1 with selectivity (its gains are per resource block)")
        require(self.scheduler != "min_latency", "scheduler", self.scheduler,
                "a scheduler other than min_latency with selectivity (min_latency's split "
                "is continuous)")
        require(self.coherence_blocks <= (blocks or 0), "coherence_blocks",
                self.coherence_blocks, f"an integer in [1, resource_blocks = {blocks}]")
        require(fading.coherence_s == 0.0 or fading.coherence_s >= self.tti_s,
                "selectivity.coherence_s", fading.coherence_s,
                f"0 (a fresh gain every TTI) or a coherence time >= tti_s = {self.tti_s:g} s")
