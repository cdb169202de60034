"""The command line: ``main.py`` (the entry point and the one error-to-exit-code mapping), ``parser.py``
(the grammar and help), ``options.py`` (options several commands share) and ``commands/`` (one module per
door, turning arguments into library calls). The top of the layers: nothing imports it."""
