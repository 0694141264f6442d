"""Side-by-side benchmarks of Flask-IndexNow: ``python -m benchmarks`` prints the table.

Each figure compares the extension with a floor (the same work done with
bare SQL and bare HTTP) or a baseline, in one run, interleaved, by medians;
see :mod:`benchmarks.harness`.
"""
