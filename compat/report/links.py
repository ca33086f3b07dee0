"""Where a finding id's page lives: the site `compat matrix site` builds, served under a base URL."""

from __future__ import annotations


def finding_path(finding_id: str) -> str:
    """The page of a check or signature, relative to the site root."""
    return f"findings/{finding_id}.html"


def finding_url(base: str | None, finding_id: str) -> str | None:
    """The page's address under `base`; None when no base URL is configured."""
    if not base:
        return None
    return f"{base.rstrip('/')}/{finding_path(finding_id)}"


def render_pages(finding_ids: list[str], base: str | None) -> str:
    """One `pages:` line with the page of each id (first seen first); "" without a base URL or ids."""
    urls = [u for u in (finding_url(base, i) for i in dict.fromkeys(finding_ids)) if u]
    return f"pages: {' '.join(urls)}\n" if urls else ""
