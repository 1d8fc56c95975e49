"""The approval policy on cells of public notebooks we did not write
(``tests/vectors/public_cells.json``: pandas, numpy, matplotlib, seaborn and scikit-learn work,
hand-labelled): everyday analysis rarely asks, with trials (only ``KNOWN`` reasons ask) and
without (``KNOWN`` and ``UNPROVEN_LEVEL`` ask, ``LIKELY`` runs), and every cell that reaches
outside the computation gets a reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chapyter_ext.policy import KNOWN, LIKELY, analyse

PUBLIC = json.loads((Path(__file__).parents[1] / "vectors" / "public_cells.json").read_text())
CELLS = PUBLIC["cells"]
MAX_FALSE_ALARMS = 0.05
#: What asks, with trials (the trial decides what is not ``KNOWN``) and without.
ASKS = {"with trials": {KNOWN}, "without trials": {KNOWN, "unproven"}}


def reasons(cell: dict) -> list:
    return analyse(
        "\n".join(cell["source"]),
        known_functions=cell.get("known_functions", ()),
        known_types=cell.get("known_types"),
    )


def test_the_cells_are_many_attributed_and_labelled():
    assert len(CELLS) >= 300
    licences = {source["repository"]: source for source in PUBLIC["sources"]}
    for cell in CELLS:
        assert cell["label"] in ("everyday", "effects")
        source = licences[cell["repository"]]
        assert cell["licence"] == source["licence"] and cell["path"] in source["notebooks"]
    for source in licences.values():
        assert source["licence"].startswith(("MIT", "BSD", "Apache"))
        assert source["licence_text"] and len(source["commit"]) == 40
    everyday = [cell for cell in CELLS if cell["label"] == "everyday"]
    assert len(everyday) >= 300


@pytest.mark.parametrize("trials", sorted(ASKS))
def test_everyday_cells_rarely_ask(trials):
    everyday = [cell for cell in CELLS if cell["label"] == "everyday"]
    asked = []
    for cell in everyday:
        found = [r.text for r in reasons(cell) if r.level in ASKS[trials]]
        if found:
            asked.append(f"{cell['repository']}:{cell['path']}#{cell['cell']}: {'; '.join(found)}")
    rate = len(asked) / len(everyday)
    print("\n".join(asked))
    print(f"{trials}: {len(asked)} of {len(everyday)} everyday cells ask ({rate:.1%})")
    assert rate <= MAX_FALSE_ALARMS, asked


EFFECTS = [cell for cell in CELLS if cell["label"] == "effects"]


@pytest.mark.parametrize(
    "cell", EFFECTS, ids=[f"{cell['path'].rsplit('/', 1)[-1]}#{cell['cell']}" for cell in EFFECTS]
)
def test_every_cell_with_effects_gets_a_reason(cell):
    assert reasons(cell), "\n".join(cell["source"])


def test_the_likely_reasons_are_what_a_trial_decides():
    """Without a notebook's types most cells' calls are name-based guesses: LIKELY, never asked
    for by themselves (classify leaves them out)."""
    likely = sum(any(r.level == LIKELY for r in reasons(cell)) for cell in CELLS)
    assert likely > len(CELLS) / 4
