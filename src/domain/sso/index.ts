/**
 * The door of the sso area (docs/architecture.md#domain-areas): single sign-on
 * (docs/security.md#single-sign-on) — the LDAP authenticator checked by password sign-ins and
 * the OpenID Connect connectors, and the accounts of the identities they vouch for.
 */
export { type AuthenticatorInput, getAuthenticator, LDAP_AUTHENTICATOR_CLASS, setAuthenticator } from './authenticator.js';
export { signInWithDirectory, usesDirectory } from './ldap.js';
export {
  beginOidcSignIn,
  finishOidcSignIn,
  getSsoConnectors,
  type OpenIdConnector,
  type PendingSignIn,
  setSsoConnectors,
  ssoButtons,
  ssoCallbackPath,
  type SsoConnectorInput,
} from './oidc.js';
export { renameSsoGroupReferences, ssoGroupUsages } from './group-references.js';
