"""benchmarks/page_bench.py's parts, by concept: common (the targets, the edits timed, the
limits waited within), site (the sites measured, their floors, serving), pages (the pages driven),
measure, report, scrub (scrubbing); assets/ holds the floor pages and the instrumentation the
benchmark installs in every page. Imported as `page` with benchmarks/ on sys.path (a script
there, or tests/test_benchmarks_serve.py)."""
