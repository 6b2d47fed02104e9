"""mlperf-host for Python.

``mlperf_host.loadgen`` is the mlperf-host LoadGen engine behind the API of the official
``mlperf_loadgen`` module (6.0.17): switch an existing harness with

    import mlperf_host.loadgen as lg
"""
