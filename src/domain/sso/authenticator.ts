/**
 * The external authenticator (docs/security.md#ldap-authenticator): OneDev 8.6's
 * `/~api/settings/authenticator`, one LDAP directory checked by password sign-ins. Its JSON is
 * OneDev's `LdapAuthenticator` (`"@class"` first) with two Gitloom fields, `userDNPattern` (bind
 * as the user without searching) and `accountPolicy`. The manager password is write-only: never
 * answered, kept when an update omits it, stored encrypted as job secrets are.
 */
import type { ErrorCode } from '../../error-codes.js';
import { BadRequest } from '../../errors.js';
import type { Context } from '../context.js';
import { requireAdmin } from '../actor.js';
import { recordAudit } from '../audit/index.js';
import { findGroupIdByName } from '../access/index.js';
import { decryptSecret, encryptSecret, secretKey } from '../projects/index.js';
import { getStoredAuthenticator, setStoredAuthenticator } from '../settings/index.js';

/** OneDev's class id of the generic LDAP authenticator. */
export const LDAP_AUTHENTICATOR_CLASS = 'io.onedev.server.plugin.authenticator.ldap.LdapAuthenticator';

/** What an identity met for the first time becomes (docs/security.md#accounts-of-external-identities). */
export type AccountPolicy = 'CREATE_ACCOUNT' | 'LINK_BY_EMAIL';
export const ACCOUNT_POLICIES: readonly AccountPolicy[] = ['CREATE_ACCOUNT', 'LINK_BY_EMAIL'];

/** How the groups of a directory user are found (OneDev's `GroupRetrieval`). */
export type GroupRetrieval =
  | { '@type': 'DoNotRetrieveGroups' }
  | { '@type': 'SearchGroupsUsingFilter'; groupSearchBase: string; groupSearchFilter: string; groupNameAttribute: string }
  | { '@type': 'GetGroupsUsingAttribute'; userGroupsAttribute: string; groupNameAttribute: string };

/** The authenticator as the API shows it (no manager password). */
export interface LdapAuthenticator {
  '@class': typeof LDAP_AUTHENTICATOR_CLASS;
  /** Network timeout of each directory operation, seconds. */
  timeout: number;
  /** A Gitloom group new users join when groups are not retrieved. */
  defaultGroup: string | null;
  ldapUrl: string;
  authenticationRequired: boolean;
  managerDN: string | null;
  userSearchBase: string | null;
  userSearchFilter: string | null;
  userFullNameAttribute: string | null;
  userEmailAttribute: string | null;
  /** OneDev syncs SSH keys from this attribute; Gitloom does not, so it must stay null. */
  userSshKeyAttribute: null;
  groupRetrieval: GroupRetrieval;
  /** Gitloom: bind as `userDNPattern` with `{0}` the login name (escaped), no search. */
  userDNPattern: string | null;
  /** Gitloom: what an unknown directory user becomes. */
  accountPolicy: AccountPolicy;
}

/** The authenticator with its manager password, for signing in. */
export interface DirectorySettings extends LdapAuthenticator {
  managerPassword: string | null;
}

/** The body of Set Authenticator: the API form, absent fields defaulted, and the write-only password. */
export type AuthenticatorInput = Partial<Omit<LdapAuthenticator, '@class' | 'userSshKeyAttribute'>> & {
  '@class': string;
  userSshKeyAttribute?: string | null;
  managerPassword?: string | null;
};

/** Purpose of the manager password's encryption (src/domain/projects/secret-encryption.ts). */
const MANAGER_PASSWORD = Buffer.from('gitloom ldap manager password');
const CODE = 'GITLOOM_ERR_AUTHENTICATOR_VALUE' satisfies ErrorCode;

const invalid = (detail: string) => new BadRequest(detail, { code: CODE });
const text = (value: string | null | undefined): string | null => (typeof value === 'string' && value.trim() !== '' ? value.trim() : null);

/** The stored form: the API form plus the sealed password. */
type Stored = LdapAuthenticator & { encryptedManagerPassword: string | null };

function publicForm(stored: object): LdapAuthenticator {
  const { encryptedManagerPassword: _sealed, ...rest } = stored as Stored;
  return rest;
}

/**
 * Get Authenticator (administrators): the authenticator without its manager password, or null
 * when none is set (the API answers 204 then).
 */
export async function getAuthenticator(ctx: Context): Promise<LdapAuthenticator | null> {
  requireAdmin(ctx.actor);
  const stored = await getStoredAuthenticator(ctx);
  return stored && publicForm(stored);
}

/**
 * The authenticator with its manager password decrypted, for a sign-in; null when none is set.
 */
export async function directorySettings(ctx: Pick<Context, 'db' | 'config'>): Promise<DirectorySettings | null> {
  const stored = (await getStoredAuthenticator(ctx)) as Stored | null;
  if (!stored) return null;
  const sealed = stored.encryptedManagerPassword;
  return { ...publicForm(stored), managerPassword: sealed ? decryptSecret(secretKey(ctx.config), sealed, MANAGER_PASSWORD) : null };
}

