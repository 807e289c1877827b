"""Every image that the committed Markdown shows (the reproduction report, docs/ and
the README) is a file the repository tracks, at the link's path relative to the file."""

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Markdown images ![alt](path "title") and HTML <img src="path">
IMAGE = re.compile(r"!\[[^\]]*\]\(\s*(?:<([^>]+)>|([^)\s]+))|<img[^>]*\ssrc=[\"']([^\"']+)[\"']")
DOCUMENTS = sorted({ROOT / "README.md", *(ROOT / "docs").rglob("*.md")})


def tracked() -> set[Path] | None:
    """The repository's tracked files (None outside a git checkout)."""
    try:
        done = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                              timeout=30, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return {(ROOT / name).resolve() for name in done.stdout.decode().split("\0") if name}


def image_links(text: str) -> list[str]:
    links = [a or b or c for a, b, c in IMAGE.findall(text)]
    return [link.split("#")[0] for link in links if not re.match(r"[a-z]+:", link)]


def test_image_links_are_parsed():
    text = ('![a](figures/x.png) ![b]( <y z.svg> ) ![c](../p.png "t") '
            '<img alt="d" src="q.png"> ![e](https://example.org/e.png)')
    assert image_links(text) == ["figures/x.png", "y z.svg", "../p.png", "q.png"]


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_linked_image_is_in_the_repository(document):
    files = tracked()
    missing = []
    for link in image_links(document.read_text()):
        target = (document.parent / link).resolve()
        present = target in files if files is not None else target.is_file()
        if not present:
            missing.append(link)
    assert not missing, (f"{document.relative_to(ROOT)} shows images the repository does not "
                         f"hold: {', '.join(missing)}")
