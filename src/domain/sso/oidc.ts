/**
 * OpenID Connect sign-in (docs/security.md#openid-connect), with `openid-client`: the SSO
 * connectors of OneDev 8.6's `/~api/settings/sso-connectors` (`"@type": "OpenIdConnector"`, OneDev's
 * fields plus Gitloom's claim names and `accountPolicy`), each a "Sign in with <name>" button.
 * Authorization code flow with PKCE (S256), the provider found by discovery, `state` and `nonce`
 * checked, the ID token validated by openid-client, the profile read from the ID token and the
 * UserInfo endpoint. The client secret is write-only: never answered, kept when an update
 * omits it (matched by connector name), stored encrypted as job secrets are.
 */
import * as oidc from 'openid-client';
import type { ErrorCode } from '../../error-codes.js';
import { BadRequest, Unavailable } from '../../errors.js';
import type { Context } from '../context.js';
import { requireAdmin } from '../actor.js';
import { recordAudit } from '../audit/index.js';
import { findGroupIdByName } from '../access/index.js';
import { decryptSecret, encryptSecret, secretKey } from '../projects/index.js';
import { getStoredSsoConnectors, setStoredSsoConnectors } from '../settings/index.js';
import { oidcProvider } from '../users/index.js';
import { refused, signInExternal } from './accounts.js';
import { ACCOUNT_POLICIES, type AccountPolicy } from './authenticator.js';

/** An OpenID Connect connector as the API shows it (no client secret). */
export interface OpenIdConnector {
  '@type': 'OpenIdConnector';
  /** Shown on the button and part of the callback URL: letters, digits, `_`, `.`, `-`. */
  name: string;
  /** A Gitloom group new users join when `groupsClaim` is null. */
  defaultGroup: string | null;
  /** `https://…/.well-known/openid-configuration` (http only on loopback), or the issuer URL. */
  configurationDiscoveryUrl: string;
  clientId: string;
  /** A claim listing the user's groups (also asked for as a scope), or null. */
  groupsClaim: string | null;
  /** An image shown on the button, or null. */
  buttonImageUrl: string | null;
  /** Gitloom: the claims giving the login name, full name and email. */
  userNameClaim: string;
  fullNameClaim: string;
  emailClaim: string;
  /** Gitloom: what an identity met for the first time becomes. */
  accountPolicy: AccountPolicy;
}

/** A connector as Set SSO Connectors takes it: absent fields defaulted, the write-only secret. */
export type SsoConnectorInput = Partial<Omit<OpenIdConnector, '@type'>> & { '@type': string; clientSecret?: string | null };

type Stored = OpenIdConnector & { encryptedClientSecret: string };

/** Purpose of the client secret's encryption (src/domain/projects/secret-encryption.ts). */
const CLIENT_SECRET = Buffer.from('gitloom oidc client secret');
const CODE = 'GITLOOM_ERR_AUTHENTICATOR_VALUE' satisfies ErrorCode;
const NAME_PATTERN = /^[\w.-]+$/;
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

const invalid = (detail: string) => new BadRequest(detail, { code: CODE });
const text = (value: string | null | undefined): string | null => (typeof value === 'string' && value.trim() !== '' ? value.trim() : null);

function publicForm(stored: object): OpenIdConnector {
  const { encryptedClientSecret: _sealed, ...rest } = stored as Stored;
  return rest;
}

/** Get SSO Connectors (administrators): the connectors in order, without their secrets. */
export async function getSsoConnectors(ctx: Context): Promise<OpenIdConnector[]> {
  requireAdmin(ctx.actor);
  return (await getStoredSsoConnectors(ctx)).map(publicForm);
}

/** The sign-in page's buttons: each connector's name and image, in order (anybody may see them). */
export async function ssoButtons(ctx: Pick<Context, 'db'>): Promise<{ name: string; buttonImageUrl: string | null }[]> {
  return ((await getStoredSsoConnectors(ctx)) as readonly Stored[]).map((c) => ({ name: c.name, buttonImageUrl: c.buttonImageUrl }));
}

/** Whether an http(s) URL may be used: https, or http to this machine (a provider on loopback). */
function secureUrl(value: string): URL | null {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.has(url.hostname)) ? url : null;
  } catch {
    return null;
  }
}

/**
 * Set SSO Connectors (administrators; OneDev's `POST /settings/sso-connectors`): replaces the
 * connectors with `list` (absent fields defaulted). A connector without `clientSecret` keeps
 * the secret of the stored connector of the same name. Records `settings.ssoConnectors` in the
 * audit log, in the same transaction, without the secrets.
 *
 * @throws BadRequest `GITLOOM_ERR_AUTHENTICATOR_VALUE` naming the connector and field: an unknown
 *   `@type`, a name that is no URL segment or used twice, a discovery or image URL that is not
 *   https (http only on loopback), no client id or secret, a claim name empty, a group that does
 *   not exist.
 */
