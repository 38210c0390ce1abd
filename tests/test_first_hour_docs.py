"""Issue 26, items 14 and 16, as the docs say them: a glossary linked from the first screen,
and a ROS 2 workspace recipe that Ubuntu 24.04's PEP 668 does not refuse."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
GLOSSARY = ROOT / "docs" / "glossary.md"
JARGON = ["alpha", "UTD", "RLPD", "DrQ", "RLIF", "Null-space posture", "FCI", "SAC"]


def first_screen(text: str) -> str:
    """What a reader sees before the first command: everything above the second heading."""
    return text[:text.index("\n## ")]


@pytest.mark.parametrize("term", JARGON)
def test_the_glossary_defines_each_word_of_the_first_screens(term):
    text = GLOSSARY.read_text(encoding="utf-8")
    entry = re.search(rf"^\*\*{re.escape(term)}\b[^*]*\.\*\* (.+?)(?:\n\n|\Z)", text, re.M | re.S)
    assert entry, f"no glossary entry for {term}"
    assert len(entry.group(1).split()) >= 12, entry.group(1)  # a sentence that explains, not a stub


def test_the_glossary_is_linked_from_the_first_screen_and_the_nav():
    assert "](docs/glossary.md)" in first_screen(README)
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    assert "](glossary.md)" in first_screen(index)
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]
    assert {"Glossary": "glossary.md"} in nav
    for term in ("RLPD", "SAC"):  # the first screen's own jargon is in the glossary
        assert term in first_screen(README) and f"**{term}" in GLOSSARY.read_text(encoding="utf-8")


def test_the_rosdep_recipe_skips_every_key_rosdep_would_pip_install():
    xml = ET.parse(ROOT / "package.xml").getroot()
    pip_keys = {e.text for e in xml.iter() if e.tag.endswith("depend") and e.text and e.text.endswith("-pip")}
    assert pip_keys  # the keys package.xml has today: gymnasium, tensorboard, mujoco
    recipe = README[README.index("## In a ROS 2 workspace"):]
    command = re.search(r"rosdep install [^\n]*\\\n\s*--skip-keys \"([^\"]+)\"", recipe)
    assert command, recipe[:800]
    assert set(command.group(1).split()) == pip_keys
    # and the page says why, and what not to do instead
    assert "PEP 668" in recipe and "externally-managed-environment" in recipe
    assert "Do not set\n`PIP_BREAK_SYSTEM_PACKAGES`" in recipe or "Do not set `PIP_BREAK_SYSTEM_PACKAGES`" in recipe
    assert "--system-site-packages" in recipe


def test_the_setup_script_gives_the_venv_what_the_skipped_keys_would_have():
    setup = (ROOT / "setup.py").read_text(encoding="utf-8")
    for requirement in ("gymnasium", "tensorboard", "mujoco"):
        assert f'"{requirement}>=' in setup, requirement
    assert "--system-site-packages" in (ROOT / "scripts" / "setup.sh").read_text(encoding="utf-8")


def test_the_docs_say_how_a_crashed_ros2_launch_session_ends():
    for text in (README, (ROOT / "docs" / "ros2.md").read_text(encoding="utf-8")):
        assert "exit status" in text and "Caught exception in launch" in text
