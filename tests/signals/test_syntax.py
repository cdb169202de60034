from coderefine.signals.syntax import check_compile, compile_error, parse_error


def test_clean_code_has_no_error() -> None:
    assert compile_error("m.py", "x = 1\n") is None
    assert parse_error("m.py", "x = 1\n") is None


def test_error_has_line_column_and_anchor() -> None:
    error = compile_error("m.py", "x = 1\ny = (\n")
    assert error is not None
    assert error.line == 2
    assert error.severity == "error"
    assert error.anchor == "y = ("


def test_crlf_source_is_fine() -> None:
    assert compile_error("m.py", "def f():\r\n    return 1\r\n") is None
    assert parse_error("m.py", "def f():\r\n    return 1\r\n") is None


def test_invalid_escape_is_not_a_syntax_error() -> None:
    assert compile_error("m.py", "x = '\\d'\n") is None


def test_compile_catches_what_libcst_accepts() -> None:
    """Why the gate needs both: libcst parses a module-level return, CPython refuses it."""
    assert parse_error("m.py", "return 1\n") is None
    error = compile_error("m.py", "return 1\n")
    assert error is not None and "compile() rejects it" in error.message


def test_libcst_error_names_the_line() -> None:
    error = parse_error("m.py", "x = 1\ny = (\n")
    assert error is not None
    assert error.line >= 2 and error.message.startswith("libcst cannot parse")


def test_check_compile_reports_status() -> None:
    result = check_compile({"a.py": "x = 1\n", "b.py": "def (\n"})
    assert [s.path for s in result.signals] == ["b.py"]
    assert result.statuses[0].state == "ok"
