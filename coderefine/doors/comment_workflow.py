"""The comment workflow `coderefine init` writes, and the choice of when the pull request workflow reviews.

Teams turn reviews on every push off when they are too chatty or too costly; the choice is theirs: every
push, once when a pull request is opened (then on request), or only on request. The comment workflow
(``/coderefine review`` and the other commands) is the same as hooks/github/coderefine-commands.yml, with
the project's install step.
"""

from __future__ import annotations

import re

# When the pull_request workflow reviews, and what the choice costs (docs/security.md, README).
REVIEWS = {
    "push": "review every push of a pull request, and on request",
    "opened": "review once when a pull request is opened (or marked ready), then on request",
    "request": "review only on request (/coderefine review in a comment)",
}
REVIEW_TYPES = {
    "push": "[opened, synchronize, reopened, ready_for_review]",
    "opened": "[opened, reopened, ready_for_review]  # later pushes: /coderefine review",
}
COMMAND_STEP = re.compile(rb"command:\s*[\"']?(gate|comment)\b")


def commands_workflow(action: str, ref: str, install: str) -> str:
    """The comment workflow: a gate job that runs no code of the pull request, then the command's job."""
    return f"""\
# coderefine commands in pull request comments (written by `coderefine init`):
#   /coderefine review | /coderefine fix [intent] | /coderefine explain (in a finding's thread)
#   /coderefine help
# Comment events run with this repository's secrets whoever comments: the gate job checks nothing out, refuses
# authors not allowed and pull requests from forks, and only then the command job checks out the head commit
# the gate accepted (docs/security.md).
name: coderefine commands

on:
  issue_comment:
    types: [created]
  pull_request_review_comment:
    types: [created]

permissions: {{}}

jobs:
  gate:
    # Only comments on pull requests that start with /coderefine; everything else never starts a runner.
    if: >-
      (github.event.issue.pull_request || github.event.pull_request) &&
      startsWith(github.event.comment.body, '/coderefine')
    runs-on: ubuntu-24.04
    timeout-minutes: 5
    permissions:
      pull-requests: write  # the reaction and the reply
    outputs:
      run: ${{{{ steps.gate.outputs.run }}}}
      head-sha: ${{{{ steps.gate.outputs.head-sha }}}}
    steps:
      - id: gate
        uses: {action}@{ref}
        with:
          command: gate
          allowed-associations: OWNER,MEMBER,COLLABORATOR

  command:
    needs: gate
    if: needs.gate.outputs.run == 'true'
    runs-on: ubuntu-24.04
    timeout-minutes: 20
    concurrency:
      # its own group: the review workflow's group (coderefine-N) cancels what it finds in progress
      group: coderefine-command-${{{{ github.event.issue.number || github.event.pull_request.number }}}}
      cancel-in-progress: false
    permissions:
      contents: read          # write, with fix-push: true, to push /coderefine fix as a commit
      pull-requests: write    # the review, its comments and the reply
    steps:
      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2
        with:
          ref: ${{{{ needs.gate.outputs.head-sha }}}}  # the commit the gate accepted, not the branch
          fetch-depth: 0                            # the merge base must be there
          persist-credentials: false

      - uses: actions/setup-python@a26af69be951a213d495a4c3e4e4022e16d87065 # v5
        with:
          python-version: "3.11"

      - name: Install the project, so that its tests can run
        run: {install}

      - uses: {action}@{ref}
        env:
          ANTHROPIC_API_KEY: ${{{{ secrets.ANTHROPIC_API_KEY }}}}
        with:
          command: comment
          allowed-associations: OWNER,MEMBER,COLLABORATOR
          fail-on: error
"""
