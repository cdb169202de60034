"""Where the repository and the tests' shared data are, for tests at any depth of the tree."""

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
DATA = REPO_ROOT / "tests" / "data"
