"""The contract of every registered compression kind (``server.compression.kind``).

compressions  the kind builds from its defaults (or its declared case) and has a codec.
              ``encode`` is pure (the update and the client's state never mutated, the
              same answer for the same generator); it reports exactly the bits its
              config's ``bits(sizes)`` counts, from the sizes alone; ``decode`` gives the
              update's names, shapes and dtypes back, integer entries exact; a zero
              update decodes to zero; the decoded update is close to the update (within
              the kind's own worst case for a small vector); a client state it keeps
              survives a checkpoint's save and load.
"""

import copy
import io

import pytest
import torch

from simfl.algorithms.compression import build_codec
from simfl.core.config import Compression
from simfl.core.errors import ConfigError

from .kinds import config_of, kinds, registered_for_now

CASES: dict = {}


def update(seed=0):
    g = torch.Generator().manual_seed(seed)
    return {"layer.w": torch.randn(6, 5, generator=g), "layer.b": torch.randn(5, generator=g),
            "steps": torch.tensor(3, dtype=torch.int64)}


def encode(codec, u, state=None, seed=0):
    return codec.encode(u, state, torch.Generator().manual_seed(seed))


def contract(config):
    codec = build_codec(config)
    u = update()
    before = copy.deepcopy(u)
    payload, bits, state = encode(codec, u)
    again_payload, again_bits, again_state = encode(codec, u)
    assert all(torch.equal(u[k], before[k]) for k in u), "encode changed the update"
    assert bits == again_bits == config.bits([30, 5])
    decoded = codec.decode(payload)
    again = codec.decode(again_payload)
    assert set(decoded) == set(u)
    for name, value in u.items():
        assert decoded[name].shape == value.shape and decoded[name].dtype == value.dtype, name
        assert torch.equal(decoded[name], again[name]), f"{name}: not the same twice"
    assert torch.equal(decoded["steps"], u["steps"])
    floats = torch.cat([u["layer.w"].reshape(-1), u["layer.b"]])
    sent = torch.cat([decoded["layer.w"].reshape(-1), decoded["layer.b"]])
    # no kind makes an update larger than sqrt(d) times its norm (QSGD's worst case)
    assert float((sent - floats).norm()) <= (35 ** 0.5 + 1) * float(floats.norm())
    zero = {k: torch.zeros_like(v) for k, v in u.items()}
    z_payload, _, _ = encode(codec, zero)
    assert all(float(v.abs().sum()) == 0 for v in codec.decode(z_payload).values())
    if state is not None:  # a kept state goes through a checkpoint unchanged
        state_copy = copy.deepcopy(state)
        buffer = io.BytesIO()
        torch.save({"s": state}, buffer)
        buffer.seek(0)
        loaded = torch.load(buffer, weights_only=True)["s"]
        p1, _, s1 = encode(codec, update(1), state_copy, seed=1)
        p2, _, s2 = encode(codec, update(1), loaded, seed=1)
        assert all(torch.equal(a, b) for a, b in
                   zip(codec.decode(p1).values(), codec.decode(p2).values()))
        assert torch.equal(state, state_copy), "encode changed the client's state"


@pytest.mark.parametrize("name", kinds("compressions"))
def test_every_compression_meets_the_contract(name):
    contract(config_of("compressions", name, CASES))


def test_a_kind_without_a_codec_is_refused_in_one_line():
    from dataclasses import dataclass

    with registered_for_now("compressions"):
        @dataclass(frozen=True)
        class Halves(Compression):
            """Sends half of every number."""
            kind = "halves_for_test"

        with pytest.raises(ConfigError, match="server.compression.kind"):
            build_codec(Halves())
