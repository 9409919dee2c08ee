"""The pinned Qt binding keeps Python's reference counts intact under many signal emits.

PySide6 6.12.0 drops one reference to ``True`` per Python-side ``emit()``; after a few
hundred emits Python aborts in ``bool_dealloc``. pyqtgraph and our viewers emit all the
time, so such a build crashes the app within seconds of use. The probe runs in a child
process because the failure is an abort, not an exception.
"""

import subprocess
import sys

PROBE = """
import sys
from PySide6.QtCore import QObject, Signal

class Probe(QObject):
    number = Signal(int)
    anything = Signal(object)

probe = Probe()
probe.number.connect(lambda v: None)
probe.anything.connect(lambda v: None)
before = sys.getrefcount(True)
for i in range(5000):
    probe.number.emit(i)
    probe.anything.emit(i % 2 == 0)
print(before - sys.getrefcount(True))
"""


def test_signal_emits_keep_refcounts():
    proc = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, f"Qt binding corrupts refcounts: {proc.stderr[-500:]}"
    if sys.version_info < (3, 12):
        # From 3.12 True is immortal: its count is not tracked, and a stray decref is harmless.
        assert abs(int(proc.stdout.strip())) < 10
