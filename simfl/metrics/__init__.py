"""Run records to tables, the run directory, invariant checks and plots."""
