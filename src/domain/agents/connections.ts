/**
 * The connections of build agents (docs/compatibility.md#build-agents "The agent protocol"): an
 * agent presents its token, registers what it is (`connect`) and keeps itself online with
 * heartbeats. The database holds the connection — the agent's `session` and `online_until` — so
 * whichever server process an agent's request reaches, and a server restarted meanwhile, knows
 * it: an agent is online while `online_until` is in the future.
 */
import { randomUUID } from 'node:crypto';
import type { ConnectRequest } from '../../wire/agent-protocol.js';
import type { Db } from '../../db/database.js';
import type { AgentRow } from '../../db/schema.js';
import { Conflict, Unauthorized } from '../../errors.js';
import type { Context } from '../context.js';
import { hashToken } from '../token-hash.js';
import { isForeignKeyViolation, isUniqueViolation } from '../unique.js';
import type { AgentFacts } from './agent-selection.js';
import { checkAgentAttributes } from './agents.js';

/** An agent as leasing a job reads it: its row and attributes. */
export interface ConnectedAgent extends AgentFacts {
  readonly id: number;
  readonly cpus: number;
  readonly engine: string | null;
  readonly paused: boolean;
}

/**
 * The id of the token a presented agent token value is.
 *
 * @throws Unauthorized for an unknown value.
 */
export async function agentTokenId(db: Db, value: string): Promise<number> {
  const row = await db.selectFrom('agentTokens').select('id').where('valueHash', '=', hashToken(value)).executeTakeFirst();
  if (!row) throw new Unauthorized('Unknown agent token');
  return row.id;
}

/**
 * Registers an agent connecting with the token `tokenId`: its row is made or updated with what it
 * reports and the address it came from, its attributes replaced, and a new session opened, online
 * for `onlineMs`. When the token's agent is online under the session the agent names as its
 * previous one (`report.previousSession`: the same agent, killed and started again), that
 * session is replaced: `replaced` names it, and the caller ends its builds.
 *
 * @throws Conflict `GITLOOM_ERR_AGENT_CONNECTED` while the token's agent is online under another
 *   session (a second agent with the same token, or an agent restarted without its work dir
 *   before its previous connection timed out: it tries again).
 * @throws BadRequest `GITLOOM_ERR_AGENT_ATTRIBUTE` for an attribute name OneDev refuses.
 */
export async function connectAgent(
  ctx: Context,
  tokenId: number,
  report: ConnectRequest,
  ipAddress: string,
  onlineMs: number,
): Promise<{ agentId: number; session: string; attributes: Record<string, string>; replaced: string | null }> {
  checkAgentAttributes(report.attributes);
  const now = ctx.now();
  const session = randomUUID();
  const columns = {
    name: report.name,
    ipAddress,
    osName: report.osName,
    osVersion: report.osVersion,
    osArch: report.osArch,
    cpus: report.cpus,
    memory: report.memory,
    engine: report.engine,
    lastUsedDate: now,
    session,
    onlineUntil: now + onlineMs,
  };
  const connected = () => new Conflict('An agent with this token is connected already', { code: 'GITLOOM_ERR_AGENT_CONNECTED' });
  const write = ctx.db.transaction().execute(async (tx) => {
    const existing = await tx.selectFrom('agents').select(['id', 'session', 'onlineUntil']).where('tokenId', '=', tokenId).executeTakeFirst();
    let id: number;
    let replaced: string | null = null;
    if (existing) {
      if (existing.onlineUntil !== null && existing.onlineUntil > now && existing.session !== null) {
        if (existing.session !== report.previousSession) throw connected();
        replaced = existing.session;
      }
      const updated = await tx
        .updateTable('agents')
        .set(columns)
        .where('id', '=', existing.id)
        .where((eb) => (existing.session === null ? eb('session', 'is', null) : eb('session', '=', existing.session)))
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) === 0) throw connected();
      id = existing.id;
    } else {
      const row = await tx
        .insertInto('agents')
        .values({ tokenId, ...columns, temporal: 0, paused: 0 })
        .returning('id')
        .executeTakeFirstOrThrow();
      id = row.id;
    }
    await tx.deleteFrom('agentAttributes').where('agentId', '=', id).execute();
    const attributes = Object.entries(report.attributes);
    if (attributes.length > 0)
      await tx
        .insertInto('agentAttributes')
        .values(attributes.map(([name, value]) => ({ agentId: id, name, value })))
        .execute();
    return { id, replaced };
  });
  let written: { id: number; replaced: string | null };
  try {
    written = await write;
  } catch (error) {
    // another connection of the token won the race, or the token was deleted meanwhile
    if (isUniqueViolation(error)) throw connected();
    if (isForeignKeyViolation(error)) throw new Unauthorized('Unknown agent token');
    throw error;
  }
  return { agentId: written.id, session, attributes: { ...report.attributes }, replaced: written.replaced };
}

/**
 * Keeps the agent of session `session` online for `onlineMs` more (a heartbeat or a lease request)
 * and answers its row and attributes as they are now.
 *
 * @throws Conflict `GITLOOM_ERR_AGENT_SESSION` when the session is no longer the agent's (its
 *   token was deleted, the agent removed, or another connection took over): the agent connects
 *   again.
 */
export async function touchAgent(ctx: Context, tokenId: number, session: string, onlineMs: number): Promise<ConnectedAgent> {
  const now = ctx.now();
  const updated = await ctx.db
    .updateTable('agents')
    .set({ lastUsedDate: now, onlineUntil: now + onlineMs })
    .where('tokenId', '=', tokenId)
    .where('session', '=', session)
    .returningAll()
    .executeTakeFirst();
  if (!updated) throw new Conflict('This agent session is no longer valid: connect again', { code: 'GITLOOM_ERR_AGENT_SESSION' });
  return connectedAgent(ctx.db, updated);
}

/** An agent row with its attributes. */
async function connectedAgent(db: Db, row: AgentRow): Promise<ConnectedAgent> {
  const attributes = await db.selectFrom('agentAttributes').select(['name', 'value']).where('agentId', '=', row.id).execute();
  return {
    id: row.id,
    name: row.name,
    ipAddress: row.ipAddress,
    osName: row.osName,
    osVersion: row.osVersion,
    osArch: row.osArch,
    cpus: row.cpus,
    engine: row.engine,
    paused: row.paused === 1,
    attributes: Object.fromEntries(attributes.map((a) => [a.name, a.value])),
  };
}

/**
 * Ends the agent's connection `session` (an agent stopping, its jobs ended): it is offline at once
 * and its token may connect again without waiting for the connection to time out. Nothing for a
 * session that is no longer the agent's.
 */
export async function disconnectAgent(ctx: Context, tokenId: number, session: string): Promise<void> {
  await ctx.db.updateTable('agents').set({ session: null, onlineUntil: null }).where('tokenId', '=', tokenId).where('session', '=', session).execute();
}