export async function setSsoConnectors(ctx: Context, list: readonly SsoConnectorInput[]): Promise<void> {
  requireAdmin(ctx.actor);
  const previous = (await getStoredSsoConnectors(ctx)) as readonly Stored[];
  const next: Stored[] = [];
  for (const [index, input] of list.entries()) next.push(await checkConnector(ctx, input, `[${index}]`, previous, next));
  await ctx.db.transaction().execute(async (trx) => {
    await setStoredSsoConnectors({ db: trx }, next);
    await recordAudit(ctx, trx, {
      action: 'settings.ssoConnectors',
      targetType: 'settings',
      targetName: 'ssoConnectors',
      before: previous.map(publicForm),
      after: { connectors: next.map(publicForm), clientSecretChanged: list.filter((c) => typeof c.clientSecret === 'string').map((c) => c.name) },
    });
  });
}

async function checkConnector(ctx: Context, input: SsoConnectorInput, at: string, previous: readonly Stored[], checked: readonly Stored[]): Promise<Stored> {
  if (input['@type'] !== 'OpenIdConnector') throw invalid(`${at}.@type: only OpenIdConnector is supported`);
  const name = text(input.name);
  if (name === null || !NAME_PATTERN.test(name)) throw invalid(`${at}.name: letters, digits, '_', '.' and '-' only (it is part of the callback URL)`);
  if (checked.some((c) => c.name === name)) throw invalid(`${at}.name: '${name}' is used by another connector`);
  const configurationDiscoveryUrl = text(input.configurationDiscoveryUrl);
  if (configurationDiscoveryUrl === null || !secureUrl(configurationDiscoveryUrl)) {
    throw invalid(`${at}.configurationDiscoveryUrl: an https URL (http only on this machine)`);
  }
  const clientId = text(input.clientId);
  if (clientId === null) throw invalid(`${at}.clientId: may not be empty`);
  let encryptedClientSecret: string;
  if (typeof input.clientSecret === 'string' && input.clientSecret !== '') {
    encryptedClientSecret = encryptSecret(secretKey(ctx.config), input.clientSecret, CLIENT_SECRET);
  } else {
    const kept = input.clientSecret === undefined ? previous.find((c) => c.name === name)?.encryptedClientSecret : undefined;
    if (!kept) throw invalid(`${at}.clientSecret: may not be empty`);
    encryptedClientSecret = kept;
  }
  const buttonImageUrl = text(input.buttonImageUrl);
  if (buttonImageUrl !== null && !secureUrl(buttonImageUrl)) throw invalid(`${at}.buttonImageUrl: an https URL`);
  const defaultGroup = text(input.defaultGroup);
  if (defaultGroup !== null && (await findGroupIdByName(ctx.db, defaultGroup)) === undefined)
    throw invalid(`${at}.defaultGroup: no group named '${defaultGroup}'`);
  const claim = (field: 'userNameClaim' | 'fullNameClaim' | 'emailClaim', fallback: string) => {
    if (input[field] === undefined) return fallback;
    const value = text(input[field]);
    if (value === null) throw invalid(`${at}.${field}: may not be empty`);
    return value;
  };
  const accountPolicy = input.accountPolicy ?? 'CREATE_ACCOUNT';
  if (!ACCOUNT_POLICIES.includes(accountPolicy)) throw invalid(`${at}.accountPolicy: one of ${ACCOUNT_POLICIES.join(', ')}`);
  return {
    '@type': 'OpenIdConnector',
    name,
    defaultGroup,
    configurationDiscoveryUrl,
    clientId,
    groupsClaim: text(input.groupsClaim),
    buttonImageUrl,
    userNameClaim: claim('userNameClaim', 'preferred_username'),
    fullNameClaim: claim('fullNameClaim', 'name'),
    emailClaim: claim('emailClaim', 'email'),
    accountPolicy,
    encryptedClientSecret,
  };
}

/** The callback path of a connector: OneDev's `/~sso/callback/<name>`. */
export const ssoCallbackPath = (connectorName: string): string => `/~sso/callback/${encodeURIComponent(connectorName)}`;

/** What a started sign-in keeps in the browser until the provider sends it back (signed, HttpOnly). */
export interface PendingSignIn {
  connector: string;
  state: string;
  nonce: string;
  codeVerifier: string;
}

async function connectorNamed(ctx: Pick<Context, 'db'>, name: string): Promise<Stored> {
  const connector = ((await getStoredSsoConnectors(ctx)) as readonly Stored[]).find((c) => c.name === name);
  if (!connector) throw refused(`Unable to find SSO connector: ${name}`);
  return connector;
}

/** The provider's configuration by discovery; 503 when it does not answer. */
async function discover(ctx: Pick<Context, 'config'>, connector: Stored): Promise<oidc.Configuration> {
  const url = new URL(connector.configurationDiscoveryUrl);
  const secret = decryptSecret(secretKey(ctx.config), connector.encryptedClientSecret, CLIENT_SECRET);
  try {
    return await oidc.discovery(url, connector.clientId, undefined, oidc.ClientSecretBasic(secret), {
      // http is accepted for a provider on loopback only (checked when set)
      ...(url.protocol === 'http:' && { execute: [oidc.allowInsecureRequests] }),
      timeout: 30,
    });
  } catch (cause) {
    throw new Unavailable(`The OpenID provider of '${connector.name}' does not answer: ${(cause as Error).message}`, 30, {
      code: 'GITLOOM_ERR_SSO_PROVIDER_UNAVAILABLE',
      cause,
    });
  }
}

