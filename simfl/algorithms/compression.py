"""Update compression: a client-side encoder and a server-side decoder per kind.

A :class:`Codec` is a pair of pure functions over explicit state, in the manner of Optax:

* ``encode(update, state, generator) -> (payload, bits, state)`` on the client: the
  update (tensors by parameter name), the client's own codec state (None before its
  first upload) and a torch generator of the client's named random stream; it returns
  the message, its exact size in bits and the client's next state;
* ``decode(payload) -> update`` on the server: the tensors the aggregator sees.

Only floating-point tensors are compressed; any other entry of an update (an integer
buffer) travels exact and is left out of the bit count. QSGD and top-k treat the
update's floating tensors as one vector of d numbers; ``sign`` (scaled) and ``int8``
scale each tensor. The bit counts are those of
:meth:`simfl.core.config.compression.Compression.bits` (docs/compression.md).

Torch is imported by the functions that compute, not by this module.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, NamedTuple

from simfl.core.config import compression as cfg
from simfl.core.registry import implementation_of, implements

#: an update: tensors by parameter name
Tensors = Mapping[str, Any]


class Codec(NamedTuple):
    """A compression kind: ``encode(update, state, generator) -> (payload, bits, state)``
    on the client, ``decode(payload) -> update`` on the server."""

    encode: Callable[[Tensors, Any, Any], tuple[Any, int, Any]]
    decode: Callable[[Any], dict[str, Any]]


class Flat(NamedTuple):
    """An update's floating tensors as one vector (``names``, ``shapes``), and the rest."""

    names: tuple[str, ...]
    shapes: tuple[tuple[int, ...], ...]
    exact: dict[str, Any]


class VectorPayload(NamedTuple):
    """A message of QSGD or top-k: the layout, and the encoded vector's parts."""

    layout: Flat
    parts: tuple[Any, ...]


class TensorPayload(NamedTuple):
    """A message of the per-tensor kinds: encoded tensor and scale by name, and the rest."""

    coded: dict[str, Any]
    scales: dict[str, float]
    exact: dict[str, Any]


def _flatten(update: Tensors) -> tuple[Any, Flat]:
    import torch

    floats = {k: v for k, v in update.items() if v.is_floating_point()}
    exact = {k: v for k, v in update.items() if k not in floats}
    vector = (torch.cat([v.reshape(-1) for v in floats.values()]) if floats
              else torch.zeros(0))
    return vector, Flat(tuple(floats), tuple(tuple(v.shape) for v in floats.values()), exact)


def _unflatten(vector: Any, layout: Flat) -> dict[str, Any]:
    out, start = {}, 0
    for name, shape in zip(layout.names, layout.shapes):
        size = 1
        for n in shape:
            size *= n
        out[name] = vector[start:start + size].reshape(shape)
        start += size
    return {**out, **layout.exact}


def _sizes(layout: Flat) -> list[int]:
    sizes = []
    for shape in layout.shapes:
        size = 1
        for n in shape:
            size *= n
        sizes.append(size)
    return sizes


def identity() -> Codec:
    """``none``: the update itself, 32 bits per number."""

    def encode(update: Tensors, state: Any, generator: Any) -> tuple[Any, int, Any]:
        _, layout = _flatten(update)
        return dict(update), cfg.NoCompression().bits(_sizes(layout)), state

    return Codec(encode, dict)


def qsgd(config: cfg.Qsgd) -> Codec:
    """QSGD with s = ``levels``: Q(v)_i = ||v|| sign(v_i) l_i / s, where l_i is
    floor(s |v_i| / ||v||) plus one with probability the fractional part (unbiased)."""
    s = config.levels

    def encode(update: Tensors, state: Any, generator: Any) -> tuple[Any, int, Any]:
        import torch

        v, layout = _flatten(update)
        norm = torch.linalg.vector_norm(v)
        scaled = v.abs() / norm * s if float(norm) > 0 else torch.zeros_like(v)
        floor = scaled.floor()
        u = torch.rand(v.shape, generator=generator, dtype=v.dtype).to(v.device)
        level = floor + (u < scaled - floor).to(v.dtype)
        parts = (norm, v < 0, level.to(torch.int32))
        return VectorPayload(layout, parts), config.bits(_sizes(layout)), state

    def decode(payload: VectorPayload) -> dict[str, Any]:
        norm, negative, level = payload.parts
        sign = 1.0 - 2.0 * negative.to(norm.dtype)
        return _unflatten(norm * sign * level.to(norm.dtype) / s, payload.layout)

    return Codec(encode, decode)


