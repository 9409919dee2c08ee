"""A graph panel over a session holding one loaded program (each program loaded once)."""

import pytest

from shardscope.backend.program.load import load_program
from shardscope.backend.session.document import Session
from shardscope.viewers.graph.graph_panel import GraphPanel


@pytest.fixture(scope="module")
def programs():
    return {}


def program(programs, source):
    if source not in programs:
        programs[source] = load_program(source)
    return programs[source]


@pytest.fixture
def panel_for(qtbot, programs):
    def make(source):
        session = Session()
        panel = GraphPanel(session)
        qtbot.addWidget(panel)
        panel.resize(1000, 700)
        panel.show()
        session.set_program(program(programs, source))
        return session, panel

    return make
