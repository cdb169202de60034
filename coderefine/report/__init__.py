"""Renderers of the records every door shares: a check's and a refine's text and JSON, progress lines,
token usage. Render, never compute. The review door's formats live with it (``doors/review/``)."""
