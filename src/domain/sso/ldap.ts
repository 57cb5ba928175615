/**
 * Password sign-in through the directory of the authenticator (docs/security.md#ldap-authenticator),
 * with `ldapts`: bind as the user (`userDNPattern`) or search the user's entry (as the manager
 * when `authenticationRequired`) then bind as it; read the full name and email attributes and
 * the groups; sign the identity in (src/domain/sso/accounts.ts). Login names are escaped in
 * filters (RFC 4515) and in DNs (RFC 4514).
 */
import { Client, Filter, InvalidCredentialsError, InvalidDNSyntaxError, type Entry } from 'ldapts';
import { Unavailable } from '../../errors.js';
import type { Context } from '../context.js';
import { getStoredAuthenticator } from '../settings/index.js';
import { LDAP_PROVIDER } from '../users/index.js';
import { directorySettings, type DirectorySettings } from './authenticator.js';
import { recordSignInFailure, signInExternal } from './accounts.js';

/** Seconds a client should wait before trying again after the directory did not answer. */
const RETRY_AFTER_SECONDS = 30;

/** The message of a sign-in the directory could not decide (503, `GITLOOM_ERR_DIRECTORY_UNAVAILABLE`). */
const DIRECTORY_UNAVAILABLE = 'The directory server is not available: sign-in of directory users is not possible right now, try again later';

/**
 * `value` escaped as an attribute value of a DN (RFC 4514 §2.4): a backslash before `" + , ; < > \ =`,
 * a leading `#` or space and a trailing space; NUL as `\00`.
 */
