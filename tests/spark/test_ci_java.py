"""CI makes sure Spark has a Java runtime before the tests run."""

from __future__ import annotations

from pathlib import Path

CI_SCRIPT = Path(__file__).resolve().parents[2] / ".ci" / "run"


def test_ci_installs_a_java_runtime_before_the_tests():
    text = CI_SCRIPT.read_text(encoding="utf-8")
    check = text.index("if ! command -v java")
    tests = text.index("python -m pytest")
    assert "apt-get install -y -qq default-jre-headless" in text[:check]
    assert "install_java ||" in text[check:tests]
