"""Bad input gets a clear error naming the file (and the line), never a traceback (issue 24, item 12).

Each case runs the command as a person would (``main([...])``): exit 2, a one-line error on stderr that
names the file, nothing run. Settings files, cassettes (JSONL and YAML), traces, Claude Code sessions,
fake-API scripts, deeply nested JSON in any of them, and a malformed ``ANTHROPIC_BASE_URL``.
"""

from __future__ import annotations

import json

import pytest

from dreamloop.cli import main
from dreamloop.demo import copy_sample_project

DEEP = "[" * 5000 + "]" * 5000
HEADER = json.dumps({"kind": "cassette", "version": 1, "model": "m"})


@pytest.fixture
def workspace(tmp_path):
    return copy_sample_project(tmp_path / "sample")


def usage_error(capsys, argv, *says):
    with pytest.raises(SystemExit) as exit:
        main(argv)
    err = capsys.readouterr().err
    assert exit.value.code == 2 and "Traceback" not in err, err
    for said in says:
        assert said in err, err
    return err


SETTINGS = {
    "a directory": (None, "a directory"),
    "not UTF-8": (b"\xff\xfe{}", "line 1: not UTF-8"),
    "a bad matcher": (json.dumps({"hooks": {"PreToolUse": [{"matcher": "[bad", "hooks": [
        {"type": "command", "command": "true"}]}]}}).encode(), "PreToolUse: matcher '[bad'"),
    "deeply nested": (('{"hooks": ' + DEEP + "}").encode(), "nested too deeply"),
    "not JSON": (b"{hooks", "not JSON"),
}


@pytest.mark.parametrize("case", SETTINGS)
def test_a_bad_settings_file_is_named(tmp_path, workspace, capsys, case):
    data, said = SETTINGS[case]
    path = tmp_path / "settings.json"
    path.mkdir() if data is None else path.write_bytes(data)
    usage_error(capsys, ["run", "hi", "--workspace", str(workspace), "--settings", str(path)], str(path), said)


CASSETTES = {
    "headers a list": ("c.cassette.jsonl", HEADER + "\n" + json.dumps(
        {"kind": "exchange", "request": {}, "status": 200, "headers": [1], "sse": "x"}) + "\n", "line 2: an exchange whose headers"),
    "status a string": ("c.cassette.jsonl", HEADER + "\n" + json.dumps(
        {"kind": "exchange", "request": {}, "status": "200", "sse": "x"}) + "\n", "line 2: an exchange without"),
    "deeply nested": ("c.cassette.jsonl", HEADER + "\n" + DEEP + "\n", "line 2: not JSON (nested too deeply"),
    "no exchange": ("c.cassette.jsonl", HEADER + "\n", "holds no exchange"),
    "a directory": ("d.cassette.jsonl", None, "a directory"),
    "YAML not a mapping": ("c.yaml", "- 1\n- 2\n", "not a VCR cassette"),
    "YAML interactions not a list": ("c.yaml", "interactions: 5\n", "not a VCR cassette"),
    "YAML interaction not an exchange": ("c.yaml", "interactions: [1]\n", "an interaction is not a VCR exchange"),
    "YAML with a Python tag": ("c.yaml", "interactions: !!python/object/apply:os.system ['echo pwned']\n",
                               "not a YAML cassette"),
    "YAML deeply nested": ("c.yaml", "a: " + DEEP + "\n", "nested too deeply"),
}


@pytest.mark.parametrize("case", CASSETTES)
def test_a_malformed_cassette_is_named(tmp_path, workspace, capsys, case):
    name, text, said = CASSETTES[case]
    path = tmp_path / name
    path.mkdir() if text is None else path.write_text(text)
    usage_error(capsys, ["run", "hi", "--workspace", str(workspace), "--cassette", str(path)], str(path), said)


@pytest.mark.parametrize("text, said", [
    (DEEP + "\n", "line 1: not a dreamloop trace"),
    (json.dumps({"kind": "trace", "version": 1}) + '\n{"kind": "message", "message": ' + DEEP + "}\n",
     "line 2: not JSON (nested too deeply"),
    (b"\xff\n", "not UTF-8"),
])
def test_replay_of_a_bad_trace_is_named(tmp_path, capsys, text, said):
    path = tmp_path / "t.jsonl"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    usage_error(capsys, ["replay", str(path)], said)


def test_import_of_a_deeply_nested_session_is_named(tmp_path, capsys):
    path = tmp_path / "s.jsonl"
    path.write_text('{"type": "user", "uuid": "u", "message": ' + DEEP + "}\n")
    usage_error(capsys, ["import-claude-code", str(path)], str(path), "line 1: not JSON (nested too deeply")


@pytest.mark.parametrize("url", ["http://[::1", "ftp://x", "http://", "://", "http://exa mple.com", "http://h:99999",
                                 "http://h:port"])
def test_a_malformed_base_url_is_a_usage_error(workspace, capsys, monkeypatch, url):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-a-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
    usage_error(capsys, ["run", "hi", "--workspace", str(workspace), "--live"], "ANTHROPIC_BASE_URL")


@pytest.mark.parametrize("text, said", [("a: " + DEEP + "\n", "nested too deeply"),
                                        ("!!python/object/apply:os.system ['echo pwned']\n", "not valid YAML")])
def test_serve_fake_names_a_bad_script(tmp_path, capsys, text, said):
    path = tmp_path / "s.yaml"
    path.write_text(text)
    usage_error(capsys, ["serve-fake", "--script", str(path)], said)
