"""The session's analysis laid over its hosts and priced for the hardware the user chose.

``Pricer`` lays each propagation of the session, and again its compile when it comes,
over the session's hosts and prices it (``cost.traffic.apply_host_layout``: which
collectives cross hosts, the bytes across hosts, the seconds on each link), and keeps
the outcome in the session (``Session.set_priced``), which the Collectives dock shows.
The hosts change without a new propagation: the analysis is laid over the new ones at
once. The hardware is the one picked in the Collectives dock (remembered in the
settings); another pick prices the compiled collectives again.

The host warnings that laying out adds go to Messages once the compiled collectives
are in (or the program will not be compiled, or its compile failed), each once per
result and host layout.
"""

from __future__ import annotations

from shardscope.app.window.settings import Settings
from shardscope.backend.analysis.analysis import Analysis
from shardscope.backend.cost import hardware
from shardscope.backend.cost.traffic import apply_host_layout
from shardscope.backend.errors import ShardscopeError
from shardscope.backend.propagation.result import PropagationResult
from shardscope.backend.run.compiled import MAX_CPU_DEVICES
from shardscope.backend.session.document import Session
from shardscope.viewers.common.connections import Connections
from shardscope.viewers.common.messages import MessagesView
from shardscope.viewers.debugger.collectives_view import CollectivesView


class Pricer:
    """Lays the session's analysis over its hosts and prices it; see the module
    docstring."""

    def __init__(
        self,
        session: Session,
        settings: Settings,
        messages: MessagesView,
        collectives: CollectivesView,
    ) -> None:
        self.session = session
        self.settings = settings
        self.messages = messages
        names = [p.name for p in hardware.profiles()]
        chosen = settings.hardware(hardware.DEFAULT_PROFILE)
        self.hardware = chosen if chosen in names else hardware.DEFAULT_PROFILE
        collectives.set_profiles([(p.name, p.label) for p in hardware.profiles()], self.hardware)
        # The host warnings said: (result, host layout, warnings).
        self._posted: tuple[object, object, set[str]] = (None, None, set())
        ev = session.events
        self._links = Connections()
        self._links.connect(collectives.hardwareChosen, self.set_hardware)
        self._links.connect(ev.propagation, self._on_propagation)
        self._links.connect(ev.compiled, lambda _analysis: self._on_compiled())
        self._links.connect(ev.hosts, lambda _hosts: self._on_hosts())
        self._on_propagation(session.propagation)

    def close(self) -> None:
        """Stop following the session and the dock."""
        self._links.close()

    def set_hardware(self, name: str) -> None:
        """Price the compiled collectives for hardware profile ``name`` (remembered for
        the next start)."""
        self.hardware = name
        self.settings.set_hardware(name)
        analysis = self.session.analysis
        if analysis is not None and analysis.compiled is not None:
            self.lay_out(analysis, final=True)

    def _on_propagation(self, result: PropagationResult | None) -> None:
        analysis = self.session.analysis
        if result is not None and analysis is not None:
            self.lay_out(analysis, final=self._final(analysis))

    def _on_compiled(self) -> None:
        analysis = self.session.analysis
        if analysis is not None:
            self.lay_out(analysis, final=self._final(analysis))

    def _on_hosts(self) -> None:
        """Another host layout of the same propagation (a new mesh order propagates
        again, and is laid out when it comes)."""
        analysis = self.session.analysis
        if analysis is not None and analysis.mesh == self.session.mesh:
            self.lay_out(analysis, final=self._final(analysis))

    @staticmethod
    def _final(analysis: Analysis) -> bool:
        """Whether ``analysis`` has all it will have: compiled, or never to be."""
        return analysis.compiled is not None or analysis.mesh.size > MAX_CPU_DEVICES

    def lay_out(self, analysis: Analysis, *, final: bool) -> None:
        """Lay ``analysis`` over the session's hosts, price it and keep both in the
        session; with ``final`` (or a failed compile), say its host warnings."""
        result = analysis.propagation
        hosts = None
        if result.mesh == self.session.mesh:
            try:
                hosts = self.session.mesh_hosts()
            except ShardscopeError:
                hosts = None
        try:
            traffic, pricing = apply_host_layout(result, analysis.compile, hosts, self.hardware)
        except ShardscopeError as exc:
            self.messages.error(str(exc))
            return
        self.session.set_priced(result, traffic, pricing)
        if final or analysis.compile_error is not None:
            self._post(result, list(traffic.warnings))

    def _post(self, result: PropagationResult, warnings: list[str]) -> None:
        """Say each host warning once per result and host layout."""
        layout = self.session.hosts
        if self._posted[0] is not result or self._posted[1] != layout:
            self._posted = (result, layout, set())
        said = self._posted[2]
        for warning in warnings:
            if warning not in said:
                said.add(warning)
                self.messages.add(warning, "warning")