function checkGroupRetrieval(value: unknown): GroupRetrieval {
  const g = (value ?? { '@type': 'DoNotRetrieveGroups' }) as Record<string, string | undefined>;
  const required = (field: string) => {
    const v = text(g[field]);
    if (v === null) throw invalid(`groupRetrieval.${field}: may not be empty`);
    return v;
  };
  switch (g['@type']) {
    case 'DoNotRetrieveGroups':
      return { '@type': 'DoNotRetrieveGroups' };
    case 'SearchGroupsUsingFilter': {
      const groupSearchFilter = required('groupSearchFilter');
      if (!groupSearchFilter.includes('{0}')) throw invalid('groupRetrieval.groupSearchFilter: must hold {0}, the DN of the user');
      return {
        '@type': 'SearchGroupsUsingFilter',
        groupSearchBase: required('groupSearchBase'),
        groupSearchFilter,
        groupNameAttribute: text(g.groupNameAttribute) ?? 'cn',
      };
    }
    case 'GetGroupsUsingAttribute':
      return {
        '@type': 'GetGroupsUsingAttribute',
        userGroupsAttribute: required('userGroupsAttribute'),
        groupNameAttribute: text(g.groupNameAttribute) ?? 'cn',
      };
    default:
      throw invalid(`groupRetrieval: unknown @type ${JSON.stringify(g['@type'])}`);
  }
}

/**
 * Set Authenticator (administrators; OneDev's `POST /settings/authenticator`): replaces the
 * authenticator with `input` (absent fields take OneDev's defaults), or removes it (null). An
 * omitted `managerPassword` keeps the stored one. Records `settings.authenticator` in the audit
 * log, in the same transaction, without the password.
 *
 * @throws BadRequest `GITLOOM_ERR_AUTHENTICATOR_VALUE` naming the field: no body, an unknown `@class`, a
 *   URL that is not `ldap://` or `ldaps://`, neither a DN pattern nor a search base and filter
 *   holding `{0}`, a manager without a password, a group that does not exist, an SSH key
 *   attribute (not supported), a timeout outside 1–3600 s.
 */
export async function setAuthenticator(ctx: Context, input: AuthenticatorInput | null | undefined): Promise<void> {
  requireAdmin(ctx.actor);
  if (input === undefined) throw invalid('A body is required: the authenticator, or null to remove it');
  const previous = (await getStoredAuthenticator(ctx)) as Stored | null;
  const next = input === null ? null : await checkAuthenticator(ctx, input, previous);
  await ctx.db.transaction().execute(async (trx) => {
    await setStoredAuthenticator({ db: trx }, next);
    await recordAudit(ctx, trx, {
      action: 'settings.authenticator',
      targetType: 'settings',
      targetName: 'authenticator',
      before: previous && publicForm(previous),
      after: next && { ...publicForm(next), managerPasswordChanged: typeof input?.managerPassword === 'string' },
    });
  });
}

async function checkAuthenticator(ctx: Context, input: AuthenticatorInput, previous: Stored | null): Promise<Stored> {
  if (input['@class'] !== LDAP_AUTHENTICATOR_CLASS) throw invalid(`@class: only ${LDAP_AUTHENTICATOR_CLASS} is supported`);
  const ldapUrl = text(input.ldapUrl);
  if (ldapUrl === null || !/^ldaps?:\/\/[^/?#\s]+\/?$/i.test(ldapUrl))
    throw invalid('ldapUrl: an ldap:// or ldaps:// URL of a server, for example ldap://localhost');
  const timeout = input.timeout ?? 300;
  if (!Number.isInteger(timeout) || timeout < 1 || timeout > 3600) throw invalid('timeout: seconds, from 1 to 3600');
  if (text(input.userSshKeyAttribute) !== null) throw invalid('userSshKeyAttribute: SSH keys are not taken from the directory; leave it null');
  const userDNPattern = text(input.userDNPattern);
  const userSearchBase = text(input.userSearchBase);
  const userSearchFilter = text(input.userSearchFilter);
  if (userDNPattern !== null) {
    if (!userDNPattern.includes('{0}')) throw invalid('userDNPattern: must hold {0}, the login name');
  } else {
    if (userSearchBase === null) throw invalid('userSearchBase: may not be empty (or give userDNPattern)');
    if (userSearchFilter === null || !userSearchFilter.includes('{0}')) throw invalid('userSearchFilter: must hold {0}, the login name');
  }
  const authenticationRequired = input.authenticationRequired ?? false;
  const managerDN = authenticationRequired ? text(input.managerDN) : null;
  let encryptedManagerPassword: string | null = null;
  if (authenticationRequired) {
    if (managerDN === null) throw invalid('managerDN: may not be empty when authenticationRequired');
    if (typeof input.managerPassword === 'string' && input.managerPassword !== '') {
      encryptedManagerPassword = encryptSecret(secretKey(ctx.config), input.managerPassword, MANAGER_PASSWORD);
    } else if (input.managerPassword === undefined && previous?.encryptedManagerPassword) {
      encryptedManagerPassword = previous.encryptedManagerPassword;
    } else {
      throw invalid('managerPassword: may not be empty when authenticationRequired');
    }
  }
  const defaultGroup = text(input.defaultGroup);
  if (defaultGroup !== null && (await findGroupIdByName(ctx.db, defaultGroup)) === undefined) throw invalid(`defaultGroup: no group named '${defaultGroup}'`);
  const accountPolicy = input.accountPolicy ?? 'CREATE_ACCOUNT';
  if (!ACCOUNT_POLICIES.includes(accountPolicy)) throw invalid(`accountPolicy: one of ${ACCOUNT_POLICIES.join(', ')}`);
  return {
    '@class': LDAP_AUTHENTICATOR_CLASS,
    timeout,
    defaultGroup,
    ldapUrl,
    authenticationRequired,
    managerDN,
    userSearchBase,
    userSearchFilter,
    userFullNameAttribute: input.userFullNameAttribute === undefined ? 'displayName' : text(input.userFullNameAttribute),
    userEmailAttribute: input.userEmailAttribute === undefined ? 'mail' : text(input.userEmailAttribute),
    userSshKeyAttribute: null,
    groupRetrieval: checkGroupRetrieval(input.groupRetrieval),
    userDNPattern,
    accountPolicy,
    encryptedManagerPassword,
  };
}