function escapeDnValue(value: string): string {
  return value
    .replace(/["+,;<>\\=]/g, (c) => `\\${c}`)
    .replaceAll('\0', '\\00')
    .replace(/^[ #]/, (c) => `\\${c}`)
    .replace(/ $/, '\\ ');
}

/** The first value of an attribute of an entry as text, or null. */
function firstValue(entry: Entry, attribute: string | null): string | null {
  if (attribute === null) return null;
  const key = Object.keys(entry).find((k) => k.toLowerCase() === attribute.toLowerCase());
  const value = key === undefined ? undefined : entry[key];
  const first = Array.isArray(value) ? value[0] : value;
  if (first === undefined) return null;
  const text = Buffer.isBuffer(first) ? first.toString('utf8') : String(first);
  return text.trim() === '' ? null : text.trim();
}

/** Every value of an attribute of an entry as text. */
function allValues(entry: Entry, attribute: string): string[] {
  const key = Object.keys(entry).find((k) => k.toLowerCase() === attribute.toLowerCase());
  const value = key === undefined ? [] : entry[key];
  return (Array.isArray(value) ? value : [value]).map((v) => (Buffer.isBuffer(v) ? v.toString('utf8') : String(v)));
}

/** What the directory says about a user whose password it accepted. */
interface DirectoryUser {
  dn: string;
  fullName: string | null;
  email: string | null;
  /** Group names, or null when the authenticator does not retrieve groups. */
  groups: string[] | null;
}

/**
 * Checks `name` and `password` against the directory: the user's entry and groups, or null when
 * the directory does not know the name or refuses the password.
 *
 * @throws anything ldapts throws but a refused user bind (the caller classifies it).
 */
async function checkWithDirectory(settings: DirectorySettings, name: string, password: string): Promise<DirectoryUser | null> {
  const options = { url: settings.ldapUrl, timeout: settings.timeout * 1000, connectTimeout: settings.timeout * 1000 };
  const attributes = [settings.userFullNameAttribute, settings.userEmailAttribute].filter((a): a is string => a !== null);
  const retrieval = settings.groupRetrieval;
  if (retrieval['@type'] === 'GetGroupsUsingAttribute') attributes.push(retrieval.userGroupsAttribute);
  // the connection that reads: the manager's (search mode) or the user's own (DN pattern mode)
  const reader = new Client(options);
  const userClient = new Client(options);
  try {
    let entry: Entry;
    if (settings.userDNPattern !== null) {
      const dn = settings.userDNPattern.replaceAll('{0}', escapeDnValue(name));
      if (!(await bindAsUser(reader, dn, password))) return null;
      const { searchEntries } = await reader.search(dn, { scope: 'base', attributes });
      if (searchEntries.length !== 1) return null;
      entry = searchEntries[0];
    } else {
      if (settings.authenticationRequired) await reader.bind(settings.managerDN ?? '', settings.managerPassword ?? '');
      const filter = (settings.userSearchFilter ?? '').replaceAll('{0}', Filter.escape(name));
      const { searchEntries } = await reader.search(settings.userSearchBase ?? '', { scope: 'sub', filter, attributes, sizeLimit: 2 });
      // an unknown name, or one naming several entries: no user of the directory
      if (searchEntries.length !== 1) return null;
      entry = searchEntries[0];
      if (!(await bindAsUser(userClient, entry.dn, password))) return null;
    }
    return {
      dn: entry.dn,
      fullName: firstValue(entry, settings.userFullNameAttribute),
      email: firstValue(entry, settings.userEmailAttribute)?.toLowerCase() ?? null,
      groups: await groupsOf(reader, settings, entry),
    };
  } finally {
    await Promise.allSettled([reader.unbind(), userClient.unbind()]);
  }
}

/** Binds as a user; false when the directory refuses the DN or the password. */
async function bindAsUser(client: Client, dn: string, password: string): Promise<boolean> {
  try {
    await client.bind(dn, password);
    return true;
  } catch (error) {
    if (error instanceof InvalidCredentialsError || error instanceof InvalidDNSyntaxError) return false;
    throw error;
  }
}

/** The names of the user's groups as the authenticator retrieves them, or null when it does not. */
async function groupsOf(client: Client, settings: DirectorySettings, entry: Entry): Promise<string[] | null> {
  const retrieval = settings.groupRetrieval;
  if (retrieval['@type'] === 'DoNotRetrieveGroups') return null;
  if (retrieval['@type'] === 'SearchGroupsUsingFilter') {
    const filter = retrieval.groupSearchFilter.replaceAll('{0}', Filter.escape(entry.dn));
    const { searchEntries } = await client.search(retrieval.groupSearchBase, { scope: 'sub', filter, attributes: [retrieval.groupNameAttribute] });
    return searchEntries.map((g) => firstValue(g, retrieval.groupNameAttribute)).filter((n): n is string => n !== null);
  }
  const names: string[] = [];
  for (const groupDn of allValues(entry, retrieval.userGroupsAttribute)) {
    const { searchEntries } = await client.search(groupDn, { scope: 'base', attributes: [retrieval.groupNameAttribute] });
    const groupName = searchEntries[0] && firstValue(searchEntries[0], retrieval.groupNameAttribute);
    if (groupName) names.push(groupName);
  }
  return names;
}

/** Whether an authenticator is set: password sign-ins of external and unknown users then ask the directory. */
export async function usesDirectory(ctx: Pick<Context, 'db'>): Promise<boolean> {
  return (await getStoredAuthenticator(ctx)) !== null;
}

/**
 * A password sign-in through the directory (docs/security.md#ldap-authenticator): the user it
 * signs in (created or linked on the first sign-in, its full name and memberships updated), or
 * null when the directory does not know the name or refuses the password (recorded as a failed
 * `signIn.ldap`). `name` is the login name (escaped before it reaches a filter or a DN).
 *
 * @throws Unavailable (503, `GITLOOM_ERR_DIRECTORY_UNAVAILABLE`) when no authenticator is set or
 *   the directory does not answer, refuses the manager or cannot be searched;
 *   Unauthorized `GITLOOM_ERR_SSO_REFUSED` when the account can not be made or linked.
 */
export async function signInWithDirectory(ctx: Context, name: string, password: string): Promise<{ id: number; name: string } | null> {
  const settings = await directorySettings(ctx);
  if (settings === null) throw new Unavailable(DIRECTORY_UNAVAILABLE, RETRY_AFTER_SECONDS, { code: 'GITLOOM_ERR_DIRECTORY_UNAVAILABLE' });
  let found: DirectoryUser | null;
  try {
    // an empty password would be an unauthenticated bind, which directories accept
    found = password === '' ? null : await checkWithDirectory(settings, name, password);
  } catch (cause) {
    await recordSignInFailure(ctx, 'signIn.ldap', name, 'Directory not available');
    throw new Unavailable(DIRECTORY_UNAVAILABLE, RETRY_AFTER_SECONDS, { code: 'GITLOOM_ERR_DIRECTORY_UNAVAILABLE', cause });
  }
  if (found === null) {
    await recordSignInFailure(ctx, 'signIn.ldap', name, 'Invalid credentials');
    return null;
  }
  return signInExternal(ctx, {
    action: 'signIn.ldap',
    profile: { provider: LDAP_PROVIDER, subject: found.dn, name, fullName: found.fullName, email: found.email },
    emailVerified: found.email !== null,
    groups: found.groups,
    defaultGroup: settings.defaultGroup,
    accountPolicy: settings.accountPolicy,
  });
}
