"""Sweeps: one intent applied to many files, one refine per file, concurrently, resumable.

``select.py`` chooses the files (folders, ``--all``, ``--exclude``); ``run.py`` runs them with bounded
concurrency, a budget, a resume cache and one undo journal entry for the whole run; ``records.py`` holds
the per-file outcomes and the run's summary.
"""
