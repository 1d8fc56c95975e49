"""What showing an output would fetch from another host, against the vectors the TypeScript side
(``labextension/src/__tests__/remote-content.spec.ts``) is tested against too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chapyter_ext.untrusted.remote_content import (
    RemoteResource,
    bundle_remote_resources,
    remote_host,
    remote_resources,
)

VECTORS = json.loads((Path(__file__).parent / "vectors" / "remote_content.json").read_text("ascii"))
CASES = VECTORS["cases"]


def test_vectors_are_many_and_named_once():
    names = [case["name"] for case in CASES]
    assert len(names) >= 60
    assert len(set(names)) == len(names)
    # Both kinds of case are there: fetches, and tricky text that fetches nothing.
    assert sum(1 for case in CASES if not case["remote"]) >= 15
    assert {case["mime"] for case in CASES} == {
        "text/html",
        "text/markdown",
        "image/svg+xml",
        "text/css",
        "application/json",
    }


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_vector(case):
    found = remote_resources(case["input"], case["mime"])
    assert [(r.url, r.host, r.kind) for r in found] == [
        (e["url"], e["host"], e["kind"]) for e in case["remote"]
    ]


def test_resource_is_frozen():
    resource = RemoteResource("//h/x", "h", "image")
    with pytest.raises(AttributeError):
        resource.url = "//other/"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("address", "expected"),
    [
        ("//h.example/x", ("//h.example/x", "h.example")),
        (" \x00HTTPS://H.example:8443/x ", ("HTTPS://H.example:8443/x", "h.example:8443")),
        ("data:image/png;base64,AAAA", None),
        ("plot.png", None),
        ("/files/plot.png", None),
        ("javascript:alert(1)", None),
        ("http://", None),
        ("wss://h.example/socket", ("wss://h.example/socket", "h.example")),
    ],
)
def test_remote_host(address, expected):
    assert remote_host(address) == expected


def test_bundle_reads_every_type_once():
    bundle = {
        "output_type": "display_data",
        "data": {
            "text/plain": ["<IPython.core.display.HTML object>"],
            "text/html": ['<img src="//h.example/a.png">', '<img src="//h.example/b.png">'],
            "text/markdown": "![](//h.example/a.png)",
            "application/vnd.vegalite.v5+json": {"data": {"url": "https://d.example/cars.json"}},
            "image/png": "iVBORw0KGgo=",
        },
        "metadata": {},
    }
    found = bundle_remote_resources(bundle)
    assert [(r.url, r.kind) for r in found] == [
        ("//h.example/a.png", "image"),
        ("//h.example/b.png", "image"),
        ("https://d.example/cars.json", "data"),
    ]
    # A bare MIME bundle reads the same.
    assert bundle_remote_resources(bundle["data"]) == found


def test_unknown_type_and_bad_json_list_nothing():
    assert remote_resources('<img src="//h.example/x">', "text/plain") == []
    assert remote_resources("{not json", "application/json") == []
    assert remote_resources('<img src="//h.example/x">', "TEXT/HTML; charset=utf-8") == [
        RemoteResource("//h.example/x", "h.example", "image")
    ]


def test_large_output():
    # A big pandas-like table with one remote image at the end (its speed: BENCHMARKS.md).
    rows = "".join(f"<tr><td>{i}</td><td style='color:red'>{i * 2}</td></tr>" for i in range(20000))
    html = f"<table>{rows}</table><img src='//h.example/end.png'>"
    found = remote_resources(html, "text/html")
    assert [r.url for r in found] == ["//h.example/end.png"]
