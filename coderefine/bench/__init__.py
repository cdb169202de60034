"""``coderefine bench``: measure what coderefine fixes, at what cost, against simpler strategies."""
