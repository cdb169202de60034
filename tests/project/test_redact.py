import pytest
from hypothesis import given
from hypothesis import strategies as st

from coderefine.project.redact import Redactor, entropy
from tests.hostile import SECRETS, secret_module


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_each_kind_of_secret_is_redacted(name: str) -> None:
    redacted = Redactor().redact(secret_module())
    assert SECRETS[name] not in redacted


@pytest.mark.parametrize(
    "line",
    [
        'API_KEY = "abcdefgh12345678XYZ"',
        "config['auth_token'] = 'Zm9vYmFyYmF6cXV4MTIzNDU2'",
        'SLACK = "xoxb-1234567890-abcdefghij"',
        'JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"',
    ],
)
def test_assignments_and_tokens(line: str) -> None:
    assert "«secret:" in Redactor().redact(line)


@pytest.mark.parametrize(
    "line",
    [
        'password_hint = "see the wiki"',  # not random
        'token_type = "bearer"',  # too short
        "def get_token(self) -> str:",
        "x = 'sk-short'",
    ],
)
def test_ordinary_code_is_left_alone(line: str) -> None:
    assert Redactor().redact(line) == line


def test_restore_puts_secrets_back_everywhere() -> None:
    redactor = Redactor()
    text = secret_module()
    redacted = redactor.redact(text)
    assert redactor.restore(redacted) == text
    assert redactor.restore_data({"issues": [{"evidence": redacted}]}) == {"issues": [{"evidence": text}]}
    assert redactor.restore("«secret:unknown:00000000»") == "«secret:unknown:00000000»"


def test_the_same_secret_gets_the_same_placeholder() -> None:
    one, two = Redactor(), Redactor()
    assert one.redact(secret_module()) == two.redact(secret_module())


def test_entropy() -> None:
    assert entropy("aaaa") == 0
    assert entropy("abcd") == 2


@given(st.text(max_size=300))
def test_redact_then_restore_is_the_identity(text: str) -> None:
    redactor = Redactor()
    assert redactor.restore(redactor.redact(text)) == text
