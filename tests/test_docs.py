"""The docs: mkdocs builds them in strict mode, so a broken link or anchor in ``docs/`` fails
the tests (and CI); every page is in the nav; and every relative link in the README, which
mkdocs never sees, points at a file that exists."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
DOCS = REPO / "docs"
MKDOCS_YML = REPO / "mkdocs.yml"

#: ``[text](target)`` and ``![alt](target)``, with an optional ``"title"``.
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
INLINE_CODE = re.compile(r"`[^`\n]*`")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)


def mkdocs_build(config: Path, site: Path) -> subprocess.CompletedProcess:
    """``mkdocs build --strict`` of ``config`` into ``site``, as CI runs it."""
    pytest.importorskip("mkdocs")
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config),
                           "--site-dir", str(site)], cwd=config.parent, capture_output=True, text=True, timeout=300)


def slug(heading: str) -> str:
    """The anchor of a heading, as GitHub and mkdocs' toc both make it for plain headings."""
    text = re.sub(r"[^\w\s-]", "", heading.replace("`", "")).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(markdown: str) -> set[str]:
    return {slug(h) for h in HEADING.findall(FENCE.sub("", markdown))}


def relative_links(markdown: str) -> list[str]:
    """Link targets outside code, except web addresses (``http:``, ``mailto:``, ...)."""
    text = INLINE_CODE.sub("", FENCE.sub("", markdown))
    return [t for t in LINK.findall(text) if not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", t)]


def broken_links(md_file: Path) -> list[str]:
    """The relative links of ``md_file`` whose file, or whose anchor in a Markdown file, does not exist."""
    broken = []
    text = md_file.read_text(encoding="utf-8")
    for target in relative_links(text):
        path, _, fragment = target.partition("#")
        if path.startswith("/"):
            broken.append(f"{target} (absolute)")
            continue
        file = (md_file.parent / path).resolve() if path else md_file
        if not file.exists():
            broken.append(f"{target} (no such file)")
        elif fragment and file.suffix == ".md" and fragment not in anchors(file.read_text(encoding="utf-8")):
            broken.append(f"{target} (no such heading)")
    return broken


def nav_pages(nav) -> list[str]:
    """Every page file the nav lists, depth first."""
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [page for item in nav for page in nav_pages(item)]
    if isinstance(nav, dict):
        return [page for value in nav.values() for page in nav_pages(value)]
    raise AssertionError(f"mkdocs.yml: unexpected nav entry {nav!r}")


def test_the_docs_build_in_strict_mode(tmp_path):
    result = mkdocs_build(MKDOCS_YML, tmp_path / "site")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    pages = nav_pages(yaml.safe_load(MKDOCS_YML.read_text(encoding="utf-8"))["nav"])
    for page in pages:  # every page was rendered, not just the home page
        assert (tmp_path / "site" / Path(page).with_suffix(".html")).is_file(), page
    assert (tmp_path / "site" / "images" / "pick_cube_session.png").is_file()


def test_the_strict_build_fails_on_a_broken_link_or_anchor(tmp_path):
    """The config really is strict and checks anchors: a copy with broken links must fail."""
    shutil.copytree(DOCS, tmp_path / "docs")
    shutil.copy(MKDOCS_YML, tmp_path / "mkdocs.yml")
    page = tmp_path / "docs" / "first-sim-run.md"
    page.write_text(page.read_text(encoding="utf-8") + "\n[gone](no-such-page.md) [lost](learning.md#no-such-part)\n",
                    encoding="utf-8")
    result = mkdocs_build(tmp_path / "mkdocs.yml", tmp_path / "site")
    out = result.stdout + result.stderr
    assert result.returncode != 0, out[-3000:]
    assert "no-such-page.md" in out and "no-such-part" in out, out[-3000:]


def test_every_docs_page_is_in_the_nav_and_every_nav_entry_exists():
    config = yaml.safe_load(MKDOCS_YML.read_text(encoding="utf-8"))
    assert config["docs_dir"] == "docs" and config["strict"] is True
    pages = nav_pages(config["nav"])
    assert len(pages) == len(set(pages)), "a page is listed twice"
    on_disk = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert set(pages) == on_disk
    for name in ("first-sim-run.md", "real-cell.md", "reward-classifier.md", "adding-a-task.md",
                 "learning-plane.md", "ros2.md", "troubleshooting.md", "reference.md"):
        assert name in on_disk, name


def test_every_relative_link_in_the_readme_points_at_a_file():
    text = README.read_text(encoding="utf-8")
    links = relative_links(text)
    assert sum(link.startswith("docs/") for link in links) >= 8, links  # it sends readers into the docs
    assert broken_links(README) == []


def test_the_readme_stays_a_few_screens_with_a_small_picture():
    text = README.read_text(encoding="utf-8")
    assert len(text.encode("utf-8")) < 8_000
    pictures = [t for t in relative_links(text) if t.endswith(".png")]
    assert pictures and all((REPO / p).stat().st_size < 200_000 for p in pictures)


def test_the_readme_test_command_is_what_ci_runs():
    """`.ci/run` runs "the README's test command": both must say the same."""
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    command = "scripts/setup.sh dev && .venv/bin/python -m pytest -q -n auto --dist loadfile --no-loadscope-reorder"
    assert command in ci.splitlines()
    blocks = re.findall(r"^```bash\n(.*?)^```", README.read_text(encoding="utf-8"), re.S | re.M)
    assert [command] in [b.strip().splitlines() for b in blocks]


def test_the_link_check_finds_what_is_broken_and_ignores_code_and_web_links(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text("# A page\n\n## Some `code` part: here\n", encoding="utf-8")
    readme = tmp_path / "README.md"
    readme.write_text(
        "# Top\n\n"
        "[ok](docs/page.md) [ok anchor](docs/page.md#some-code-part-here) [self](#top) ![pic](docs/page.md)\n"
        "[web](https://example.org/x.md) [mail](mailto:someone@example.org)\n"
        "[gone](docs/missing.md) [bad anchor](docs/page.md#nowhere) [abs](/docs/page.md)\n"
        "`[in code](docs/nope.md)`\n\n```\n[in a block](docs/nope2.md)\n```\n",
        encoding="utf-8")
    assert broken_links(readme) == ["docs/missing.md (no such file)", "docs/page.md#nowhere (no such heading)",
                                    "/docs/page.md (absolute)"]
