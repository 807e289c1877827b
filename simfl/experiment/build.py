"""Building a run's components from a Scenario: one frozen context, one builder each.

:func:`build_context` derives what every component is built from (the random-stream
tree, the data or only the clients' sizes, the population size, the model's size in
bytes, the learning-rate schedule, whether late uploads are kept); each builder then
takes that :class:`BuildContext` first and the already-built collaborators it needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import simpy

from simfl.algorithms import build_aggregator, build_sampler
from simfl.algorithms.async_rules import FedAsyncRule, FedBuffRule
from simfl.algorithms.compressed import compressed, with_vote
from simfl.algorithms.server_optimizers import Transform, build_server_optimizer
from simfl.core.config import AirComp, AsyncMode, BufferedMode, LrSchedule, Scenario, ServerMode
from simfl.core.config.compression import upload_bytes
from simfl.core.errors import ConfigError
from simfl.core.registry import registry
from simfl.core.rng import RngTree
from simfl.core.config.hierarchy import edge_work
from simfl.experiment.devices import client_speeds
from simfl.experiment.edges import tier_arguments, with_edges
from simfl.experiment.payload import upload_bits
from simfl.experiment.probe import RunProbe
from simfl.experiment.round_policy import build_resources
from simfl.experiment.trainer import NullTrainer, Trainer
from simfl.metrics.rundir import write_csv
from simfl.sim.availability.models import build_availability
from simfl.sim.energy.battery import build_energy_source
from simfl.sim.links.channel import Links, build_link
from simfl.sim.mac.aircomp import build_aircomp_access
from simfl.sim.mac.kinds import build_mac
from simfl.sim.radio.broadcast import Broadcast
from simfl.sim.radio.capture import air_of
from simfl.sim.radio.fading import build_fading
from simfl.sim.radio.link import build_radio_link
from simfl.sim.radio.mobility import STILL, Mover, build_mover
from simfl.sim.radio.propagation import build_radio_map
from simfl.sim.radio.radio_map import RadioMap
from simfl.sim.availability.session_membership import SessionOnline
from simfl.sim.hierarchy.simulation import TieredSimulation
from simfl.sim.simulation import Simulation

#: client-side training rules (the built-ins and any registered plug-in)
LOCAL_RULES = registry("local_rules")


@dataclass(frozen=True, eq=False)
class BuildContext:
    """What every component of a run is built from.

    ``data`` is the federated data set, or None in a timing-only run that needs no
    samples (then ``n_samples`` comes from the partition's size model alone).
    """

    scenario: Scenario
    rngs: RngTree
    data: Any
    n_samples: np.ndarray
    model_bytes: int
    upload_bits: int | None = None  # one compressed upload's payload (None: model_bytes)

    @property
    def upload_bytes(self) -> int:
        """Bytes of one upload on the uplink (the model's, or the compressed payload's)."""
        return self.model_bytes if self.upload_bits is None else upload_bytes(self.upload_bits)

    @property
    def n_clients(self) -> int:
        return self.scenario.task.n_clients

    @property
    def clients_per_round(self) -> int:
        return self.scenario.server.clients_per_round

    @property
    def lr_schedule(self) -> LrSchedule:
        return self.scenario.server.lr_schedule

    @property
    def keep_late(self) -> bool:
        """Whether uploads that land after their round closed are kept and delivered."""
        return self.scenario.server.algorithm.wants_late

    @property
    def tiered(self) -> bool:
        """Whether edge servers stand between the clients and the server (HierFAVG)."""
        return self.scenario.server.hierarchy is not None

    @property
    def trains(self) -> bool:
        return not self.scenario.run.timing_only


def check_local_rule(scenario: Scenario) -> None:
    """A training run needs the local rule its aggregator relies on."""
    algorithm = scenario.server.algorithm
    if not scenario.run.timing_only and algorithm.local_rule not in LOCAL_RULES:
        raise ConfigError("server.algorithm.kind", algorithm.kind,
                          "an aggregator whose local rule exists "
                          f"({', '.join(LOCAL_RULES.names())}): the "
                          f"{algorithm.local_rule!r} local rule is not implemented yet "
                          "(timing-only runs work)")


def build_context(scenario: Scenario) -> BuildContext:
    """The run's random streams, data (when anything needs samples) and client sizes."""
    from simfl.train.data import build_data, client_sizes

    scenario = edge_work(scenario)  # HierFAVG's kappa1 local rounds per edge round
    rngs = RngTree(scenario.seed)
    task, run = scenario.task, scenario.run
    # timing-only runs need only each client's size (the partition's size model)
    sessions = scenario.population.sessions  # label groups need the samples, even timing-only
    split = sessions if sessions is not None and sessions.split_labels else None
    availability = scenario.population.availability  # label-based models need the labels
    data = (None if run.timing_only and split is None and not availability.needs_labels
            else build_data(task, rngs, split))
    n_samples = client_sizes(task, rngs) if data is None else data.n_samples
    model_bytes = scenario.network.model_bytes or _model_bytes(task)
    return BuildContext(scenario, rngs, data, n_samples, model_bytes, upload_bits(scenario))


def build_online(ctx: BuildContext):
    """Who is online when: the availability model, wrapped by the sessions table if any."""
    availability = ctx.scenario.population.availability
    label_counts = None
    if availability.needs_labels:
        from simfl.train.probe import label_histograms

        label_counts = label_histograms(ctx.data)
    online = build_availability(availability, ctx.n_clients, ctx.rngs, ctx.n_samples,
                                label_counts)
    sessions = ctx.scenario.population.sessions
    return online if sessions is None else SessionOnline(online, sessions, ctx.n_clients)


def build_simulation(ctx: BuildContext, online) -> Simulation:
    """The timing half of the run: devices, links, MAC, batteries, the round protocol."""
    scenario, rngs = ctx.scenario, ctx.rngs
    task, net_cfg, server = scenario.task, scenario.network, scenario.server
    speeds, compute_w = client_speeds(scenario, rngs)
    env = simpy.Environment()
    links, radio_map, mobility = build_links(scenario, rngs)
    energy = build_energy_source(task.n_clients, scenario.population.battery,
                                 scenario.population.energy, rngs,
                                 _nominal_rate_bps(net_cfg.uplink))
    energy.power.compute_w_by_client = compute_w
    if radio_map is not None:  # an amplifier's draw follows each client's radio power
        energy.power.radiated_dbm = radio_map.client_tx_power_dbm
    tiers = tier_arguments(scenario)  # edge servers: the rounds of TieredSimulation
    sim = (TieredSimulation if tiers else Simulation)(
        **tiers, rngs=rngs, n_samples=ctx.n_samples,
        work_samples=np.asarray(task.work_samples(ctx.n_samples), dtype=float),
        samples_per_s=speeds,
        online=online,
        links=links, radio_map=radio_map, mobility=mobility,
        model_bytes=ctx.model_bytes, arq_max_attempts=net_cfg.arq_max_attempts,
        clients_per_round=server.clients_per_round, overcommit=server.overcommit,
        deadline_s=server.deadline_s, keep_events=scenario.run.events, battery=energy,
        mac=build_access(scenario, env, rngs, energy.charge_transmissions, radio_map),
        keep_late=ctx.keep_late, env=env, upload_bits=ctx.upload_bits,
        broadcast=(Broadcast(ctx.model_bytes, _nominal_rate_bps(net_cfg.downlink), radio_map)
                   if net_cfg.downlink_mode == "broadcast" else None))
    sim.resources = build_resources(scenario, sim, speeds)  # server.policy's decisions
    return sim


def build_access(scenario: Scenario, env: simpy.Environment, rngs: RngTree, charge,
                 radio_map: RadioMap | None):
    """The medium access of ``scenario``'s uploads: the configured MAC, or the single
    analog slot of over-the-air aggregation when the aggregator is ``aircomp``;
    ``charge`` books each transmission's energy."""
    n_clients, net_cfg, server = scenario.task.n_clients, scenario.network, scenario.server
    if isinstance(server.algorithm, AirComp):
        return build_aircomp_access(server.algorithm, env, rngs, n_clients, server.deadline_s,
                                    net_cfg.radio and net_cfg.radio.bandwidth_hz, radio_map)
    return build_mac(net_cfg.mac, env, rngs, n_clients, charge, air=air_of(net_cfg, radio_map))


def build_links(scenario: Scenario, rngs: RngTree) -> tuple[Links, RadioMap | None, Mover]:
    """The two links, from the channels or, with ``network.radio``, from geometry (then
    also the radio map: positions, access points and mean path gains, and the mover that
    moves them; both directions fade independently, each with its own memory)."""
    net_cfg = scenario.network
    if net_cfg.radio is None:
        links = Links(build_link(net_cfg.downlink, rngs), build_link(net_cfg.uplink, rngs))
        return links, None, STILL
    n_clients = scenario.task.n_clients
    radio_map, propagation = build_radio_map(scenario.population.placement, net_cfg.cells,
                                             net_cfg.radio, n_clients, rngs)
    threshold, fading = net_cfg.sinr_threshold_db, net_cfg.radio.fading
    down, up = (build_radio_link(net_cfg.radio.link, channel, radio_map, direction,
                                 build_fading(fading, direction, rngs, n_clients), threshold,
                                 rngs)
                for channel, direction in ((net_cfg.downlink, "downlink"),
                                           (net_cfg.uplink, "uplink")))
    mover = build_mover(scenario.population.mobility, radio_map, propagation, rngs,
                        scenario.run.mobility_csv)
    return Links(down, up), radio_map, mover


def write_mobility(out_dir: Path, mover: Mover) -> None:
    """Write ``mobility.csv`` into ``out_dir`` when the run asked for it (``run.mobility_csv``)."""
    table = mover.table()
    if table is not None:
        write_csv(out_dir / "mobility.csv", list(table), zip(*table.values()))


def build_trainer(ctx: BuildContext, online) -> Trainer:
    """The model side of the run; the null trainer when the run is timing-only."""
    if not ctx.trains:
        return NullTrainer()
    from simfl.experiment.compute import ModelCompute
    from simfl.experiment.eval_schedule import EvalSchedule
    from simfl.experiment.model_step import ModelStep
    from simfl.experiment.session_model import NoSessions, SessionRun
    from simfl.experiment.training import ModelTrainer

    scenario, data = ctx.scenario, ctx.data
    compute = ModelCompute(scenario, data, ctx.rngs)
    server = scenario.server
    aggregator = compressed(build_aggregator(server.algorithm, scenario.task.lr,
                                             ctx.clients_per_round, ctx.lr_schedule),
                            server.compression, ctx.rngs)
    cfg = scenario.population.sessions
    sessions = (NoSessions(compute) if cfg is None else
                SessionRun(cfg, online, compute, data, scenario.task, ctx.rngs, ctx.n_samples))
    step = ModelStep(server, compute.params, aggregator, compute.executor, sessions,
                     ctx.n_samples, build_optimizer(ctx), build_server_rule(server.mode),
                     getattr(compute.net, "buffer_names", ()))
    schedule = EvalSchedule(scenario.run, sessions,
                            lambda params: compute.evaluate.class_accuracy(params, data.n_classes))
    return with_edges(scenario, ModelTrainer(compute, step, schedule, sessions, data,
                                             scenario.task.dataset, ctx.rngs))


def build_server_rule(mode: ServerMode) -> FedAsyncRule | FedBuffRule | None:
    """The server rule of an asynchronous mode (``server.mode``); None in sync mode,
    where the aggregator steps once per round."""
    if isinstance(mode, BufferedMode):
        return FedBuffRule(mode.buffer_size, mode.server_lr)
    if isinstance(mode, AsyncMode):
        return FedAsyncRule(mode.alpha)
    return None


def build_optimizer(ctx: BuildContext) -> Transform | None:
    """The server optimiser (``server.optimizer``); None when it is the identity."""
    server = ctx.scenario.server
    return with_vote(server.compression, build_server_optimizer(server.optimizer))


def build_probe(ctx: BuildContext, sim: Simulation, trainer: Trainer) -> RunProbe:
    """The exchanges samplers may ask for, timed by ``sim``, answered by ``trainer``."""
    return RunProbe(sim, ctx.data, trainer)


def build_client_sampler(ctx: BuildContext, probe: RunProbe):
    """The server's client sampler (``server.sampler``)."""
    return build_sampler(ctx.scenario.server.sampler, probe, ctx.rngs, ctx.clients_per_round)


def _nominal_rate_bps(channel) -> float:
    """The bit rate of ``channel``'s rate model at its configured SNR, without fading."""
    from simfl.preflight.airtime import nominal_rate_bps

    return nominal_rate_bps(channel)


def _model_bytes(task) -> int:
    """The float32 size of the model the task builds (from its parameter shapes; no torch)."""
    from simfl.train.models import model_bytes

    return model_bytes(task.model, task.dataset.input_shape(), task.dataset.shape()[1])
