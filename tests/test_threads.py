"""torch's thread count per run: the rule by model size, its overrides, the summary."""

from __future__ import annotations

from dataclasses import replace

import pytest

import simfl
from simfl.core.errors import ConfigError
from simfl.experiment.threads import SMALL_MODEL_PARAMS, choose_threads, model_params


def test_small_models_train_with_one_thread_large_ones_with_torchs_count():
    assert choose_threads(650, None, None) == 1
    assert choose_threads(SMALL_MODEL_PARAMS - 1, None, None) == 1
    assert choose_threads(SMALL_MODEL_PARAMS, None, None) is None
    assert choose_threads(1_663_370, None, None) is None


def test_run_threads_wins_and_omp_num_threads_leaves_torch_alone():
    assert choose_threads(650, 2, None) == 2
    assert choose_threads(1_663_370, 1, "4") == 1
    assert choose_threads(650, None, "2") is None
    assert choose_threads(650, None, " ") == 1  # set but empty: as if unset


def test_model_params_counts_the_models_parameters():
    quickstart = simfl.load_scenario("quickstart")
    assert model_params(quickstart) == 64 * 64 + 64 + 64 * 10 + 10  # digits MLP 64-64-10
    logreg = replace(quickstart, task=replace(quickstart.task, model=simfl.Logreg()))
    assert model_params(logreg) == 64 * 10 + 10


@pytest.mark.parametrize("value", [0, -1, 5000])
def test_run_threads_is_bounded(value):
    with pytest.raises(ConfigError, match="threads"):
        simfl.Run(threads=value)


def test_the_summary_records_the_count_and_torch_is_restored(tiny_scenario, tmp_path,
                                                              monkeypatch):
    import torch

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    before = torch.get_num_threads()
    result = simfl.run(replace(tiny_scenario, run=replace(tiny_scenario.run, rounds=1)),
                       out_dir=tmp_path / "auto")
    assert result.summary["torch_threads"] == 1  # a logistic regression: a small model
    assert torch.get_num_threads() == before
    two = replace(tiny_scenario, run=replace(tiny_scenario.run, rounds=1, threads=2))
    assert simfl.run(two, out_dir=tmp_path / "two").summary["torch_threads"] == 2
    timing = replace(tiny_scenario, run=replace(tiny_scenario.run, rounds=1, timing_only=True))
    assert simfl.run(timing, out_dir=tmp_path / "timing").summary["torch_threads"] is None
