"""The CI door: ``run.py`` (signals of head against the merge base, critiques in priority order, a
verified fix per issue), its findings with fingerprints, shards and their merge, and its outputs: text,
Markdown and JSON (``render.py``), GitHub annotations and job summary, SARIF, GitLab code quality, and
publishing a pull-request review (``github_api.py``)."""
