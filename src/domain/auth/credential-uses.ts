/**
 * The last use of access tokens and web sessions (docs/compatibility.md#gitloom-differs-sessions-and-tokens):
 * recorded at most once a minute per credential, so that a busy token or session costs one write
 * a minute, not one per request.
 */
import { LRUCache } from 'lru-cache';
import type { Db } from '../../db/database.js';
import type { Client } from '../context.js';
import { CREDENTIAL_USE_GRANULARITY_MS, noteAccessTokenUse } from '../users/index.js';

/** Per database: token id → when this process last recorded its use (epoch ms). */
const recorded = new WeakMap<object, LRUCache<number, number>>();

/**
 * Records that an access token was used now by `client`, unless this process recorded a use of it
 * less than a minute ago (then null: nothing to wait for). The returned write is the caller's to
 * await or log: a failed write loses one last-use time and nothing else.
 */
export function noteTokenUse(db: Db, tokenId: number, client: Client, now: number): Promise<void> | null {
  let uses = recorded.get(db);
  if (!uses) recorded.set(db, (uses = new LRUCache<number, number>({ max: 10_000 })));
  const last = uses.get(tokenId);
  if (last !== undefined && now - last < CREDENTIAL_USE_GRANULARITY_MS) return null;
  uses.set(tokenId, now);
  return noteAccessTokenUse(db, tokenId, client, now);
}
