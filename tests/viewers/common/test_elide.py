from PySide6.QtGui import QFont, QFontMetricsF

from shardscope.viewers.common.elide import ELLIPSIS, elide_middle, key_path_parts


def metrics():
    font = QFont()
    font.setPixelSize(12)
    return QFontMetricsF(font)


def test_key_paths_split_into_root_and_keys():
    assert key_path_parts("params['layers'][10]['w_out']") == (
        "params",
        ["['layers']", "[10]", "['w_out']"],
    )
    assert key_path_parts("model.encoder.layers[3]") == ("model", [".encoder", ".layers", "[3]"])
    assert key_path_parts("x") is None  # a name alone
    assert key_path_parts("jvp(layer_0)") is None
    assert key_path_parts("result[0] of f") is None


def test_a_key_path_loses_whole_keys_from_its_middle(qapp):
    fm = metrics()
    name = "params['layers'][10]['w_out']"
    assert elide_middle(name, fm, fm.horizontalAdvance(name)) == name
    width = fm.horizontalAdvance(f"params{ELLIPSIS}[10]['w_out']") + 1
    assert elide_middle(name, fm, width) == f"params{ELLIPSIS}[10]['w_out']"
    # narrower: the index and the leaf stay, the root gives up letters
    narrow = fm.horizontalAdvance(f"par{ELLIPSIS}[10]['w_out']") + 1
    assert elide_middle(name, fm, narrow) == f"par{ELLIPSIS}[10]['w_out']"
    narrower = elide_middle(name, fm, fm.horizontalAdvance(f"p{ELLIPSIS}[10]['w_out']") - 1)
    assert narrower[0] == "p" and ELLIPSIS in narrower and narrower.endswith("out']")
    # a path of one key: the root and the key, elided in its middle
    two = "params['w_out']"
    assert elide_middle(two + "[3]", fm, fm.horizontalAdvance(f"params{ELLIPSIS}[3]") + 1) == (
        f"params{ELLIPSIS}[3]"
    )
    one_key = "params['embedding_table']"
    short = elide_middle(one_key, fm, fm.horizontalAdvance(one_key) - 20)
    assert short[0] == "p" and ELLIPSIS in short and short.endswith("table']")
    # too narrow even for the root and the last key: Qt's middle elision, still both ends
    tiny = elide_middle(name, fm, fm.horizontalAdvance("params['w"))
    assert ELLIPSIS in tiny and tiny[0] == "p" and tiny[-1] == "]"


def test_other_text_is_elided_in_the_middle(qapp):
    fm = metrics()
    text = "transpose(jvp(layer_10))/attention/dot_general"
    shown = elide_middle(text, fm, fm.horizontalAdvance(text) / 2)
    assert ELLIPSIS in shown and shown.startswith("tr") and shown.endswith("al")
