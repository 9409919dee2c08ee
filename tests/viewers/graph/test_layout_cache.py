"""The cache of a graph view's layouts: kept by frame, unfolded scopes and scope drawn
alone, built once, the least recently used forgotten first."""

from shardscope.viewers.graph.layout_cache import LAYOUT_CACHE, LayoutCache


def key(frame: str, *scopes: str, within: str | None = None):
    return (frame, frozenset(scopes), within)


class Layout:
    """Stands for a ``GraphLayout``: the cache only keeps and hands back what it is given."""

    def __init__(self, name: str) -> None:
        self.name = name


def test_a_layout_is_kept_under_its_whole_key():
    cache = LayoutCache()
    folded, unfolded, alone = Layout("folded"), Layout("unfolded"), Layout("alone")
    cache.put(key("main"), folded)
    cache.put(key("main", "layer_1"), unfolded)
    cache.put(key("main", "layer_1", within="layer_1"), alone)
    assert cache.get(key("main")) is folded
    assert cache.get(key("main", "layer_1")) is unfolded
    assert cache.get(key("main", "layer_1", within="layer_1")) is alone
    assert cache.get(key("other")) is None
    assert cache.get(key("main", "layer_2")) is None
    assert len(cache) == 3


def test_get_or_build_builds_once_and_times_the_build():
    cache = LayoutCache()
    built = []

    def build():
        built.append(Layout(f"build {len(built)}"))
        return built[-1]

    layout, seconds = cache.get_or_build(key("main"), build)
    assert layout is built[0] and seconds is not None and seconds >= 0
    again, seconds = cache.get_or_build(key("main"), build)
    assert again is layout and seconds is None and len(built) == 1
    other, _ = cache.get_or_build(key("main", "sgd"), build)
    assert other is built[1] and len(built) == 2


def test_the_least_recently_used_layout_goes_first():
    cache = LayoutCache(size=2)
    a, b, c = Layout("a"), Layout("b"), Layout("c")
    cache.put(key("a"), a)
    cache.put(key("b"), b)
    assert cache.get(key("a")) is a  # now b is the least recently used
    cache.put(key("c"), c)
    assert len(cache) == 2
    assert cache.get(key("b")) is None
    assert cache.get(key("a")) is a and cache.get(key("c")) is c
    cache.put(key("a"), Layout("a again"))  # putting again counts as a use too
    cache.put(key("d"), Layout("d"))
    assert cache.get(key("c")) is None and cache.get(key("a")).name == "a again"


def test_the_cache_holds_a_bounded_number_and_clear_forgets_them_all():
    cache = LayoutCache()
    for i in range(LAYOUT_CACHE + 5):
        cache.put(key(f"frame {i}"), Layout(str(i)))
    assert len(cache) == LAYOUT_CACHE
    assert cache.get(key("frame 4")) is None and cache.get(key("frame 5")) is not None
    cache.clear()
    assert len(cache) == 0 and cache.get(key("frame 5")) is None
