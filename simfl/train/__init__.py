"""Data sets, partitions, models, local rules, executors and evaluation."""
