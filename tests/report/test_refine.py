"""The text report of a refine run says which way it stopped and what each round saved or why not."""

from __future__ import annotations

from coderefine.config import Settings
from coderefine.report.refine import render_refine
from tests.conftest import RepoFactory
from tests.refiner.test_loop import FIX, PASS, buggy_change, revise, run, scripted


def test_a_run_the_signals_settled_says_so_not_that_the_critic_passed(make_repo: RepoFactory) -> None:
    change, files = buggy_change(make_repo)
    result = run(change, files, scripted({**revise(), "edits": FIX}), Settings())
    out = render_refine(result)
    assert "stopped: the signals behind every issue the critic raised are resolved" in out
    assert "critic passed" not in out
    assert "no reviser call" in out and "no confirming critique" in out  # the accepted round's note


def test_a_run_the_critic_passed_says_so(make_repo: RepoFactory) -> None:
    change, files = buggy_change(make_repo)
    result = run(change, files, scripted(revise(), FIX, PASS), Settings(confirm="always", merge="never"))
    assert "stopped: the critic passed the change and the signals are clean" in render_refine(result)
