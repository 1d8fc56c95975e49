"""A loopback OpenID Connect identity provider for the hub tests.

docs/deploy.md logs users in with OAuthenticator's GenericOAuthenticator against an identity
provider (a Keycloak realm) whose ``userinfo`` answer carries each user's gateway key as the
``llm_key`` claim. No identity provider runs here, so this one stands in, on a loopback port,
with the page's paths (``/realms/uni/protocol/openid-connect/{auth,token,userinfo}``): the
authorization code flow as the hub drives it (a login form, the code, the token exchange with
the client's secret and PKCE, the ``userinfo`` answer for the access token), so the page's
authenticator and hook run unchanged and keep the auth state they keep in production.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import secrets
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

#: The page's OpenID Connect endpoints, under the identity provider's address.
REALM = "/realms/uni/protocol/openid-connect"


@dataclass
class _Grant:
    user: str
    client_id: str
    redirect_uri: str
    code_challenge: str


@dataclass
class IdentityProvider:
    """Users who log in with ``password``, each with their ``claims`` in ``userinfo``."""

    client_id: str
    client_secret: str
    password: str
    claims: dict[str, dict[str, str]]
    #: Every request that reached it, as (method, path): what the hub asked.
    requests: list[tuple[str, str]] = field(default_factory=list)
    _codes: dict[str, _Grant] = field(default_factory=dict)
    _tokens: dict[str, str] = field(default_factory=dict)
    _httpd: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        """Its address (what stands for the page's ``https://login.example.org``)."""
        assert self._httpd is not None, "not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self) -> IdentityProvider:
        provider = self

        class Handler(_Handler):
            idp = provider

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    # -- the endpoints -------------------------------------------------------------------------

    def authorize(self, query: dict[str, str], form: dict[str, str] | None) -> tuple[int, Any]:
        """``auth``: the login form (GET), then the redirect back with a code (POST)."""
        if query.get("response_type") != "code" or query.get("client_id") != self.client_id:
            return 400, {"error": "invalid_request"}
        if query.get("code_challenge_method", "S256") != "S256":
            return 400, {"error": "invalid_request"}
        if form is None:
            return 200, _LOGIN_FORM.format(query=html.escape(urlencode(query)))
        user = form.get("username", "")
        if user not in self.claims or form.get("password") != self.password:
            return 401, _LOGIN_FORM.format(query=html.escape(urlencode(query)))
        code = secrets.token_urlsafe(16)
        self._codes[code] = _Grant(
            user, query["client_id"], query["redirect_uri"], query.get("code_challenge", "")
        )
        back = {"code": code, "state": query.get("state", "")}
        return 302, f"{query['redirect_uri']}?{urlencode(back)}"

    def token(self, form: dict[str, str], authorization: str) -> tuple[int, Any]:
        """``token``: a code (once) for an access token, to the client with its secret."""
        client_id, client_secret = form.get("client_id"), form.get("client_secret")
        if authorization.startswith("Basic "):
            decoded = base64.b64decode(authorization[6:]).decode()
            client_id, _, client_secret = decoded.partition(":")
        if (client_id, client_secret) != (self.client_id, self.client_secret):
            return 401, {"error": "invalid_client", "error_description": "bad client"}
        grant = self._codes.pop(form.get("code", ""), None)
        verifier = form.get("code_verifier", "")
        if (
            form.get("grant_type") != "authorization_code"
            or grant is None
            or grant.redirect_uri != form.get("redirect_uri")
            or (grant.code_challenge and _s256(verifier) != grant.code_challenge)
        ):
            return 400, {"error": "invalid_grant", "error_description": "bad code"}
        access_token = secrets.token_urlsafe(24)
        self._tokens[access_token] = grant.user
        return 200, {
            "access_token": access_token,
            "token_type": "Bearer",
            "expires_in": 3600,
            "scope": "openid profile",
        }

    def userinfo(self, authorization: str) -> tuple[int, Any]:
        """``userinfo``: the claims of the access token's user."""
        user = self._tokens.get(authorization.removeprefix("Bearer ").strip())
        if user is None:
            return 401, {"error": "invalid_token"}
        return 200, {"sub": f"id-{user}", "preferred_username": user, **self.claims[user]}


def _s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode()).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


_LOGIN_FORM = """<!doctype html>
<form method="post" action="?{query}"><input name="username"><input name="password" type="password">
<button>Sign in</button></form>
"""


class _Handler(BaseHTTPRequestHandler):
    idp: IdentityProvider

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        self._serve(None)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode()
        self._serve({k: v[0] for k, v in parse_qs(body).items()})

    def _serve(self, form: dict[str, str] | None) -> None:
        parts = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        self.idp.requests.append((self.command, parts.path))
        authorization = self.headers.get("Authorization", "")
        if parts.path == f"{REALM}/auth":
            status, answer = self.idp.authorize(query, form)
        elif parts.path == f"{REALM}/token" and form is not None:
            status, answer = self.idp.token(form, authorization)
        elif parts.path == f"{REALM}/userinfo" and form is None:
            status, answer = self.idp.userinfo(authorization)
        else:
            status, answer = 404, {"error": "not_found"}
        if status == 302:
            self.send_response(302)
            self.send_header("Location", answer)
            body = b""
        else:
            self.send_response(status)
            is_json = not isinstance(answer, str)
            body = (json.dumps(answer) if is_json else answer).encode()
            self.send_header("Content-Type", "application/json" if is_json else "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
