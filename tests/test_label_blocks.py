"""The ``label_blocks`` partition: blocks of consecutive clients, each on its own labels
(the CVaR paper's code: 27 frequent users on classes 0-7, the 3 rare ones on 8 and 9)."""

import numpy as np
import pytest

import simfl
from simfl.core.config import LabelBlocks
from simfl.core.errors import ConfigError
from simfl.train.partition import split_clients

Y = np.repeat(np.arange(10), 40)


def test_each_block_holds_its_own_labels_and_every_sample_once():
    cfg = LabelBlocks(clients=(27, 3), labels=(tuple(range(8)), (8, 9)))
    parts = split_clients(cfg, Y, None, 30, np.random.default_rng(0))
    assert len(parts) == 30
    assert sorted(np.concatenate(parts).tolist()) == list(range(len(Y)))
    assert all(set(Y[p]) <= set(range(8)) for p in parts[:27])
    assert all(set(Y[p]) == {8, 9} for p in parts[27:])
    # 320 samples over 27 clients (11 or 12 each), 80 over 3 (26 or 27 each)
    assert {len(p) for p in parts[:27]} == {11, 12} and {len(p) for p in parts[27:]} == {26, 27}
    # a mix of the block's classes, not one class each
    assert min(len(set(Y[p])) for p in parts[:27]) >= 3


def test_a_shared_label_is_cut_between_its_blocks_and_an_unlisted_one_is_left_out():
    cfg = LabelBlocks(clients=(2, 2), labels=((0, 1), (1, 2)))
    parts = split_clients(cfg, Y, None, 4, np.random.default_rng(1))
    first, second = np.concatenate(parts[:2]), np.concatenate(parts[2:])
    assert np.bincount(Y[first], minlength=10)[:3].tolist() == [40, 20, 0]
    assert np.bincount(Y[second], minlength=10)[:3].tolist() == [0, 20, 40]
    assert len(first) + len(second) == 120  # labels 3..9 belong to no block


def test_blocks_must_add_up_to_the_clients_and_have_one_label_set_each():
    with pytest.raises(ConfigError, match="task.partition.clients"):
        split_clients(LabelBlocks(clients=(2, 1), labels=((0,), (1,))), Y, None, 4,
                      np.random.default_rng(0))
    base = simfl.load_scenario("cvar")
    with pytest.raises(ConfigError, match="one label set per block"):
        simfl.apply_overrides(base, [("task.partition", {"kind": "label_blocks",
                                                         "clients": [2, 1], "labels": [[0]]})])
    # the default is the iid split
    parts = split_clients(LabelBlocks(), Y, None, 8, np.random.default_rng(0))
    assert sorted(len(p) for p in parts) == [50] * 8
