"""JavaScript the build writes from Python (js/shared.js, web/js/protocol.js) or bundles from
pinned npm sources (Plotly.js with heatmaps only)."""
