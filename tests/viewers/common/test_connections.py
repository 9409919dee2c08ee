import warnings

from psygnal import Signal, SignalGroup
from PySide6.QtCore import QObject
from PySide6.QtCore import Signal as QtSignal

from shardscope.viewers.common.connections import Connections


class Events(SignalGroup):
    changed = Signal(int)
    other = Signal()


class Emitter(QObject):
    fired = QtSignal(int)


def test_close_disconnects_psygnal_slots():
    events = Events()
    seen: list[int] = []
    links = Connections()
    links.connect(events.changed, seen.append)
    events.changed.emit(1)
    assert seen == [1]
    assert len(links) == 1
    links.close()
    events.changed.emit(2)
    assert seen == [1]
    assert len(links) == 0
    assert len(events.changed) == 0


def test_close_disconnects_qt_slots(qtbot):
    emitter = Emitter()
    seen: list[int] = []
    links = Connections()
    links.connect(emitter.fired, seen.append)
    emitter.fired.emit(3)
    links.close()
    emitter.fired.emit(4)
    assert seen == [3]


def test_close_twice_and_a_deleted_emitter_are_harmless(qtbot):
    emitter = Emitter()
    links = Connections()
    links.connect(emitter.fired, lambda _n: None)
    emitter.deleteLater()
    del emitter
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        links.close()
        links.close()
    assert len(links) == 0
