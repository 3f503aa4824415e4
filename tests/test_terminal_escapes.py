"""No escape sequence from a model, a file or a command reaches the terminal (issue 24, item 11).

``run``, ``replay`` and ``import-claude-code`` print model text, file contents and Bash output; each
control character is shown as a picture (ESC as ␛), never written. Outputs are captured as a terminal
would get them: rich styles are off when the output is not a terminal, so no ESC may appear at all.
"""

from __future__ import annotations

import json

import pytest

import dreamloop.scripts as S
from dreamloop.cli import main
from dreamloop.demo import copy_sample_project
from dreamloop.fake_api import serve
from dreamloop.render import SafeConsole, visible

HOSTILE = "\x1b[2J\x1b]0;pwned\x07\x9b31m\x1b[1A\rover"  # clear screen, window title, C1 CSI, cursor up, CR


def no_controls(text: str) -> bool:
    return not any((ord(c) < 0x20 and c not in "\t\n") or 0x7F <= ord(c) < 0xA0 for c in text)


def test_visible_shows_every_control_character_and_keeps_newlines_and_tabs():
    shown = visible(f"a\tb\n{HOSTILE}\r\n")
    assert no_controls(shown) and "␛[2J" in shown and "␇" in shown and shown.startswith("a\tb\n")


def test_the_safe_console_keeps_its_own_styles_but_not_the_texts_escapes():
    console = SafeConsole(force_terminal=True, color_system="standard", width=80, record=False)
    with console.capture() as captured:
        console.print(f"[bold]bold[/] {HOSTILE}", markup=True)
    out = captured.get()
    assert "\x1b[1m" in out  # rich's own bold
    assert "\x1b[2J" not in out and "\x1b]0;" not in out and "\x07" not in out and "\x9b" not in out


def test_run_shows_escapes_from_model_text_file_contents_and_bash_output(tmp_path, capsys, monkeypatch):
    workspace = copy_sample_project(tmp_path / "sample")
    (workspace / "evil.txt").write_text(f"file {HOSTILE}\n")
    script = [S.reply(f"model {HOSTILE}", S.tool_use("Read", {"file_path": "evil.txt"})),
              S.reply(S.tool_use("Bash", {"command": "printf 'bash \\033[2J\\033]0;t\\007 done'"})),
              S.reply(f"done {HOSTILE}")]
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-a-key")
    with serve(script) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        status = main(["run", "read evil.txt", "--live", "--model", "claude-scripted-1", "--workspace",
                       str(workspace), "--permission-mode", "bypass", "--trace", str(tmp_path / "t.jsonl")])
    out = capsys.readouterr()
    assert status == 0
    assert no_controls(out.out) and no_controls(out.err)
    assert "model ␛[2J" in out.out and "file ␛[2J" in out.out and "bash ␛[2J" in out.out
    main(["replay", str(tmp_path / "t.jsonl")])
    out = capsys.readouterr()
    assert no_controls(out.out) and "model ␛[2J" in out.out


def test_import_claude_code_shows_escapes(tmp_path, capsys):
    records = [
        {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s",
         "message": {"role": "user", "content": f"user {HOSTILE}"}},
        {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": "s",
         "message": {"role": "assistant", "id": "msg_1", "model": "claude-x", "type": "message",
                     "usage": {"input_tokens": 5, "output_tokens": 2},
                     "content": [{"type": "text", "text": f"model {HOSTILE}"}]}},
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert main(["import-claude-code", str(path)]) == 0
    out = capsys.readouterr()
    assert no_controls(out.out) and "model ␛[2J" in out.out


@pytest.mark.parametrize("name", ["bad\x1b]0;x\x07.jsonl"])
def test_a_usage_error_shows_a_hostile_file_name(tmp_path, capsys, name):
    with pytest.raises(SystemExit):
        main(["replay", str(tmp_path / name)])
    err = capsys.readouterr().err
    assert no_controls(err) and "bad" in err
