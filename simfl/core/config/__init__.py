"""The scenario tree: frozen, validated dataclasses with units in field names."""

from simfl.core.config.network import (Channel, ContinuousGilbertElliottChannel, Distance,
                                       ErasureChannel, FixedRate, GilbertElliottChannel, IdealChannel, IdealMac, Mac, Network,
                                       Rate, RayleighChannel, RelayMac, OfdmaMac, ShannonRate,
                                       SlottedAlohaMac, TdmaMac, CsmaCaMac)
from simfl.core.config.node import Choice, Node
from simfl.core.config.availability import (Always, Availability, Bernoulli, Diurnal, Ideal,
                                            LessDataFirst, LogNormal, Markov, MifaAdversarial,
                                            MoreDataFirst, SinLogNormal, Trace, YCycle, YMaxFirst)
from simfl.core.config.energy import Amplifier, Battery, Charging, Energy
from simfl.core.config.population import Compute, Population
from simfl.core.config.run import Run
from simfl.core.config.sessions import (Average, Continuous, Previous, SessionInit, Sessions,
                                        Similarity)
from simfl.core.config.scenario import Scenario, apply_overrides, parse_override
from simfl.core.config.scripts import load_scenario
from simfl.core.config.server import (Aggregator, ConstantLr, CVaR, ExponentialLr, FedAR,
                                      FedAvg, FedAvgIS, FedAvgS, FedAvgSWait, FedLaAvg, FedProx,
                                      FedVARP, InverseRoundLr, LrSchedule, Mifa, PolynomialLr,
                                      Scaffold, Server)
from simfl.core.config.aircomp import AirComp
from simfl.core.config.server import AsyncMode, BufferedMode, ServerMode, SyncMode
from simfl.core.config.server import (FedAdagrad, FedAdam, FedAvgM, FedYogi, NoServerOptimizer,
                                      ServerOptimizer, ServerSgd)
from simfl.core.config.compression import (Compression, Float16, Int8, NoCompression, Qsgd,
                                           Sign, TopK)
from simfl.core.config.sampler import (AllAvailable, FedGS, LongestAbsent, Md, PowerOfChoice,
                                       Sampler, Uniform, WaitGroup)
from simfl.core.config.dataset import (Blobs, Cifar10, Cifar100, Dataset, Digits, Idx, Leaf,
                                       Mnist5k, Npz, Quadratic, Synthetic)
from simfl.core.config.model import CharLstm, Cnn, Lenet5, Logreg, Mlp, Model
from simfl.core.config.torch_module import TorchModule
from simfl.core.config.task import Dirichlet, Iid, LabelBlocks, Native, Partition, Shards, Task
from simfl.core.config.fading import Fading, NoFading, RayleighFading, RicianFading
from simfl.core.config.placement import (ConstantVelocity, DiscPlacement, FilePlacement,
                                         GridPlacement, Mobility, Placement, PppPlacement,
                                         RandomWaypoint, Static)
from simfl.core.config.cells import Cells, Hexagonal
from simfl.core.config.radio import (ChannelInversion, FixedPower, FractionalPower, FreeSpace,
                                     LogDistance, PathLoss, PowerControl, Radio,
                                     TruncatedInversion)
from simfl.core.config.radio_link import NrLink, RadioLinkModel, ShannonLink
from simfl.core.config.scripted import ScriptedAvailability, ScriptedErasureChannel, ScriptedMac
from simfl.core.config.tr38901 import Inh, Rma, Tr38901, Uma, Umi
from simfl.core.config.placement import HexagonalPlacement
from simfl.core.config.scheduler import (EqualShare, MaxRate, MinLatency, ProportionalFair,
                                         RoundRobin, Scheduler)

__all__ = [
    "AirComp", "Compression", "Float16", "Int8", "NoCompression", "Qsgd", "Sign", "TopK",
    "ConstantLr", "ExponentialLr", "InverseRoundLr", "LrSchedule", "PolynomialLr",
    "Aggregator", "AllAvailable", "Always", "Availability", "Bernoulli", "Diurnal", "Ideal",
    "LessDataFirst", "LogNormal", "Markov", "MifaAdversarial", "MoreDataFirst", "SinLogNormal",
    "Trace", "YCycle", "YMaxFirst", "Blobs", "Channel",
    "Choice", "Compute", "Dataset", "Digits", "Dirichlet", "Distance", "ErasureChannel", "FedAR",
    "FedAvg", "FedAvgIS", "FedAvgS", "FedAvgSWait", "FedLaAvg", "FedVARP", "FixedRate", "GilbertElliottChannel", "ContinuousGilbertElliottChannel",
    "IdealChannel", "IdealMac", "Iid", "LabelBlocks", "Logreg", "Mac", "Mifa", "Mlp", "Model", "Native",
    "Network", "Node", "Partition", "Population", "Rate", "RayleighChannel", "Run", "Sampler",
    "Scaffold", "Scenario", "Server", "ShannonRate", "Shards", "Synthetic", "Task", "Uniform",
    "apply_overrides", "load_scenario", "parse_override",
    "Amplifier", "Battery", "Charging", "Energy",
    "Average", "Continuous", "Previous", "SessionInit", "Sessions", "Similarity",
    "FedGS", "LongestAbsent", "Md", "PowerOfChoice", "WaitGroup",
    "RelayMac", "SlottedAlohaMac", "TdmaMac", "OfdmaMac", "CsmaCaMac",
    "CVaR", "FedProx", "Quadratic",
    "Mnist5k",
    "Cifar10", "Cifar100", "Idx", "Leaf", "Npz", "Inh", "Rma", "Tr38901", "Uma", "Umi",
    "Hexagonal", "HexagonalPlacement",
    "ScriptedAvailability", "ScriptedErasureChannel", "ScriptedMac",
    "CharLstm", "Cnn", "Lenet5", "TorchModule",
    "AsyncMode", "BufferedMode", "ServerMode", "SyncMode",
    "FedAdagrad", "FedAdam", "FedAvgM", "FedYogi", "NoServerOptimizer", "ServerOptimizer",
    "ServerSgd",
    "Fading", "NoFading", "RayleighFading", "RicianFading", "NrLink", "RadioLinkModel",
    "ShannonLink",
    "ConstantVelocity", "DiscPlacement", "FilePlacement", "GridPlacement", "Mobility",
    "Placement", "PppPlacement", "RandomWaypoint", "Static",
    "Cells", "ChannelInversion", "FixedPower", "FreeSpace", "LogDistance", "PathLoss",
    "PowerControl", "Radio", "TruncatedInversion", "Scheduler", "FractionalPower",
    "EqualShare", "RoundRobin", "ProportionalFair", "MaxRate", "MinLatency",
]
