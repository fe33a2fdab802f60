"""The heads shown beside the real one (the classic mistakes, the variants) and their panel."""