/**
 * Starts a sign-in with a connector: the provider's authorization URL (code flow, PKCE S256,
 * scopes `openid email profile` and the groups claim) and what the browser must keep until the
 * callback.
 *
 * @throws Unauthorized `GITLOOM_ERR_SSO_REFUSED` for an unknown connector; Unavailable (503)
 *   when the provider's discovery fails.
 */
export async function beginOidcSignIn(ctx: Context, connectorName: string): Promise<{ authorizationUrl: string; pending: PendingSignIn }> {
  const connector = await connectorNamed(ctx, connectorName);
  const config = await discover(ctx, connector);
  const codeVerifier = oidc.randomPKCECodeVerifier();
  const pending: PendingSignIn = { connector: connector.name, state: oidc.randomState(), nonce: oidc.randomNonce(), codeVerifier };
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: `${ctx.config.serverUrl}${ssoCallbackPath(connector.name)}`,
    scope: ['openid', 'email', 'profile', ...(connector.groupsClaim ? [connector.groupsClaim] : [])].join(' '),
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
    state: pending.state,
    nonce: pending.nonce,
  });
  return { authorizationUrl: url.href, pending };
}

const claimText = (value: unknown): string | null => {
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' && first.trim() !== '' ? first.trim() : null;
};

/**
 * Finishes a sign-in at the callback: checks that the response belongs to the sign-in this
 * browser started (`pending`, its `state`), exchanges the code (PKCE verifier; ID token and its
 * `nonce` validated by openid-client), reads the claims (ID token, then UserInfo) and signs the
 * identity in (src/domain/sso/accounts.ts). Returns the user.
 *
 * @param query the callback's query string (without `?`).
 * @throws Unauthorized `GITLOOM_ERR_SSO_REFUSED` with the reason (unsolicited or tampered
 *   response, an error from the provider, a refused account); Unavailable (503) when the
 *   provider does not answer.
 */
export async function finishOidcSignIn(
  ctx: Context,
  connectorName: string,
  query: string,
  pending: PendingSignIn | null,
): Promise<{ id: number; name: string }> {
  const params = new URLSearchParams(query);
  const fail = async (reason: string): Promise<never> => {
    await recordAudit(ctx, ctx.db, {
      action: 'signIn.oidc',
      targetType: 'user',
      actor: { id: null, name: '' },
      after: { success: false, connector: connectorName, reason },
    });
    throw refused(reason);
  };
  if (pending === null || pending.connector !== connectorName) return fail('Unsolicited OIDC authentication response: start the sign-in again');
  if (params.get('state') !== pending.state)
    return fail('The OIDC authentication response does not match the sign-in started here (state): start the sign-in again');
  const connector = await connectorNamed(ctx, connectorName);
  const config = await discover(ctx, connector);
  let claims: Record<string, unknown>;
  try {
    const tokens = await oidc.authorizationCodeGrant(config, new URL(`${ctx.config.serverUrl}${ssoCallbackPath(connector.name)}?${query}`), {
      pkceCodeVerifier: pending.codeVerifier,
      expectedState: pending.state,
      expectedNonce: pending.nonce,
      idTokenExpected: true,
    });
    const idClaims = tokens.claims()!;
    const userInfo = config.serverMetadata().userinfo_endpoint ? await oidc.fetchUserInfo(config, tokens.access_token, idClaims.sub) : {};
    claims = { ...idClaims, ...userInfo };
  } catch (error) {
    return fail(`OIDC error: ${(error as Error).message}`);
  }
  const email = claimText(claims[connector.emailClaim])?.toLowerCase() ?? null;
  const proposed = claimText(claims[connector.userNameClaim]) ?? email;
  if (proposed === null) return fail(`OIDC error: no '${connector.userNameClaim}' or '${connector.emailClaim}' claim returned`);
  const rawGroups = connector.groupsClaim ? claims[connector.groupsClaim] : undefined;
  const groups =
    connector.groupsClaim === null
      ? null
      : (Array.isArray(rawGroups) ? rawGroups : rawGroups === undefined ? [] : [rawGroups]).filter((g): g is string => typeof g === 'string');
  return signInExternal(ctx, {
    action: 'signIn.oidc',
    // OneDev's rule: the login name is the part of the claim before any '@'
    profile: {
      provider: oidcProvider(connector.name),
      subject: String(claims.sub),
      name: proposed.split('@')[0],
      fullName: claimText(claims[connector.fullNameClaim]),
      email,
    },
    emailVerified: claims.email_verified === true,
    groups,
    defaultGroup: connector.defaultGroup,
    accountPolicy: connector.accountPolicy,
  });
}
