#!/usr/bin/env python3
"""README.md's links into docs/ are relative (docs/x.md#anchor) so they work
on GitHub; MkDocs does not see README.md, so this checks them: each page
must exist and each #anchor must be a heading id of the built site.

Usage: tools/docs/check_readme_links.py [SITE_DIR]   (default build-docs/site)
"""

import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
LINK = re.compile(r"\]\((docs/[^)#\s]+)(#[^)\s]*)?\)")


def page_html(site, page):
    """The built HTML of docs/<page>.md (MkDocs' directory URLs)."""
    rel = page[len("docs/"):-len(".md")]
    rel = rel[: -len("index")] if rel.endswith("index") else rel + "/"
    return os.path.join(site, rel, "index.html")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    site = os.path.abspath(argv[0]) if argv else os.path.join(ROOT, "build-docs", "site")
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        links = sorted(set(LINK.findall(f.read())))
    bad = []
    for page, anchor in links:
        if not os.path.exists(os.path.join(ROOT, page)):
            bad.append(page)
            continue
        if anchor:
            with open(page_html(site, page), encoding="utf-8") as f:
                if f'id="{anchor[1:]}"' not in f.read():
                    bad.append(page + anchor)
    if bad:
        print("README.md links to missing pages or anchors: " + ", ".join(bad),
              file=sys.stderr)
        return 1
    print(f"README.md: {len(links)} links into docs/, all present")
    return 0


if __name__ == "__main__":
    sys.exit(main())
