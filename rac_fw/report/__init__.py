"""``rac-fw report``: self-contained HTML pages with SVG figures of what rac-fw decided and verified.

``page`` gathers the data through the domains' public functions and renders the page; ``figures``
draws (matplotlib → inline SVG). A page is checked in a real browser by the tests (headless Chromium).
"""
