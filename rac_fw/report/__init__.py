"""``rac-fw report``: self-contained HTML pages with SVG figures of what rac-fw decided and verified.

``page`` gathers the data through the domains' public functions and renders the page (``pcb`` the PCB
page); ``figures`` draws, through ``svg`` (SVG written directly, no plotting library). A page is checked
in a real browser by the tests (headless Chromium) and on its SVG content.
"""
