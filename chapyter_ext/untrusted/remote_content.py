"""What an output would fetch from another host when it is shown: the one rule, mirrored by
``labextension/src/untrusted/remoteContent.ts`` and tested with it against
``tests/vectors/remote_content.json``.

An output that a renderer shows can leak the notebook's data with no click: an image whose
address carries a secret (``![](//host/?d=...)``) is fetched the moment it renders. This module
lists those fetches for HTML, Markdown, SVG, CSS and JSON (vega's ``data.url``) so that the
static analysis and trial runs can name them, and the notebook's render gate can hold them.

Remote is whatever a browser would fetch from a host other than the page's: ``http(s)``,
``ftp``, ``ws(s)``, protocol-relative ``//host`` (slashes or backslashes, any number).
``data:`` and relative (same server) addresses are local; ``<a href>`` is a link, opened only on
a click, and text that merely mentions an address fetches nothing.

Read as browsers read it: character references in attributes, CSS escapes (``\\75 rl(``),
mixed case, tabs and newlines inside addresses (browsers drop them), unquoted attributes,
``srcset`` and ``image-set()``, ``@import "..."``, Markdown reference images and raw HTML in
Markdown. Where the two languages' parsers could differ the rule leans to listing more.
Pure standard library (``html.parser``, ``re``, ``json``).
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any

__all__ = [
    "RemoteResource",
    "bundle_remote_resources",
    "css_resources",
    "remote_host",
    "remote_resources",
]


@dataclass(frozen=True)
class RemoteResource:
    """One fetch from another host that showing an output would make."""

    #: The address as the browser reads it (references decoded, tabs and newlines dropped).
    url: str
    #: The host (and port) it goes to, lower case, without user info.
    host: str
    #: What it is fetched as: "image", "stylesheet", "font", "frame", "media", "script",
    #: "link-prefetch", "refresh", "base" or "data" (a URL in JSON a renderer loads).
    kind: str


#: Schemes a browser fetches from another host (ftp and ws(s) listed to lean to safety).
REMOTE_SCHEMES = frozenset({"http", "https", "ftp", "ws", "wss"})

_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*):")
_TAB_NEWLINE = re.compile(r"[\t\n\r]")
_C0_SPACE = "".join(chr(c) for c in range(0x21))


def remote_host(url: str) -> tuple[str, str] | None:
    """``(address, host)`` when a browser would fetch ``url`` from another host, else None.

    The address is trimmed of C0 controls and spaces with tabs and newlines removed, as the URL
    parser does; ``http:host`` (no slashes) counts, as it does from a page of another scheme.
    """
    address = _TAB_NEWLINE.sub("", url.strip(_C0_SPACE))
    match = _SCHEME.match(address)
    if match:
        if match.group(1).lower() not in REMOTE_SCHEMES:
            return None
        rest = address[match.end() :]
    elif address[:2] in ("//", "\\\\", "/\\", "\\/"):
        rest = address
    else:
        return None
    authority = re.split(r"[/\\?#]", rest.lstrip("/\\"), maxsplit=1)[0]
    host = authority.rpartition("@")[2].lower()
    return (address, host) if host else None


def _resource(url: str, kind: str) -> RemoteResource | None:
    found = remote_host(url)
    return RemoteResource(found[0], found[1], kind) if found else None


# --- CSS -----------------------------------------------------------------------------------

_CSS_COMMENT = re.compile(r"/\*.*?(?:\*/|\Z)", re.S)
_CSS_ESCAPE = re.compile(r"\\(?:([0-9a-fA-F]{1,6})[ \t\n\r\f]?|(\r\n|[\n\r\f])|(.))", re.S)
_CSS_TOKEN = re.compile(
    r"""@import\s*(?:url\(\s*(?:"(?P<iq>[^"]*)"|'(?P<is>[^']*)'|(?P<iu>[^"')]*?))\s*\)|"(?P<dq>[^"]*)"|'(?P<sq>[^']*)')"""
    r"""|(?P<ns>@namespace\b[^;{}]*)"""
    r"""|(?<![\w-])(?:url|src)\(\s*(?:"(?P<uq>[^"]*)"|'(?P<us>[^']*)'|(?P<uu>[^"')]*?))\s*\)"""
    r"""|(?<![\w-])(?P<set>(?:-webkit-)?image-set\(|image\()""",
    re.I,
)
_CSS_STRING = re.compile(r""""([^"]*)"|'([^']*)'""")
_FONT_FACE = re.compile(r"@font-face\s*\{", re.I)


def _css_unescape(match: re.Match[str]) -> str:
    hex_digits, newline, char = match.groups()
    if newline is not None:
        return ""
    if char is not None:
        return char
    code = int(hex_digits, 16)
    if code == 0 or code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        return "\ufffd"
    return chr(code)


def _closing(text: str, start: int, open_char: str, close_char: str) -> int:
    """The index just past the bracket closing the one opened before ``start`` (or the end)."""
    depth = 1
    quote = ""
    for index in range(start, len(text)):
        char = text[index]
        if quote:
            if char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char == open_char:
            depth += 1
        elif char == close_char:
            depth -= 1
            if depth == 0:
                return index + 1
    return len(text)


def css_resources(css: str, kind: str = "image") -> list[tuple[int, str, str]]:
    """Every address ``css`` would fetch, remote or not, as ``(position, address, kind)``.

    ``url()``, ``src()``, ``@import`` (with or without ``url()``: "stylesheet") and the strings
    of ``image-set()``/``image()``; inside ``@font-face`` the kind is "font". ``@namespace``
    names an address but fetches nothing. Comments are dropped and escapes decoded first.
    """
    text = _CSS_ESCAPE.sub(_css_unescape, _CSS_COMMENT.sub(" ", css))
    fonts = []
    for match in _FONT_FACE.finditer(text):
        fonts.append((match.end(), _closing(text, match.end(), "{", "}")))
    found: list[tuple[int, str, str]] = []
    for match in _CSS_TOKEN.finditer(text):
        groups = match.groupdict()
        position = match.start()
        if groups["ns"] is not None:
            continue
        if groups["set"] is not None:
            end = _closing(text, match.end(), "(", ")")
            inner = text[match.end() : end - 1]
            # Strings that are arguments of image-set() itself, not of a url() inside it.
            for string in _CSS_STRING.finditer(inner):
                before = inner[: string.start()].rstrip()
                if not re.search(r"(?<![\w-])(?:url|src)\($", before, re.I):
                    address = string.group(1) if string.group(1) is not None else string.group(2)
                    found.append((match.end() + string.start(), address, kind))
            continue
        imported = next(
            (groups[g] for g in ("iq", "is", "iu", "dq", "sq") if groups[g] is not None), None
        )
        if imported is not None:
            found.append((position, imported, "stylesheet"))
            continue
        address = next(groups[g] for g in ("uq", "us", "uu") if groups[g] is not None)
        in_font = any(start <= position < end for start, end in fonts)
        found.append((position, address, "font" if in_font else kind))
    found.sort(key=lambda item: item[0])
    return found


# --- HTML ----------------------------------------------------------------------------------


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Attributes that fetch, by element (lower-case names), and what they fetch as.
_HTML_FETCHES: dict[str, dict[str, str]] = {
    "img": {"src": "image", "srcset": "image"},
    "source": {"src": "media", "srcset": "image"},
    "video": {"src": "media", "poster": "image"},
    "audio": {"src": "media"},
    "track": {"src": "media"},
    "iframe": {"src": "frame"},
    "frame": {"src": "frame"},
    "embed": {"src": "frame"},
    "object": {"data": "frame"},
    "script": {"src": "script"},
    "base": {"href": "base"},
    **{tag: {"background": "image"} for tag in ("body", "table", "td", "th", "tr")},
    **{tag: {"background": "image"} for tag in ("thead", "tbody", "tfoot")},
}
#: In SVG, the elements whose ``href``/``xlink:href`` fetch.
_SVG_FETCHES = {"image": "image", "use": "image", "feimage": "image", "script": "script"}
#: SVG presentation attributes that take ``url()``.
_SVG_URL_ATTRIBUTES = _words(
    "fill stroke filter clip-path mask marker-start marker-mid marker-end cursor"
)
#: ``<link rel>`` tokens that fetch, and as what.
_LINK_RELS = {
    "stylesheet": "stylesheet",
    "icon": "image",
    "apple-touch-icon": "image",
    "apple-touch-icon-precomposed": "image",
    "mask-icon": "image",
    **dict.fromkeys(
        _words("preload prefetch preconnect dns-prefetch modulepreload prerender manifest"),
        "link-prefetch",
    ),
}
_REFRESH = re.compile(r"\s*[\d.]*\s*[;,]?\s*(?:url\s*=\s*)?(.*)", re.I | re.S)
_PI_HREF = re.compile(r"""\bhref\s*=\s*(?:"([^"]*)"|'([^']*)')""", re.I)
_ASCII_SPACE = " \t\n\r\f"


def srcset_urls(srcset: str) -> list[str]:
    """The addresses of a ``srcset`` (HTML's candidate parsing: commas inside a URL stay)."""
    urls: list[str] = []
    index, length = 0, len(srcset)
    while index < length:
        while index < length and (srcset[index] in _ASCII_SPACE or srcset[index] == ","):
            index += 1
        start = index
        while index < length and srcset[index] not in _ASCII_SPACE:
            index += 1
        url = srcset[start:index]
        if url.endswith(","):
            url = url.rstrip(",")
        elif url:
            # Skip the descriptors, up to the comma that ends the candidate (not in parentheses).
            depth = 0
            while index < length:
                char = srcset[index]
                if char == "(":
                    depth += 1
                elif char == ")":
                    depth = max(0, depth - 1)
                elif char == "," and depth == 0:
                    break
                index += 1
        if url:
            urls.append(url)
    return urls


def refresh_url(content: str) -> str | None:
    """The address a ``<meta http-equiv=refresh content=...>`` goes to, if any."""
    match = _REFRESH.match(content)
    rest = match.group(1).strip() if match else ""
    if rest[:1] in ("'", '"'):
        rest = rest[1:].split(rest[0], 1)[0]
    return rest or None


class _Scanner(HTMLParser):
    """Collects ``(offset, address, kind)`` for every fetching attribute and stylesheet."""

    def __init__(self, text: str, svg: bool) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[int, str, str]] = []
        self._svg_depth = 1 if svg else 0
        self._style_at: int | None = None
        self._style: list[str] = []
        self._lines = [0]
        for line in text.splitlines(keepends=True):
            self._lines.append(self._lines[-1] + len(line))

    def _offset(self) -> int:
        line, column = self.getpos()
        return self._lines[min(line - 1, len(self._lines) - 1)] + column

    def _add(self, at: int, address: str, kind: str) -> None:
        self.found.append((at, address, kind))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._element(tag, attrs)
        if tag == "svg":
            self._svg_depth += 1
        elif tag == "style":
            self._style_at, self._style = self._offset(), []

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._element(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag == "svg" and self._svg_depth:
            self._svg_depth -= 1
        elif tag == "style":
            self._end_style()

    def handle_data(self, data: str) -> None:
        if self._style_at is not None:
            self._style.append(data)

    def close(self) -> None:
        super().close()
        self._end_style()

    def _end_style(self) -> None:
        if self._style_at is not None:
            for _, address, kind in css_resources("".join(self._style)):
                self._add(self._style_at, address, kind)
        self._style_at, self._style = None, []

    def handle_pi(self, data: str) -> None:
        if data.lower().startswith("xml-stylesheet"):
            match = _PI_HREF.search(data)
            if match:
                address = match.group(1) if match.group(1) is not None else match.group(2)
                self._add(self._offset(), html.unescape(address), "stylesheet")

    def _element(self, tag: str, pairs: list[tuple[str, str | None]]) -> None:
        at = self._offset()
        attrs: dict[str, str] = {}
        for name, value in pairs:
            attrs.setdefault(name, value or "")  # the first of a repeated attribute counts
        in_svg = self._svg_depth > 0 or tag == "svg"
        if tag == "image" and not in_svg:
            tag = "img"  # the HTML parser reads <image> as <img>
        # In SVG the HTML attributes are read too: an HTML tag there (``<img>``) leaves SVG.
        fetches = _HTML_FETCHES.get(tag, {})
        rels = attrs.get("rel", "").lower().split() if tag == "link" else []
        for name, value in attrs.items():
            if name == "style":
                for _, address, kind in css_resources(value):
                    self._add(at, address, kind)
            elif in_svg and name in ("href", "xlink:href") and tag in _SVG_FETCHES:
                self._add(at, value, _SVG_FETCHES[tag])
            elif in_svg and name in _SVG_URL_ATTRIBUTES:
                for _, address, kind in css_resources(value):
                    self._add(at, address, kind)
            elif tag == "link" and name in ("href", "imagesrcset"):
                kinds = [_LINK_RELS[rel] for rel in rels if rel in _LINK_RELS]
                if kinds and name == "href":
                    self._add(at, value, kinds[0])
                elif kinds and "preload" in rels:
                    for address in srcset_urls(value):
                        self._add(at, address, "link-prefetch")
            elif tag == "input" and name == "src":
                if attrs.get("type", "").strip().lower() == "image":
                    self._add(at, value, "image")
            elif tag == "meta" and name == "content":
                if attrs.get("http-equiv", "").strip().lower() == "refresh":
                    target = refresh_url(value)
                    if target:
                        self._add(at, target, "refresh")
            elif tag == "iframe" and name == "srcdoc":
                for _, address, kind in _html_fetches(value, svg=False):
                    self._add(at, address, kind)
            elif name in fetches:
                if name.endswith("srcset"):
                    for address in srcset_urls(value):
                        self._add(at, address, fetches[name])
                else:
                    self._add(at, value, fetches[name])


def _html_fetches(text: str, svg: bool) -> list[tuple[int, str, str]]:
    scanner = _Scanner(text, svg)
    scanner.feed(text)
    scanner.close()
    return scanner.found


# --- Markdown ------------------------------------------------------------------------------

_FENCE = re.compile(
    r"^ {0,3}(`{3,}|~{3,})[^\n]*\n(?:.*?\n)?(?: {0,3}\1[`~]*[ \t]*(?:\n|\Z)|\Z)", re.M | re.S
)
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
_DEFINITION = re.compile(
    r"^ {0,3}\[((?:[^\[\]\\]|\\.){1,999})\]:[ \t]*\n?[ \t]*(<[^<>\n]*>|\S+)", re.M
)
_ALT = r"((?:[^\[\]\\]|\\.|\[(?:[^\[\]\\]|\\.)*\])*)"
_IMAGE = re.compile(
    r"!\[" + _ALT + r"\]"
    r"(?:\(\s*(<[^<>\n]*>|(?:[^\s()\\]|\\.|\((?:[^\s()\\]|\\.)*\))*)"
    r"|\[((?:[^\[\]\\]|\\.)*)\]"
    r"|(?![\[(]))",
    re.S,
)
_MD_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


def _blank(match: re.Match[str]) -> str:
    """The match replaced by spaces (newlines kept), so offsets stay where they were."""
    return re.sub(r"[^\n]", " ", match.group(0))


def _label(text: str) -> str:
    return " ".join(text.split()).casefold()


def _destination(written: str) -> str:
    if written.startswith("<") and written.endswith(">"):
        written = written[1:-1]
    return html.unescape(_MD_ESCAPE.sub(r"\1", written))


def _markdown_fetches(text: str) -> list[tuple[int, str, str]]:
    text = _CODE_SPAN.sub(_blank, _FENCE.sub(_blank, text))
    definitions: dict[str, str] = {}
    for match in _DEFINITION.finditer(text):
        definitions.setdefault(_label(match.group(1)), _destination(match.group(2)))
    found: list[tuple[int, str, str]] = []
    for match in _IMAGE.finditer(text):
        alt, inline, reference = match.group(1), match.group(2), match.group(3)
        if inline is not None:
            found.append((match.start(), _destination(inline or ""), "image"))
            continue
        label = _label(reference if reference else alt)
        if label in definitions:
            found.append((match.start(), definitions[label], "image"))
    found.extend(_html_fetches(text, svg=False))
    found.sort(key=lambda item: item[0])
    return found


# --- JSON ----------------------------------------------------------------------------------

#: Keys whose values name an address without loading it (a schema's id, a link).
_JSON_SKIPPED_KEYS = frozenset({"$schema", "$id", "href"})


def _json_fetches(value: Any, found: list[tuple[int, str, str]]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if key not in _JSON_SKIPPED_KEYS:
                _json_fetches(item, found)
    elif isinstance(value, list):
        for item in value:
            _json_fetches(item, found)
    elif isinstance(value, str) and not re.search(r"\s", value.strip()):
        found.append((len(found), value, "data"))


# --- The rule ------------------------------------------------------------------------------


def _mime(mime: str) -> str:
    return mime.split(";", 1)[0].strip().lower()


def _is_json(mime: str) -> bool:
    return mime == "application/json" or mime.endswith("+json")


def _fetches(value: Any, mime: str) -> list[tuple[int, str, str]]:
    if _is_json(mime):
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                return []
        found: list[tuple[int, str, str]] = []
        _json_fetches(value, found)
        return found
    if isinstance(value, list):
        value = "".join(str(part) for part in value)
    if not isinstance(value, str):
        return []
    if mime == "text/html":
        return _html_fetches(value, svg=False)
    if mime == "image/svg+xml":
        return _html_fetches(value, svg=True)
    if mime == "text/markdown":
        return _markdown_fetches(value)
    if mime == "text/css":
        return css_resources(value)
    return []


def _remote(found: list[tuple[int, str, str]]) -> list[RemoteResource]:
    resources: dict[RemoteResource, None] = {}
    for _, address, kind in found:
        resource = _resource(address, kind)
        if resource is not None:
            resources.setdefault(resource)
    return list(resources)


def remote_resources(text: str, mime: str) -> list[RemoteResource]:
    """What showing ``text`` as ``mime`` would fetch from other hosts, in reading order, each
    address and kind once. ``mime``: ``text/html``, ``text/markdown``, ``image/svg+xml``,
    ``text/css``, ``application/json`` (or any ``+json``); any other lists nothing."""
    return _remote(_fetches(text, _mime(mime)))


def bundle_remote_resources(bundle: dict[str, Any]) -> list[RemoteResource]:
    """What an nbformat MIME bundle would fetch, whichever of its types is shown. An output
    (``{"output_type": ..., "data": {...}}``) is read through its ``data``."""
    data = bundle["data"] if isinstance(bundle.get("data"), dict) else bundle
    found: list[tuple[int, str, str]] = []
    for mime, value in data.items():
        found.extend(_fetches(value, _mime(mime)))
    return _remote(found)
