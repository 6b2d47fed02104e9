"""``mlperf_loadgen`` served by mlperf-host: ``import mlperf_loadgen`` gives ``mlperf_host.loadgen``.

Installed by the ``mlperf-host-loadgen-alias`` package (``pip install host/python/alias``), or
put on ``PYTHONPATH`` ahead of the official wheel, it switches a harness without an edit.
"""

import sys

from mlperf_host import loadgen as _loadgen

sys.modules[__name__] = _loadgen
