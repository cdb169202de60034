"""Why pip could not install: which requirement, and what happened to it."""

from __future__ import annotations

from coderefine.bench.pip_failure import install_failure

NO_YAML = (
    "ERROR: Could not find a version that satisfies the requirement yaml (from versions: none)\n"
    "ERROR: No matching distribution found for yaml\n"
)


def test_an_import_name_is_not_a_distribution() -> None:
    assert install_failure(NO_YAML, ["pytest", "yaml"]) == (
        "yaml: the package index has no distribution of that name; the module yaml is installed by the "
        "distribution PyYAML"
    )


def test_an_unknown_name_asks_for_its_spelling() -> None:
    text = NO_YAML.replace("yaml", "frobnicate")
    assert "check its spelling" in install_failure(text, ["frobnicate"])


def test_a_version_that_does_not_exist() -> None:
    text = (
        "ERROR: Could not find a version that satisfies the requirement attrs==99 (from versions: 1.0, 2.0)\n"
        "ERROR: No matching distribution found for attrs==99\n"
    )
    assert (
        install_failure(text, ["attrs==99"])
        == "attrs==99: no release matches it on the package index (it has 1.0, 2.0)"
    )


def test_an_index_out_of_reach_says_so() -> None:
    text = (
        "WARNING: Retrying (Retry(total=0)) after connection broken by 'NewConnectionError(': Failed to "
        "establish a new connection: [Errno -3] Temporary failure in name resolution')': /simple/attrs/\n"
        + NO_YAML.replace("yaml", "attrs")
    )
    assert install_failure(text, ["attrs"]).startswith("attrs: the package index could not be reached")


def test_a_conflict_and_a_failed_build() -> None:
    conflict = (
        "ERROR: Cannot install a==1 and b==2 because these package versions have conflicting dependencies.\n"
        "\nThe conflict is caused by:\n    a 1 depends on c<1\n    b 2 depends on c>=2\n\n"
        "ERROR: ResolutionImpossible: for help visit https://pip.pypa.io\n"
    )
    assert install_failure(conflict, ["a==1", "b==2"]) == (
        "a==1 and b==2: they cannot be installed together (a 1 depends on c<1; b 2 depends on c>=2)"
    )
    built = "  error: command 'gcc' failed\nERROR: Failed to build fastthing\nERROR: could not build wheels\n"
    assert install_failure(built, ["fastthing"]).startswith("fastthing: it failed to build from source")
