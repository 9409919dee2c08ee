"""Reading a module back onto the program graph: shardings by graph value id."""

from shardscope.backend.propagation.propagate import prepare
from shardscope.backend.propagation.readback import read_state
from tests.support.compile_oracle import loaded


def test_the_annotated_arguments_read_back_with_their_specs():
    prep = prepare(loaded("example:mlp"))
    graph = prep.graph
    state, origins, steps, names = read_state(
        prep.module, prep.index, graph, debug=True, scope="annotations"
    )
    by_name = {graph.values[v].display_name: v for v in graph.functions[graph.main].arguments}
    assert state[by_name["x"]].dims == (("data",), ())
    assert state[by_name["params['w1']"]].dims == ((), ("model",))
    assert state[by_name["params['w2']"]].dims == (("model",), ())
    assert steps == [] and names == {}  # nothing has propagated yet


def test_io_reads_only_function_boundaries():
    prep = prepare(loaded("example:mlp"))
    graph = prep.graph
    state = read_state(prep.module, prep.index, graph, debug=False, scope="io")[0]
    boundary = set(graph.functions[graph.main].arguments) | set(graph.functions[graph.main].results)
    assert state and set(state) <= boundary
