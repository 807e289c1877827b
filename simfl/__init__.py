"""simfl: a discrete-event simulator of federated learning over unreliable networks.

A scenario script builds a :class:`Scenario` from the config classes exported here;
``simfl run`` (or :func:`run`) simulates it and writes a run directory. Every config
class a scenario needs is importable from ``simfl`` itself; the extension points'
base classes (``Aggregator``, ``Sampler``, ``Channel``, ...) are exported for type hints
and for defining new kinds, which :func:`register` gives an implementation
(:mod:`simfl.plugins`).
"""

from simfl.core.config import (
    # the tree's sections
    Scenario, Task, Population, Compute, Energy, Amplifier, Battery, Charging, Sessions, Network,
    Distance, Server, Run,
    # extension points (base classes)
    Aggregator, Availability, Channel, Dataset, Mac, Model, Partition, Rate, Sampler,
    SessionInit,
    # task: datasets, partitions, models
    Blobs, Digits, Mnist5k, Quadratic, Synthetic, Dirichlet, Iid, LabelBlocks, Native, Shards,
    Logreg, Mlp,
    Cifar10, Cifar100, Idx, Leaf, Npz,
    Cnn, Lenet5, CharLstm, TorchModule,
    # population: availability models and session initialisers
    Always, Bernoulli, Diurnal, Ideal, LessDataFirst, LogNormal, Markov, MifaAdversarial,
    MoreDataFirst, SinLogNormal, Trace, YCycle, YMaxFirst,
    Average, Continuous, Previous, Similarity,
    # network: channels, rates, MACs
    ErasureChannel, GilbertElliottChannel, ContinuousGilbertElliottChannel, IdealChannel,
    RayleighChannel, FixedRate,
    ShannonRate, IdealMac, RelayMac, SlottedAlohaMac, TdmaMac, OfdmaMac, CsmaCaMac,
    # the shared radio: placement, mobility, radio, cells, path loss, power control, fading
    NoFading, RayleighFading, RicianFading, Fading, NrLink, RadioLinkModel, ShannonLink,
    DiscPlacement, PppPlacement, GridPlacement,
    FilePlacement, Placement, Static, ConstantVelocity, RandomWaypoint, Mobility, Cells, Radio,
    LogDistance, FreeSpace, PathLoss, FixedPower, ChannelInversion, TruncatedInversion,
    FractionalPower, PowerControl, Uma, Umi, Rma, Inh, Hexagonal, HexagonalPlacement, Scheduler,
    EqualShare, RoundRobin, ProportionalFair, MaxRate, MinLatency,
    # scripted kinds (tests and worked examples)
    ScriptedAvailability, ScriptedErasureChannel, ScriptedMac,
    # server: aggregators and samplers
    AirComp, CVaR, FedAR, FedAvg, FedAvgIS, FedAvgS, FedAvgSWait, FedLaAvg, FedProx, FedVARP,
    Mifa, Scaffold,
    ConstantLr, ExponentialLr, InverseRoundLr, LrSchedule, PolynomialLr,
    ServerOptimizer, NoServerOptimizer, ServerSgd, FedAvgM, FedAdam, FedYogi, FedAdagrad,
    Compression, NoCompression, Qsgd, TopK, Sign, Float16, Int8,
    AllAvailable, FedGS, LongestAbsent, Md, PowerOfChoice, Uniform, WaitGroup,
    AsyncMode, BufferedMode, ServerMode, SyncMode,
    # loading and overriding scenarios
    apply_overrides, load_scenario, parse_override)
from simfl.core.errors import ConfigError, SimflError
from simfl.core.records import (CVaRPayload, CVaRResult, LocalPayload, LocalResult, ProxPayload,
                                ScaffoldPayload, ScaffoldResult, ScaledSgdPayload, SgdPayload)
from simfl.plugins import load_plugins, register
from simfl.core.config.augment import Augment
from simfl.core.config.dataset import ArrayData, Arrays
from simfl.core.config.local_optimizer import (Adam, AdamW, ConstantStep, CosineStep,
                                               LocalOptimizer, Sgd, StepDecay, StepSchedule,
                                               WarmupStep)
from simfl.core.config.policy import FedCS, MinEnergy, NoPolicy, Policy
from simfl.core.round_policy import Allocation, RoundState

__version__ = "0.1.0"


def run(scenario: Scenario, out_dir=None, progress=None):
    """Simulate ``scenario``; returns a RunResult (run directory, summary, outcomes).
    The run folder gets a ``provenance.json`` naming this process's command line."""
    import sys
    import time

    from simfl.experiment import run_scenario
    from simfl.metrics.rundir import write_provenance

    started_at = time.time()
    result = run_scenario(scenario, out_dir, progress)
    write_provenance(result.out_dir, sys.argv, started_at, None)
    return result


def resume(run_dir, progress=None):
    """Continue the stopped run in ``run_dir`` from its latest checkpoint
    (``run.checkpoint_every_rounds``); returns a RunResult. See ``simfl resume``."""
    import sys
    import time

    from simfl.experiment import resume_run
    from simfl.metrics.rundir import write_provenance

    started_at = time.time()
    result = resume_run(run_dir, progress)
    write_provenance(result.out_dir, sys.argv, started_at, None)
    return result


