"""Builders for sitemap documents used by the sitemap tests."""

from __future__ import annotations

from xml.sax.saxutils import escape

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"


def urlset(*entries: str | tuple[str, str | None], ns: str | None = NS) -> bytes:
    """A ``<urlset>``; each entry is a loc, or (loc, lastmod)."""
    parts = []
    for entry in entries:
        loc, lastmod = (entry, None) if isinstance(entry, str) else entry
        item = f"<loc>{escape(loc)}</loc>"
        if lastmod is not None:
            item += f"<lastmod>{escape(lastmod)}</lastmod>"
        parts.append(f"  <url>{item}</url>\n")
    xmlns = f' xmlns="{ns}"' if ns is not None else ""
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset{xmlns}>\n' + "".join(parts) + "</urlset>\n").encode()


def index(*locs: str) -> bytes:
    items = "".join(f"  <sitemap><loc>{escape(loc)}</loc></sitemap>\n" for loc in locs)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="{NS}">\n{items}</sitemapindex>\n'.encode()


BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE urlset [
  <!ENTITY lol "lol">
  <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
  <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
  <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
  <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
  <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
  <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
  <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
  <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>https://example.com/ok</loc></url>
  <url><loc>https://example.com/&lol9;</loc></url>
</urlset>
"""


def external_entity(target: str) -> bytes:
    return f"""<?xml version="1.0"?>
<!DOCTYPE urlset [<!ENTITY secret SYSTEM "{target}">]>
<urlset xmlns="{NS}">
  <url><loc>https://example.com/ok</loc></url>
  <url><loc>https://example.com/&secret;</loc></url>
</urlset>
""".encode()


DTD_ONLY = f"""<?xml version="1.0"?>
<!DOCTYPE urlset SYSTEM "http://127.0.0.1:9/sitemap.dtd">
<urlset xmlns="{NS}"><url><loc>https://example.com/ok</loc></url></urlset>
""".encode()
