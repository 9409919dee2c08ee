"""A torch_xla program's shardings in its script's words for the CLI: the spec
``xs.mark_sharding`` takes and DTensor's placements (``sharding.text_forms``)."""

from __future__ import annotations

from collections.abc import Sequence

# text_forms is imported where used: it needs numpy, which building the parser must not import.


def torch_forms(mesh, dims: Sequence[Sequence[str]]) -> dict[str, str | None]:
    """``{"torch_xla": '("data", None)', "dtensor": "[Shard(0), Replicate()]"}``: the
    axes per dim ``dims`` over ``mesh`` in both forms, None where a form has none."""
    from shardscope.backend.sharding.text_forms import dtensor_spec_text, torch_xla_spec_text

    return {"torch_xla": torch_xla_spec_text(dims), "dtensor": dtensor_spec_text(mesh, dims)}


def torch_forms_text(mesh, dims: Sequence[Sequence[str]]) -> str:
    """``("data", None)  [Shard(0), Replicate()]``: the forms there are, two spaces apart."""
    return "  ".join(t for t in torch_forms(mesh, dims).values() if t)


def add_torch_forms(data: dict, mesh) -> dict:
    """``propagate --json``'s ``data`` with the forms of each value's spec (keys
    ``torch_xla`` and ``dtensor``) and of each GSPMD difference's GSPMD spec
    (``gspmd_torch_xla``, ``gspmd_dtensor``)."""
    for value in data["values"]:
        value.update(torch_forms(mesh, value["spec"]))
    for diff in data.get("gspmd_differences") or []:
        if diff["gspmd"] is not None:
            forms = torch_forms(mesh, diff["gspmd"])
            diff.update({f"gspmd_{k}": v for k, v in forms.items()})
    return data
