"""Delivery: a worker pass takes due URLs from the queue and POSTs them to the IndexNow endpoint.

``worker`` runs the pass (claim, send, finish); ``endpoint`` and ``outbound``
are the HTTP client; ``setsql`` writes a batch's outcome set-based; ``tick``,
``due`` and ``lock`` decide when a pass runs without a separate worker;
``breaker`` and ``ratelog`` keep a failing cache or a repeated warning quiet;
``passlog`` and ``forbidden`` log what the engine answered. When to try again
is :mod:`flask_indexnow.retry`'s rule.
"""
