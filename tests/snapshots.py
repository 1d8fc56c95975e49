"""The notebook snapshot the browser sends with a chat message (what ``NotebookSnapshot.parse``
reads), for the tests of the context and the routes that take one."""

from __future__ import annotations


def snapshot(**extra) -> dict:
    """A notebook at its fourth cell, with an error below and a secret among its variables;
    ``extra`` replaces fields."""
    return {
        "path": "work/analysis.ipynb",
        "cell_count": 6,
        "active": {"index": 3, "type": "code", "source": "df.groupby('city').sum()"},
        "above": [{"index": 2, "type": "markdown", "source": "## Rain per city"}],
        "below": [{"index": 4, "type": "code", "source": "plot(df)"}],
        "selection": "",
        "last_error": {
            "cell_index": 4,
            "ename": "NameError",
            "evalue": "name 'plot' is not defined",
            "traceback": [
                "\x1b[0;31m---------------------------------------------------------\x1b[0m",
                "\x1b[0;31mNameError\x1b[0m: name 'plot' is not defined",
            ],
        },
        "variables": [
            {
                "name": "df",
                "type": "DataFrame",
                "summary": "3 rows × 2 columns\ncolumns: city, rain",
            },
            {"name": "API_KEY", "type": "str", "summary": "<redacted>"},
        ],
        "language": "python",
        **extra,
    }
