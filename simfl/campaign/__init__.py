"""Campaigns: a sweep over seeds and grid points, run on a local process pool or Dask,
kept in an SQLite index in the campaign folder, and read back as one tidy table.

``sweep`` runs (or resumes) a campaign; ``results`` reads its table.
"""

from simfl.campaign.index import INDEX_NAME, CampaignError
from simfl.campaign.results import results
from simfl.campaign.coordinator import SweepReport, sweep

__all__ = ["sweep", "results", "SweepReport", "CampaignError", "INDEX_NAME"]
