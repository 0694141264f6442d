"""Prometheus metrics: ``GET {INDEXNOW_STATUS_URL_PREFIX}/metrics`` (issue 22).

Every value is read from the database (and the shared cache) at scrape time,
so it is right with any number of web processes, workers and machines:

- :mod:`flask_indexnow.totals`: the delivery counters, kept in the database by the
  transaction that writes each outcome (pruning the history never lowers them);
- :mod:`.counts`: queue counts whose cost does not grow with the queue;
- :mod:`.snapshot`: one read of everything a scrape exports, as plain data;
- :mod:`.collector`: that data as Prometheus metric families (``prometheus_client``,
  the ``[metrics]`` extra, imported only by a scrape);
- :mod:`.views`: the route, its access rule and its 501 without the library.
"""
