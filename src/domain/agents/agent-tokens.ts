/**
 * Agent tokens (docs/compatibility.md#build-agents "Tokens and agents"; OneDev 8.6
 * `AgentTokenResource`, `DefaultAgentTokenManager`): the credential an agent connects with. A
 * token's value is random (`randomUUID()`, 36 characters); it is stored as its SHA-256 (how a
 * presented value is found) and encrypted with the job secrets' key under a purpose of its own,
 * so that administrators can read it again, as OneDev shows it. Administrators only.
 */
import { randomUUID } from 'node:crypto';
import type { AgentTokenRow } from '../../db/schema.js';
import { requireAdmin } from '../actor.js';
import { recordAudit } from '../audit/index.js';
import type { Context } from '../context.js';
import { loadRow } from '../entities.js';
import { decryptSecret, encryptSecret, secretKey } from '../projects/index.js';
import { hashToken } from '../token-hash.js';

/** Purpose of an agent token's encryption: it decrypts as nothing else, nothing else as it. */
const AGENT_TOKEN = Buffer.from('gitloom agent token');

/** An agent token as administrators see it (OneDev `AgentToken`: `{id, value}`). */
export interface AgentToken {
  id: number;
  /** The token's value, decrypted. */
  value: string;
  /** Epoch ms. */
  createDate: number;
}

function shown(ctx: Pick<Context, 'config'>, row: AgentTokenRow): AgentToken {
  return { id: row.id, value: decryptSecret(secretKey(ctx.config), row.encryptedValue, AGENT_TOKEN), createDate: row.createDate };
}

/**
 * Create (POST `/~api/agent-tokens`): a new token with a random value; answers its id, as
 * OneDev does. Administrators only (401/403 otherwise).
 */
export async function createAgentToken(ctx: Context): Promise<number> {
  requireAdmin(ctx.actor);
  const value = randomUUID();
  return ctx.db.transaction().execute(async (tx) => {
    const row = await tx
      .insertInto('agentTokens')
      .values({ valueHash: hashToken(value), encryptedValue: encryptSecret(secretKey(ctx.config), value, AGENT_TOKEN), createDate: ctx.now() })
      .returning('id')
      .executeTakeFirstOrThrow();
    // the token by id: its value never goes into the log
    await recordAudit(ctx, tx, { action: 'agentToken.create', targetType: 'agentToken', targetId: row.id, targetName: `agent token ${row.id}` });
    return row.id;
  });
}

/** Get (GET `/~api/agent-tokens/{id}`): administrators only; NotFound `Agent token not found: <id>`. */
export async function getAgentToken(ctx: Context, tokenId: number): Promise<AgentToken> {
  requireAdmin(ctx.actor);
  return shown(ctx, await loadRow(ctx.db, 'agentTokens', tokenId, 'Agent token'));
}

/**
 * Query Basic Info (GET `/~api/agent-tokens?value=&offset=&count=`): the tokens by id, or only
 * the one whose value is `value` (none when no token has it). Administrators only; the page size
 * is checked by the route (at most 100).
 */
export async function queryAgentTokens(ctx: Context, value: string | undefined, offset: number, count: number): Promise<AgentToken[]> {
  requireAdmin(ctx.actor);
  let query = ctx.db.selectFrom('agentTokens').selectAll();
  if (value !== undefined) query = query.where('valueHash', '=', hashToken(value));
  const rows = await query.orderBy('id').offset(offset).limit(count).execute();
  return rows.map((row) => shown(ctx, row));
}

/**
 * Deletes token `tokenId` and, through the foreign key, its agent with its attributes and job
 * tokens, in one transaction that first tells the other areas the agent goes (`agentsDeleting`:
 * the builds it ran forget it, as OneDev's `removeReferences` does). A connected agent's next
 * call is refused: its token is gone. Audited as `agent.delete` for each agent and
 * `agentToken.delete` (docs/audit-log.md#actions).
 *
 * @throws NotFound `Agent token not found: <id>`.
 */
export async function deleteTokenAndAgent(ctx: Context, tokenId: number): Promise<void> {
  await loadRow(ctx.db, 'agentTokens', tokenId, 'Agent token');
  await ctx.db.transaction().execute(async (tx) => {
    const agents = await tx.selectFrom('agents').select(['id', 'name']).where('tokenId', '=', tokenId).execute();
    if (agents.length > 0) await ctx.events.dispatchInTransaction('agentsDeleting', { db: tx, agentIds: agents.map((a) => a.id) });
    await tx.deleteFrom('agentTokens').where('id', '=', tokenId).execute();
    for (const agent of agents) await recordAudit(ctx, tx, { action: 'agent.delete', targetType: 'agent', targetId: agent.id, targetName: agent.name });
    await recordAudit(ctx, tx, { action: 'agentToken.delete', targetType: 'agentToken', targetId: tokenId, targetName: `agent token ${tokenId}` });
  });
}

/** Delete (DELETE `/~api/agent-tokens/{id}`): the token and its agent ({@link deleteTokenAndAgent}). Administrators only. */
export async function deleteAgentToken(ctx: Context, tokenId: number): Promise<void> {
  requireAdmin(ctx.actor);
  await deleteTokenAndAgent(ctx, tokenId);
}
