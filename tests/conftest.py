"""Shared by tests/ and tests/browser/.

This folder has no ``__init__.py``: pytest puts it on ``sys.path`` when it loads this
conftest, so every test module (tests/browser/ included) can import the shared modules beside
it: ``hostile_job`` (the job whose every name and value is hostile, issue 16) and ``jobs``
(the builders every test job is made of — ``timestamped``, ``keyed_window``,
``count_pipeline``, ``sum_pipeline`` … —, the random windowed jobs, the engine-path switches
``engine_paths``, the usual watermark strategy ``bounded`` and the explorers' pipeline
``counts``).
"""
