"""The top layer: renders the chapter (``build``), checks it in a browser (``browser``), and what pages call (``page``)."""
