"""Server settings: the [server] table, the environment and factcheck serve's flags, all from one declaration."""

from pathlib import Path

import pytest
from click.testing import CliRunner

from factcheck import ConfigError
from factcheck.cli import cli
from factcheck.options import declared
from factcheck.server.settings import ServerSettings

KEY = "client-key-0123456789"
EXTENSION = "chrome-extension://abcdefghijklmnopabcdefghijklmnop"
DOCS = Path(__file__).resolve().parents[1] / "docs"
SERVER_TOML = f"""
profile = "offline"

[server]
max_text_chars = 500
rate_burst = 3
deadline_s = 12
cors_origins = ["https://a.example"]
api_keys = ["{KEY}"]
"""


def test_server_table_then_environment_then_flags(tmp_path: Path) -> None:
    path = tmp_path / "factcheck.toml"
    path.write_text(SERVER_TOML)
    from_file = ServerSettings.load(path, env={})
    assert (from_file.max_text_chars, from_file.rate_burst, from_file.deadline_s) == (500, 3, 12.0)
    assert from_file.cors_origins == ("https://a.example",) and from_file.api_keys == (KEY,)
    assert from_file.config == str(path) and from_file.rate_per_minute == 60.0  # unset: the default
    env = {"FACTCHECK_RATE_BURST": "4", "FACTCHECK_CORS_ORIGINS": EXTENSION}
    layered = ServerSettings.load(path, env=env, deadline_s=2.0, cors_origins=("https://b.example",))
    assert (layered.max_text_chars, layered.rate_burst, layered.deadline_s) == (500, 4, 2.0)
    assert layered.cors_origins == (EXTENSION, "https://b.example")  # the variable replaced the file's; flags add
    assert ServerSettings.load(path, env={}, rate_burst=None).rate_burst == 3  # None: not given


def test_the_working_directorys_file_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "factcheck.toml").write_text("[server]\nmax_checkers = 2\n")
    monkeypatch.chdir(tmp_path)
    assert ServerSettings.load(env={}).max_checkers == 2
    assert ServerSettings.load(env={"FACTCHECK_MAX_CHECKERS": "5"}).max_checkers == 5


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("rate_burst = 0", r"factcheck.toml: \[server\]: rate_burst must be a whole number of at least 1, got 0"),
        ("deadline_s = 'soon'", r"\[server\]: deadline_s must be a number, got 'soon'"),
        ("max_text_chrs = 5", r"\[server\]: unknown setting max_text_chrs \(known: .*max_text_chars"),
        ("config = 'other.toml'", r"\[server\]: unknown setting config"),  # the file is the one read
        ("cors_origins = ['https://a.example/']", "CORS origin 'https://a.example/' must look like"),
    ],
)
def test_bad_server_tables_are_config_errors(tmp_path: Path, table: str, message: str) -> None:
    path = tmp_path / "factcheck.toml"
    path.write_text(f"[server]\n{table}\n")
    with pytest.raises(ConfigError, match=message):
        ServerSettings.load(path, env={})


def test_checkers_accept_a_file_with_a_server_table(tmp_path: Path) -> None:
    from factcheck import load_settings

    path = tmp_path / "factcheck.toml"
    path.write_text(SERVER_TOML)
    assert load_settings(path, env={}).profile == "offline"


def test_every_setting_has_a_variable_and_a_flag_named_in_the_docs() -> None:
    help_text = CliRunner().invoke(cli, ["serve", "--help"], terminal_width=200).output
    docs = (DOCS / "server.md").read_text()
    for item in declared(ServerSettings):
        flag = item.constraint.flag
        if flag is None:  # api_keys only: a key on a command line is visible to every user
            assert item.name == "api_keys"
        else:
            flag = flag or "--" + item.name.replace("_", "-")
            assert flag in help_text, flag
            assert f"`{flag}" in docs, flag
        if item.name != "config":  # the settings file is named by --config, not by a variable
            assert item.constraint.env, item.name
            assert f"`{item.constraint.env[0]}`" in docs, item.constraint.env[0]
    assert {d.name for d in declared(ServerSettings)} == set(ServerSettings.__dataclass_fields__) - {"extra_secrets"}


def test_a_flag_is_range_checked_while_parsing_and_wins_over_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    result = CliRunner().invoke(cli, ["serve", "--rate-burst", "0"])
    assert result.exit_code == 2 and "x>=1" in result.output
    monkeypatch.setenv("FACTCHECK_INSECURE_NO_AUTH", "1")
    monkeypatch.setenv("FACTCHECK_MAX_CHECKERS", "0")
    result = CliRunner().invoke(cli, ["serve", "--host", "0.0.0.0", "--max-checkers", "2", "--port", "-1"])
    assert result.exit_code == 2  # --port checked before anything is built
    monkeypatch.setenv("FACTCHECK_MAX_CHECKERS", "zero")
    result = CliRunner().invoke(cli, ["serve", "--max-checkers", "2", "--max-text-chars", "x"])
    assert result.exit_code == 2 and "'x' is not a valid integer" in result.output
    result = CliRunner().invoke(cli, ["serve"])
    assert result.exit_code == 1 and "FACTCHECK_MAX_CHECKERS must be a whole number, got 'zero'" in result.output


def test_the_environment_sets_every_declared_variable() -> None:
    env = {
        item.constraint.env[0]: "true" if item.base is bool else (EXTENSION if "cors" in item.name else "9")
        for item in declared(ServerSettings)
        if item.constraint.env and item.name not in ("api_keys", "profile", "deliberation", "feedback_keys")
    }
    names = {
        "FACTCHECK_API_KEYS": KEY,
        "FACTCHECK_PROFILE": "wiki",
        "FACTCHECK_DELIBERATION": "lase",
        "FACTCHECK_FEEDBACK_KEYS": "key-1",
    }
    settings = ServerSettings.from_env({**env, **names})
    for item in declared(ServerSettings):
        skipped = ("config", "cors_origins", "api_keys", "profile", "deliberation", "insecure_no_auth", "feedback_keys")
        if item.name not in skipped:
            assert getattr(settings, item.name) == 9, item.name
    assert settings.insecure_no_auth and settings.cors_origins == (EXTENSION,) and settings.api_keys == (KEY,)
    assert settings.profile == "wiki" and settings.deliberation == "lase"
    assert settings.feedback_keys == ("key-1",)
