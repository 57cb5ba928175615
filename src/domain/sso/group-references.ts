/**
 * The Gitloom groups the single sign-on settings name (docs/security.md#single-sign-on): the
 * `defaultGroup` of the authenticator and of each SSO connector follows a group's rename, and a
 * group still named there cannot be deleted (as OneDev's `onRenameGroup` / `onDeleteGroup`).
 */
import type { Db } from '../../db/database.js';
import { getStoredAuthenticator, getStoredSsoConnectors, setStoredAuthenticator, setStoredSsoConnectors } from '../settings/index.js';

type Named = { defaultGroup?: string | null; name?: string };

const same = (a: string | null | undefined, b: string) => typeof a === 'string' && a.toLowerCase() === b.toLowerCase();

/** Renames group `from` to `to` in the settings that name it, in `db` (the rename's transaction). */
export async function renameSsoGroupReferences(db: Db, from: string, to: string): Promise<void> {
  const authenticator = (await getStoredAuthenticator({ db })) as Named | null;
  if (authenticator && same(authenticator.defaultGroup, from)) await setStoredAuthenticator({ db }, { ...authenticator, defaultGroup: to });
  const connectors = (await getStoredSsoConnectors({ db })) as readonly Named[];
  if (connectors.some((c) => same(c.defaultGroup, from))) {
    await setStoredSsoConnectors(
      { db },
      connectors.map((c) => (same(c.defaultGroup, from) ? { ...c, defaultGroup: to } : c)),
    );
  }
}

/** The places of the single sign-on settings that name group `name` (none: it may be deleted). */
export async function ssoGroupUsages(db: Db, name: string): Promise<string[]> {
  const usages: string[] = [];
  const authenticator = (await getStoredAuthenticator({ db })) as Named | null;
  if (authenticator && same(authenticator.defaultGroup, name)) usages.push('default group of the external authenticator');
  for (const c of (await getStoredSsoConnectors({ db })) as readonly Named[]) {
    if (same(c.defaultGroup, name)) usages.push(`default group of SSO connector '${c.name}'`);
  }
  return usages;
}
