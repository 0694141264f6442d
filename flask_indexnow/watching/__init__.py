"""Watching: model changes and CMS events become queue rows.

``events`` holds the adapters of ``watch()`` and the signal receivers,
``bridge`` turns SQLAlchemy flushes into those signals, ``before`` shows an
adapter the object as it was before the flush, ``baseurl`` builds canonical
URLs without a request, ``standalone`` queues a signal sent without a session
in a transaction of its own, and ``skipped`` counts events left out.
"""