def top_k(config: cfg.TopK) -> Codec:
    """Top-k of v + e (e: the client's residual, with error feedback; else 0); the new
    residual is what was not sent: e' = v + e - sent."""

    def encode(update: Tensors, state: Any, generator: Any) -> tuple[Any, int, Any]:
        import torch

        v, layout = _flatten(update)
        if config.error_feedback and state is not None:
            v = v + state
        k = config.kept(v.numel())
        index = torch.topk(v.abs(), k, sorted=False).indices.sort().values
        values = v[index]
        residual = None
        if config.error_feedback:
            residual = v.clone()
            residual[index] = 0.0
        payload = VectorPayload(layout, (v.numel(), index, values))
        return payload, config.bits(_sizes(layout)), residual

    def decode(payload: VectorPayload) -> dict[str, Any]:
        import torch

        d, index, values = payload.parts
        dense = torch.zeros(d, dtype=values.dtype, device=values.device)
        dense[index] = values
        return _unflatten(dense, payload.layout)

    return Codec(encode, decode)


def _per_tensor(config: cfg.Compression, code: Callable[[Any], tuple[Any, float]],
                uncode: Callable[[Any, float], Any]) -> Codec:
    """A kind that codes each floating tensor on its own: ``code(v) -> (coded, scale)``,
    ``uncode(coded, scale) -> v``."""

    def encode(update: Tensors, state: Any, generator: Any) -> tuple[Any, int, Any]:
        coded, scales, exact, sizes = {}, {}, {}, []
        for name, v in update.items():
            if not v.is_floating_point():
                exact[name] = v
                continue
            coded[name], scales[name] = code(v)
            sizes.append(v.numel())
        return TensorPayload(coded, scales, exact), config.bits(sizes), state

    def decode(payload: TensorPayload) -> dict[str, Any]:
        return {**{name: uncode(c, payload.scales[name]) for name, c in payload.coded.items()},
                **payload.exact}

    return Codec(encode, decode)


def sign(config: cfg.Sign) -> Codec:
    """One bit per number, + for v >= 0; ``scaled`` decodes sign * mean|v| of the tensor,
    ``majority`` the unit sign (the server's vote, :func:`majority_vote`, sets the step)."""
    scaled = config.vote == "scaled"

    def code(v: Any) -> tuple[Any, float]:
        return v < 0, float(v.abs().mean()) if scaled else 1.0

    def uncode(negative: Any, scale: float) -> Any:
        return (1.0 - 2.0 * negative.float()) * scale

    return _per_tensor(config, code, uncode)


def float16(config: cfg.Float16) -> Codec:
    """IEEE half precision (round to nearest even); decoded back to float32."""
    import torch

    return _per_tensor(config, lambda v: (v.to(torch.float16), 1.0),
                       lambda c, scale: c.to(torch.float32))


def int8(config: cfg.Int8) -> Codec:
    """q = round(v / s) in [-127, 127] with s = max|v| / 127 per tensor; decoded q * s."""

    def code(v: Any) -> tuple[Any, float]:
        import torch

        scale = float(v.abs().max()) / 127.0 if v.numel() else 0.0
        if scale == 0.0:
            return torch.zeros_like(v, dtype=torch.int8), 0.0
        return torch.round(v / scale).clamp(-127, 127).to(torch.int8), scale

    def uncode(coded: Any, scale: float) -> Any:
        import torch

        return coded.to(torch.float32) * scale

    return _per_tensor(config, code, uncode)


# each built-in kind's codec, built as ``build(config)`` (``simfl.register`` adds more)
for _config, _build in ((cfg.NoCompression, lambda config: identity()), (cfg.Qsgd, qsgd),
                        (cfg.TopK, top_k), (cfg.Sign, sign), (cfg.Float16, float16),
                        (cfg.Int8, int8)):
    implements(_config, _build)


def build_codec(config: cfg.Compression) -> Codec:
    """The codec of ``server.compression``."""
    codec: Codec = implementation_of(config, "server.compression.kind")(config)
    return codec
