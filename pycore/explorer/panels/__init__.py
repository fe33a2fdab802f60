"""What the page is told to show: each panel's values, the heatmaps' specs, and the answer's
sections.
"""
