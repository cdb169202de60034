from coderefine.signals.syntax import check_syntax, syntax_error


def test_clean_code_has_no_error() -> None:
    assert syntax_error("m.py", "x = 1\n") is None


def test_error_has_line_column_and_anchor() -> None:
    error = syntax_error("m.py", "x = 1\ny = (\n")
    assert error is not None
    assert error.line == 2
    assert error.severity == "error"
    assert error.anchor == "y = ("


def test_crlf_source_is_fine() -> None:
    assert syntax_error("m.py", "def f():\r\n    return 1\r\n") is None


def test_invalid_escape_is_not_a_syntax_error() -> None:
    assert syntax_error("m.py", "x = '\\d'\n") is None


def test_check_syntax_reports_status() -> None:
    result = check_syntax({"a.py": "x = 1\n", "b.py": "def (\n"})
    assert [s.path for s in result.signals] == ["b.py"]
    assert result.statuses[0].state == "ok"
