"""The loop and what it asks and decides: ``loop.py`` (``refine()``, ``review()``), the session of one run,
acceptance and the confirm policy, the requests of each role (``prompting.py``, ``prompts/``), the
critique schema and its parser, what of a file a request shows, and the records of a run. Named ``refiner``,
not ``refine``, so that the package never shadows the public function ``coderefine.refine``."""