def sweep(scenario, seeds=None, grid=None, set=None, out=None, jobs=1, engine="local",
          scheduler=None, quiet=True, command=None):
    """Run a campaign (every grid point times every seed, skipping runs already done);
    returns a SweepReport. See :func:`simfl.campaign.sweep`."""
    from simfl.campaign import sweep as run_sweep

    return run_sweep(scenario, seeds=seeds, grid=grid, set=set, out=out, jobs=jobs,
                     engine=engine, scheduler=scheduler, quiet=quiet, command=command)


def results(campaign):
    """A campaign's runs as one table: a pandas DataFrame if pandas is installed, else a
    list of dicts. See :func:`simfl.campaign.results`."""
    from simfl.campaign import results as read_results

    return read_results(campaign)


#: the bases a plug-in's implementation may subclass (and the refusals a MAC's transmit
#: answers), imported only when asked for (the local rules' hooks work on torch tensors;
#: the network's on simpy)
_IMPLEMENTATION_BASES = {"LocalRule": "simfl.train.rules", "IdealAccess": "simfl.sim.mac.access",
                         "MacBase": "simfl.sim.mac.access",
                         "GAVE_UP": "simfl.sim.mac.protocol",
                         "LOST_ON_LINK": "simfl.sim.mac.protocol",
                         "Link": "simfl.sim.links.channel",
                         "BandSplit": "simfl.sim.mac.band_split"}


def __getattr__(name: str):
    if name in _IMPLEMENTATION_BASES:
        import importlib

        return getattr(importlib.import_module(_IMPLEMENTATION_BASES[name]), name)
    raise AttributeError(f"module 'simfl' has no attribute {name!r}")


__all__ = [
    "Scenario", "Task", "Population", "Compute", "Energy", "Amplifier", "Battery", "Charging",
    "Sessions",
    "Network", "Distance", "Server", "Run",
    "Aggregator", "Availability", "Channel", "Dataset", "Mac", "Model", "Partition", "Rate",
    "Sampler", "SessionInit",
    "Blobs", "Digits", "Mnist5k", "Quadratic", "Synthetic", "Dirichlet", "Iid", "Native",
    "Cifar10", "Cifar100", "Idx", "Leaf", "Npz",
    "Shards", "LabelBlocks", "Logreg", "Mlp", "Cnn", "Lenet5", "CharLstm", "TorchModule",
    "Always", "Bernoulli", "Diurnal", "Ideal", "LessDataFirst", "LogNormal", "Markov",
    "MifaAdversarial", "MoreDataFirst", "SinLogNormal", "Trace", "YCycle", "YMaxFirst",
    "Average", "Continuous", "Previous", "Similarity",
    "ErasureChannel", "GilbertElliottChannel", "ContinuousGilbertElliottChannel", "IdealChannel",
    "RayleighChannel", "FixedRate",
    "ShannonRate", "IdealMac", "RelayMac", "SlottedAlohaMac", "TdmaMac", "OfdmaMac", "CsmaCaMac",
    "ScriptedAvailability", "ScriptedErasureChannel", "ScriptedMac",
    "NoFading", "RayleighFading", "RicianFading", "Fading", "NrLink", "RadioLinkModel",
    "ShannonLink", "DiscPlacement", "PppPlacement",
    "GridPlacement", "FilePlacement", "Placement", "Static", "ConstantVelocity",
    "RandomWaypoint", "Mobility", "Cells", "Radio", "LogDistance", "FreeSpace", "PathLoss",
    "FixedPower", "ChannelInversion", "TruncatedInversion", "FractionalPower", "PowerControl", "Uma", "Umi",
    "Rma", "Inh", "Hexagonal", "HexagonalPlacement", "Scheduler",
    "EqualShare", "RoundRobin", "ProportionalFair", "MaxRate", "MinLatency",
    "AirComp", "CVaR", "FedAR", "FedAvg", "FedAvgIS", "FedAvgS", "FedAvgSWait", "FedLaAvg", "FedProx",
    "FedVARP", "Mifa",
    "Scaffold", "AllAvailable", "FedGS", "LongestAbsent", "Md", "PowerOfChoice", "Uniform",
    "WaitGroup", "ConstantLr", "ExponentialLr", "InverseRoundLr", "LrSchedule",
    "PolynomialLr",
    "ServerOptimizer", "NoServerOptimizer", "ServerSgd", "FedAvgM", "FedAdam", "FedYogi",
    "FedAdagrad",
    "Compression", "NoCompression", "Qsgd", "TopK", "Sign", "Float16", "Int8",
    "apply_overrides", "load_scenario", "parse_override",
    "LocalPayload", "LocalResult", "LocalRule", "IdealAccess", "MacBase", "GAVE_UP",
    "LOST_ON_LINK", "Link", "BandSplit",
    "SgdPayload", "ScaledSgdPayload", "ProxPayload",
    "ScaffoldPayload", "CVaRPayload", "ScaffoldResult", "CVaRResult", "register", "load_plugins",
    "ConfigError", "SimflError", "run", "resume", "sweep", "results",
    "LocalOptimizer", "Sgd", "Adam", "AdamW", "ArrayData", "Arrays", "Augment",
    "StepSchedule", "ConstantStep", "WarmupStep", "StepDecay", "CosineStep",
]
