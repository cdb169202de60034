"""The user's project and its copies: files as bytes, git, the change under review, the trees where tests
run, atomic writes with the undo journal, the run lock, the review cache, redaction. Imports only the base
modules (``errors``, ``config``)."""
