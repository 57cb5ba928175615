/**
 * A real OpenID Connect provider for the single sign-on tests: `oidc-provider` in this process, on
 * a free port of loopback, with its development sign-in pages (any login; the accounts below give
 * the claims), PKCE required, a `groups` scope and claim.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/** A person the provider knows: the login typed on its sign-in page is the key. */
export interface OidcAccount {
  preferred_username?: string;
  name?: string;
  email?: string;
  email_verified?: boolean;
  groups?: string[];
}

/** A running provider. */
export interface TestOidcProvider {
  /** The issuer, `http://127.0.0.1:<port>`. */
  issuer: string;
  /** `<issuer>/.well-known/openid-configuration`. */
  discoveryUrl: string;
  clientId: string;
  clientSecret: string;
  close(): Promise<void>;
}

/**
 * Starts a provider with one confidential client whose redirect URIs are `redirectUris` and the
 * accounts of `accounts` (by login; an unknown login signs in with only its `sub`).
 */
export async function startTestOidcProvider(redirectUris: string[], accounts: Record<string, OidcAccount>): Promise<TestOidcProvider> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'gitloom';
  const clientSecret = 'a-client-secret-of-at-least-32-characters';
  const provider = new Provider(issuer, {
    clients: [{ client_id: clientId, client_secret: clientSecret, redirect_uris: redirectUris, grant_types: ['authorization_code'], response_types: ['code'] }],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'preferred_username'], groups: ['groups'] },
    scopes: ['openid', 'email', 'profile', 'groups'],
    features: { devInteractions: { enabled: true } },
    pkce: { required: () => true },
    cookies: { keys: ['test-cookie-key'] },
    findAccount: async (_ctx, id) => ({ accountId: id, claims: async () => ({ sub: id, ...accounts[id] }) }),
  });
  server.on('request', provider.callback());
  return {
    issuer,
    discoveryUrl: `${issuer}/.well-known/openid-configuration`,
    clientId,
    clientSecret,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
