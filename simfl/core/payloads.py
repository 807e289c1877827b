"""Local rules' records: what the server sends a client with its model, and what comes back.

An aggregator sends each client a :class:`LocalPayload`; its class names the local rule
(each payload class with a ``kind`` registers it, listed by ``simfl list local_rules``)
and its ``result`` class, the :class:`LocalResult` the rule reports. Both read as
mappings too (:class:`Record`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import KeysView, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Iterator

from simfl.core.registry import Registry, registry


class Record(Mapping[str, Any]):
    """A frozen record that also reads as a mapping of its fields that are set (not None).

    The mapping view keeps code written against plain dicts working (``update.extra["t"]``,
    ``{**payload}``); new code reads the attributes.
    """

    def keys(self) -> KeysView[str]:
        return {f.name: None for f in dataclasses.fields(self)  # type: ignore[arg-type]
                if getattr(self, f.name) is not None}.keys()

    def __getitem__(self, key: str) -> Any:
        if key not in self.keys():
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self.keys())

    def __eq__(self, other: object) -> bool:
        """Field by field with a record of the same class; as a mapping with a plain one."""
        if isinstance(other, Record):
            return type(other) is type(self) and all(
                getattr(self, f.name) == getattr(other, f.name)
                for f in dataclasses.fields(self))  # type: ignore[arg-type]
        if isinstance(other, Mapping):
            return dict(self.items()) == dict(other.items())
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


@dataclass(frozen=True, eq=False, kw_only=True)
class LocalResult(Record):
    """What a local rule reports besides the model delta (``ClientUpdate.extra``).

    ``lr_scale`` is the factor of ``task.lr`` the job trained with, set only when the
    payload asked for one (the server's learning-rate schedule), so the server can
    normalise the update by the step size it was made with.
    """

    lr_scale: float | None = None


@dataclass(frozen=True, eq=False)
class ScaffoldResult(LocalResult):
    """SCAFFOLD's control-variate change c_i^+ - c_i, a dict like the parameters."""

    delta_c: Any = None


@dataclass(frozen=True, eq=False)
class CVaRResult(LocalResult):
    """The client's VaR level t after local training."""

    t: float = 0.0


@dataclass(frozen=True, eq=False, kw_only=True)
class LocalPayload(Record):
    """What an aggregator sends a client for its local rule (``client_payload``).

    Each local rule has one payload class, which registers the rule's name: a subclass
    with a ``kind`` class attribute (and ``result``, the class of what the rule reports)
    is listed by ``simfl list local_rules``. ``lr_scale`` (set by the server's
    learning-rate schedule, any rule) multiplies ``task.lr`` for the whole job.
    """

    kind: ClassVar[str]
    paper: ClassVar[str] = ""
    result: ClassVar[type[LocalResult]] = LocalResult
    _registry: ClassVar[Registry[Any]] = registry("local_rules")

    lr_scale: float | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "kind" in cls.__dict__:
            summary = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
            cls._registry.add(cls.kind, cls, summary, cls.paper)


@dataclass(frozen=True, eq=False)
class SgdPayload(LocalPayload):
    """Plain minibatch SGD from the model the client was sent (no payload needed)."""

    kind = "sgd"


@dataclass(frozen=True, eq=False)
class ScaledSgdPayload(LocalPayload):
    """SGD on the loss multiplied by ``loss_scale`` (weight decay is not scaled)."""

    kind = "scaled_sgd"
    paper = ("Yan et al., FedLaAvg, INFORMS J. Computing (arXiv 2002.07399): loss scaled by "
             "N n_i / n")
    loss_scale: float = 1.0


@dataclass(frozen=True, eq=False)
class ProxPayload(LocalPayload):
    """SGD on the loss plus the proximal term (mu/2) ||w - w_t||^2, w_t the start model."""

    kind = "prox"
    paper = "Li et al., FedProx, MLSys 2020, eq. 2"
    mu: float = 0.0


@dataclass(frozen=True, eq=False)
class ScaffoldPayload(LocalPayload):
    """Corrected SGD y -= lr (g - c_i + c); reports delta_c = c_i^+ - c_i (option II)."""

    kind = "scaffold"
    paper = "Karimireddy et al., SCAFFOLD, ICML 2020, Algorithm 1 (option II)"
    result = ScaffoldResult
    c: Any = None
    c_i: Any = None


@dataclass(frozen=True, eq=False)
class CVaRPayload(LocalPayload):
    """SGD on (model, t) of lam f + (1 - lam)(t + (f - t)_+ / alpha); reports the final t."""

    kind = "cvar"
    paper = "Theodoropoulos et al., arXiv 2309.14176 (risk-aware CVaR objective)"
    result = CVaRResult
    t: float = 0.0
    alpha: float = 1.0
    lam: float = 1.0
    lr_t: float = 0.0


def with_lr_scale(payload: Any, scale: float) -> Any:
    """``payload`` (None meaning plain SGD) asking for ``scale`` times ``task.lr``."""
    if payload is None:
        return SgdPayload(lr_scale=scale)
    if isinstance(payload, LocalPayload):
        return dataclasses.replace(payload, lr_scale=scale)
    return {**payload, "lr_scale": scale}  # a plain-dict payload
