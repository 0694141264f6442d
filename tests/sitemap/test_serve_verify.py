"""With INDEXNOW_VERIFY, the sitemap agrees with the verdicts: a page the pass does not send is not listed."""

from __future__ import annotations

from typing import Any

from .site import make_site, parse_urlset

A = "https://a.example.org"


def test_pages_the_pass_would_not_send_are_not_listed(make_app: Any, clock: Any) -> None:
    site = make_site(make_app, INDEXNOW_QUEUE_ENABLED=False, INDEXNOW_DRY_RUN=True, INDEXNOW_VERIFY="app",
                     INDEXNOW_SITEMAP_CACHE_SECONDS=0)

    @site.app.route("/p/<slug>")
    def page(slug: str) -> Any:
        if slug == "missing":
            return "not here", 404
        robots = '<meta name="robots" content="noindex">' if slug == "hidden" else ""
        return f"<!doctype html><html><head><title>{slug}</title>{robots}</head><body>{slug}</body></html>"

    with site.app.app_context():
        try:
            for slug in ("shown", "hidden", "missing"):
                site.add(slug)
            assert len(parse_urlset(site.get().get_data())) == 3  # not verified yet: every live row
            site.process()
            assert set(parse_urlset(site.get().get_data())) == {f"{A}/p/shown"}
        finally:
            site.close()
