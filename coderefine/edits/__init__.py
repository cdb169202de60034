"""What a model's answer does to the code: SEARCH/REPLACE blocks applied in memory (``blocks.py``), the gate
every version passes before it is evaluated or written (``gate.py``), and the names of what changed
(``symbols.py``). Imports signals, the project layer and the base modules."""
