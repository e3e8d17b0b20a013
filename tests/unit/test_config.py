from pathlib import Path

import pytest

from caucus.config import BadSettings, Settings, load_settings


def test_defaults_are_safe_and_documented() -> None:
    s = Settings()
    assert s.host == "127.0.0.1"
    assert s.port == 8765
    assert s.peer_ttl == 300
    assert s.reaped_grace == 1800
    assert s.max_content_chars == 8192
    assert s.max_body_bytes == 64 * 1024
    assert (s.send_rate_capacity, s.send_rate_refill) == (10, 2)


def test_flags_beat_environment_beat_toml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "caucus.toml"
    config.write_text('port = 9000\npeer_ttl = 10\nhost = "127.0.0.2"\n')
    monkeypatch.setenv("CAUCUS_PEER_TTL", "20")
    s = load_settings(config, port=9100)
    assert s.port == 9100  # flag
    assert s.peer_ttl == 20  # environment
    assert s.host == "127.0.0.2"  # file


def test_unknown_keys_in_the_config_file_are_refused(tmp_path: Path) -> None:
    config = tmp_path / "caucus.toml"
    config.write_text("prot = 1\n")
    with pytest.raises(ValueError, match="prot"):
        load_settings(config)


def test_a_missing_config_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(BadSettings, match="no config file at"):
        load_settings(tmp_path / "nope.toml")


def test_the_default_database_lives_in_the_user_data_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    monkeypatch.delenv("CAUCUS_HOME", raising=False)
    assert Settings().db_path() == tmp_path / "caucus" / "caucus.db"
