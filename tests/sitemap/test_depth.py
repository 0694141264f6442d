"""Memory stays flat for every sitemap: nesting, names and token sizes are capped.

The parser holds every open element, every distinct name, and each markup
token whole until its end; a 51 KB gzipped document of 17 million nested
elements took 2.2 GB. Each shape below is a 12 MB hostile document, parsed in
a fresh process after a tiny sitemap: the hostile parse may raise the process's
peak memory by less than 100 MB.
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

import pytest

from flask_indexnow.sitemap import SitemapError
from flask_indexnow.sitemap.limits import MAX_XML_DEPTH, MAX_XML_NAMES

from .helpers import NS, urlset
from .test_parse import urls, write

SIZE = 12 * 1024 * 1024
HEAD = f'<?xml version="1.0"?>\n<urlset xmlns="{NS}">'.encode()

#: Each hostile shape: what it exhausts, and the bytes of the document.
HOSTILE = {
    "nesting": lambda: HEAD + b"<a>" * (SIZE // 3),
    "attributes": lambda: b'<?xml version="1.0"?>\n<urlset ' + b"".join(b'a%07d=">" ' % i for i in range(SIZE // 14)) + b">",
    "names": lambda: HEAD + b"<url>" + b"".join(b"<n%07d/>" % i for i in range(SIZE // 11)) + b"</url></urlset>",
    "comment": lambda: HEAD + b"<!--" + b"x" * SIZE + b"-->" + b"</urlset>",
}

_PARSE = """
import resource, sys
from pathlib import Path
from flask_indexnow.sitemap import SitemapError, iter_document_bytes, parse_document


def peak_kb():
    # This process's own high-water mark: VmHWM starts afresh at exec, while ru_maxrss
    # also keeps the peak of the process it was forked from (a pytest worker's).
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def parse(path):
    try:
        return "ok %d" % sum(1 for _ in parse_document(iter_document_bytes(path, path.name), path.name))
    except SitemapError as exc:
        return "refused %s" % exc


parse(Path(sys.argv[1]))  # everything imported and used once, on a tiny sitemap
baseline = peak_kb()
print(parse(Path(sys.argv[2])))
print(peak_kb() - baseline)
"""


def growth_kb(small: Path, path: Path) -> tuple[str, int]:
    """Parse ``small`` then ``path`` in one fresh process: the verdict on ``path`` and how far
    it raised the process's peak resident memory (KB) above the peak of the small parse."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", _PARSE, str(small), str(path)], capture_output=True, text=True,
                          env=env, check=True, timeout=120)
    verdict, growth = done.stdout.strip().rsplit("\n", 1)
    return verdict, int(growth)


@pytest.mark.slow  # a hostile document parsed in a fresh process: not the fast tier
@pytest.mark.parametrize("shape", HOSTILE)
def test_a_hostile_document_stays_under_100_mb(tmp_path, shape):
    path = tmp_path / "hostile.xml.gz"
    path.write_bytes(gzip.compress(HOSTILE[shape](), 6))
    small = write(tmp_path / "small.xml", urlset("https://example.com/a"))
    verdict, growth = growth_kb(small, path)
    assert verdict.startswith("refused"), verdict
    assert growth < 100 * 1024, f"{shape}: {growth // 1024} MB above baseline"


def test_too_deep_is_refused_with_a_clear_error(tmp_path):
    doc = HEAD + b"<url><loc>https://example.com/a</loc>" + b"<x>" * (MAX_XML_DEPTH - 1) + b"</x>" * (MAX_XML_DEPTH - 1)
    with pytest.raises(SitemapError, match=f"deep.xml nests elements more than {MAX_XML_DEPTH} levels deep"):
        urls(write(tmp_path / "deep.xml", doc + b"</url></urlset>"))


def test_nesting_up_to_the_cap_is_read(tmp_path):
    depth = MAX_XML_DEPTH - 2  # urlset and url are two levels
    doc = HEAD + b"<url><loc>https://example.com/a</loc>" + b"<x>" * depth + b"</x>" * depth + b"</url></urlset>"
    assert urls(write(tmp_path / "ok.xml", doc)) == ["https://example.com/a"]


def test_a_sitemap_with_extensions_is_read(tmp_path):
    doc = (f'<?xml version="1.0"?>\n<urlset xmlns="{NS}" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1" '
           'xmlns:video="http://www.google.com/schemas/sitemap-video/1.1">'
           "<url><loc>https://example.com/a</loc><image:image><image:loc>https://example.com/i.png</image:loc>"
           "</image:image><video:video><video:title>t</video:title><video:tag>a</video:tag></video:video></url>"
           "</urlset>").encode()
    assert urls(write(tmp_path / "ext.xml", doc)) == ["https://example.com/a"]


def test_too_many_names_are_refused(tmp_path):
    names = b"".join(b"<n%d/>" % i for i in range(MAX_XML_NAMES + 1))
    with pytest.raises(SitemapError, match=f"more than {MAX_XML_NAMES} different element and attribute names"):
        urls(write(tmp_path / "names.xml", HEAD + b"<url>" + names + b"</url></urlset>"))


def test_a_giant_tag_is_refused(tmp_path):
    doc = HEAD + b'<url a="' + b"x" * (2 * 1024 * 1024) + b'"><loc>https://example.com/a</loc></url></urlset>'
    with pytest.raises(SitemapError, match="a tag, comment or name longer than 1024 KB"):
        urls(write(tmp_path / "tag.xml", doc))


def test_long_text_between_tags_is_streamed_not_refused(tmp_path):
    doc = HEAD + b"<url><loc>https://example.com/a</loc></url>" + b" " * (3 * 1024 * 1024) + b"</urlset>"
    assert urls(write(tmp_path / "spaces.xml", doc)) == ["https://example.com/a"]
