"""`rag-lab ask --generator`, and replaying a generator run from its trace without calling anything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from endpoint import package_refs, serve

from rag_lab.cli import main

OPEN = "开放时间：周二至周五十四点到十七点。"
RIGHT = "借阅台的开放时间是周二至周五十四点到十七点。"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def reply(body: dict) -> str:
    refs = package_refs(body)
    return json.dumps([{"text": RIGHT, "evidence": [refs[OPEN]]}, {"text": "每次借5本。", "evidence": [refs[OPEN]]}],
                      ensure_ascii=False)


def test_ask_with_an_endpoint_prints_the_verified_text_and_replays_offline(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with serve(reply) as endpoint:
        code, out, _ = run(capsys, "ask", str(corpus), "借阅台 开放时间", "--generator", f"openai:{endpoint.url}",
                           "--model", "scripted")
        assert code == 0
        assert out.splitlines()[0] == f"answered: {RIGHT}[E1]"
        assert out.splitlines()[1].startswith("  [E1] documents/library.md:2 ")
        code, saved, _ = run(capsys, "ask", str(corpus), "借阅台 开放时间", "--generator",
                             f"openai:{endpoint.url}", "--model", "scripted", "--json")
    path = tmp_path / "r.json"
    path.write_text(saved, encoding="utf-8")
    result = json.loads(saved)
    assert result["coverage"] == 0.6 and [c["supported"] for c in result["claims"]] == [True, False]
    # the endpoint is gone: replay re-runs the verifier on the recorded raw output
    code, out, _ = run(capsys, "replay", str(path), str(corpus), "--json")
    replayed = json.loads(out)
    assert code == 0 and replayed["identical"] is True
    assert replayed["result"]["text"] == result["text"]
    generated = next(e for e in replayed["result"]["trace"]["events"] if e["step"] == "generate")
    assert generated["replayed"] is True and generated["model"] == "scripted"


def test_replay_reports_a_changed_generator_output(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with serve(reply) as endpoint:
        _, saved, _ = run(capsys, "ask", str(corpus), "借阅台 开放时间", "--generator", f"openai:{endpoint.url}",
                          "--model", "scripted", "--json")
    result = json.loads(saved)
    event = next(e for e in result["trace"]["events"] if e["step"] == "generate")
    event["raw"] = json.dumps([{"text": RIGHT, "evidence": ["E7"]}], ensure_ascii=False)
    path = tmp_path / "r.json"
    path.write_text(json.dumps(result, ensure_ascii=False), encoding="utf-8")
    code, out, _ = run(capsys, "replay", str(path), str(corpus))
    assert code == 5
    assert "status: 'answered' → 'refused'" in out and "reason: None → 'unsupported_claim'" in out


def test_composer_runs_replay_identically(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, saved, _ = run(capsys, "ask", str(corpus), "借阅台 和 测试台 的 开放时间", "--json")
    path = tmp_path / "r.json"
    path.write_text(saved, encoding="utf-8")
    code, out, _ = run(capsys, "replay", str(path), str(corpus))
    assert code == 0 and out.startswith("replay identical: partial partial_support")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--generator", "gpt"], "write composer or openai:URL"),
        (["--generator", "openai:http://127.0.0.1:9/v1"], "needs --model NAME"),
        (["--model", "x"], "--model is for --generator openai:URL"),
        (["--generator", "openai:ftp://h/v1", "--model", "m"], "not an http"),
    ],
)
def test_bad_generator_options_are_usage_errors(
    corpus: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, out, err = run(capsys, "ask", str(corpus), "借阅台 开放时间", *args)
    assert code == 2 and out == "" and message in err


def test_an_unreachable_endpoint_is_exit_1(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with serve(reply) as endpoint:
        url = endpoint.url
    code, out, err = run(capsys, "ask", str(corpus), "借阅台 开放时间", "--generator", f"openai:{url}", "--model", "m",
                         "--timeout", "2")
    assert code == 1 and out == "" and "--generator composer" in err
