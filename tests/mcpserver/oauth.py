"""The test server's own OAuth authorization server (issue #40): in memory, and its one "user" always
approves (or with `deny`, always refuses), so a client's whole OAuth flow runs with no login page.

It implements the SDK's `OAuthAuthorizationServerProvider`; the SDK serves the endpoints around it
(/register, /authorize, /token, both metadata documents) and checks PKCE, redirect URIs and client
secrets itself. What is left here: clients, codes and tokens in dicts; access tokens that expire
after `ttl` seconds and are then refused (so a client must refresh); refresh tokens rotated on use.
Each event appends one line to the marker file, for tests to count: `oauth:register`,
`oauth:authorize` (and `oauth:deny` after it when refusing), `oauth:token` (a code exchanged),
`oauth:refresh`, `oauth:reject` (a bearer token refused: unknown or expired).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    OAuthAuthorizationServerProvider,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

SUBJECT = "test-user"  # the one resource owner, who approves everything
CODE_TTL_S = 300


def settings(base_url: str) -> AuthSettings:
    """The SDK's auth settings for a server at `base_url` (`http://127.0.0.1:PORT`): it is its own
    issuer and the protected resource, with dynamic client registration."""
    return AuthSettings(issuer_url=base_url, resource_server_url=base_url, validate_token_resource=True,
                        client_registration_options=ClientRegistrationOptions(enabled=True))


class TestOAuthProvider(OAuthAuthorizationServerProvider[AuthorizationCode, RefreshToken, AccessToken]):
    """An auto-approving, in-memory `OAuthAuthorizationServerProvider` for `base_url`."""

    __test__ = False  # not a pytest test class, whatever its name

    def __init__(self, base_url: str, *, ttl: int = 3600, deny: bool = False,
                 mark: Callable[[str], None] | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.ttl = ttl
        self.deny = deny
        self.mark = mark or (lambda _event: None)
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, tuple[AccessToken, float]] = {}  # token -> (token, expiry as time.time())
        self.refresh: dict[str, RefreshToken] = {}

    # clients (dynamic registration)

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info
        self.mark("oauth:register")

    # the authorization endpoint: no page, the answer is immediate

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        self.mark("oauth:authorize")
        if self.deny:
            self.mark("oauth:deny")
            raise AuthorizeError("access_denied", "the user denied access")
        if params.resource is not None and not self._ours(params.resource):
            raise AuthorizeError("invalid_target", f"this server grants access to {self.base_url} only")
        assert client.client_id is not None
        code = secrets.token_urlsafe(32)
        self.codes[code] = AuthorizationCode(
            code=code, scopes=params.scopes or [], expires_at=time.time() + CODE_TTL_S, client_id=client.client_id,
            code_challenge=params.code_challenge, redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly, resource=self.base_url,
            subject=SUBJECT)
        # RFC 9207's `iss` too: a client that checks it finds the issuer of the metadata
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state, iss=self.base_url)

    def _ours(self, resource: str) -> bool:
        """This server, or a path on it (`.../mcp`), as an RFC 8707 resource indicator."""
        resource = resource.rstrip("/")
        return resource == self.base_url or resource.startswith(self.base_url + "/")

    # the token endpoint

    async def load_authorization_code(self, client: OAuthClientInformationFull,
                                      authorization_code: str) -> AuthorizationCode | None:
        code = self.codes.get(authorization_code)
        return code if code is not None and code.client_id == client.client_id else None

    async def exchange_authorization_code(self, client: OAuthClientInformationFull,
                                          authorization_code: AuthorizationCode) -> OAuthToken:
        if self.codes.pop(authorization_code.code, None) is None:  # a code is good once
            raise TokenError("invalid_grant", "authorization code already used")
        self.mark("oauth:token")
        return self._issue(authorization_code.client_id, authorization_code.scopes)

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        token = self.refresh.get(refresh_token)
        return token if token is not None and token.client_id == client.client_id else None

    async def exchange_refresh_token(self, client: OAuthClientInformationFull, refresh_token: RefreshToken,
                                     scopes: list[str]) -> OAuthToken:
        if self.refresh.pop(refresh_token.token, None) is None:  # rotated: the old one is good once
            raise TokenError("invalid_grant", "refresh token already used")
        self.mark("oauth:refresh")
        return self._issue(refresh_token.client_id, scopes)

    def _issue(self, client_id: str, scopes: list[str]) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        expiry = time.time() + self.ttl
        self.access[access] = (AccessToken(token=access, client_id=client_id, scopes=scopes,
                                           expires_at=int(expiry) + 1, resource=self.base_url,
                                           subject=SUBJECT), expiry)
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes,
                                             resource=self.base_url, subject=SUBJECT)
        return OAuthToken(access_token=access, expires_in=self.ttl, scope=" ".join(scopes) or None,
                          refresh_token=refresh)

    # the resource server's side: each bearer token on a request

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or time.time() >= found[1]:
            self.access.pop(token, None)
            self.mark("oauth:reject")
            return None
        return found[0]

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)
