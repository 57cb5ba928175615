/**
 * Build agents as administrators manage them (docs/compatibility.md#build-agents "Tokens and
 * agents"; OneDev 8.6 `AgentResource`, `DefaultAgentManager`, `DefaultAgentAttributeManager`):
 * read, query, attributes read and replaced (while the agent is online, as OneDev's), paused and
 * resumed, removed with their token. An agent is online exactly while its `online_until` (epoch
 * ms, renewed by its heartbeats) is in the future. Administrators only.
 */
import type { AgentRow } from '../../db/schema.js';
import { BadRequest } from '../../errors.js';
import { requireAdmin } from '../actor.js';
import { auditChanges, recordAudit } from '../audit/index.js';
import type { Context } from '../context.js';
import { loadRow } from '../entities.js';
import { selectAgents } from './agent-query.js';
import { deleteTokenAndAgent } from './agent-tokens.js';

/** OneDev `AttributeNameValidator.PATTERN`: word characters at both ends, dash, dot and spaces between. */
const ATTRIBUTE_NAME = /^\w(?:[\w\-.\s]*\w)?$/;
/** The agent's own query fields, which no attribute may be named (OneDev `Agent.ALL_FIELDS`). */
const RESERVED = new Set(['Name', 'Ip Address', 'Os', 'Os Version', 'Os Arch']);

/** Whether `agent` is online at `now` (epoch ms): its heartbeats keep `onlineUntil` in the future. */
export function isAgentOnline(agent: Pick<AgentRow, 'onlineUntil'>, now: number): boolean {
  return agent.onlineUntil !== null && agent.onlineUntil > now;
}

/**
 * Refuses attributes OneDev refuses (`AttributeNameValidator`): a name must start and end with
 * a letter, digit or underscore, with only those, dashes, dots and spaces between, and may not be
 * one of the agent's own fields (`Name`, `Ip Address`, `Os`, `Os Version`, `Os Arch`).
 *
 * @throws BadRequest `GITLOOM_ERR_AGENT_ATTRIBUTE` naming the attribute.
 */
export function checkAgentAttributes(attributes: Readonly<Record<string, string>>): void {
  for (const name of Object.keys(attributes)) {
    if (!ATTRIBUTE_NAME.test(name)) {
      throw new BadRequest(
        `Attribute '${name}' should start and end with alphanumeric or underscore. Only alphanumeric, underscore, dash, space and dot are allowed in the middle.`,
        { code: 'GITLOOM_ERR_AGENT_ATTRIBUTE' },
      );
    }
    if (RESERVED.has(name)) throw new BadRequest(`Attribute '${name}' is reserved`, { code: 'GITLOOM_ERR_AGENT_ATTRIBUTE' });
  }
}

async function loadAgent(ctx: Context, agentId: number): Promise<AgentRow> {
  requireAdmin(ctx.actor);
  return loadRow(ctx.db, 'agents', agentId, 'Agent');
}

/** Get Basic Info (GET `/~api/agents/{id}`): administrators only; NotFound `Agent not found: <id>`. */
export async function getAgent(ctx: Context, agentId: number): Promise<AgentRow> {
  return loadAgent(ctx, agentId);
}

/**
 * Query Basic Info (GET `/~api/agents?query=&offset=&count=`): the agents an agent query selects
 * (src/domain/agents/agent-query.ts). Administrators only.
 *
 * @throws QuerySyntaxError (400) for a query the agent query refuses.
 */
export async function queryAgents(ctx: Context, query: string, offset: number, count: number): Promise<AgentRow[]> {
  requireAdmin(ctx.actor);
  return selectAgents(ctx, query, offset, count);
}

/**
 * Get Agent (GET `/~api/agent-tokens/{id}/agent`): the agent that connected with token
 * `tokenId`, or null when none has. Administrators only; NotFound `Agent token not found: <id>`.
 */
export async function getTokenAgent(ctx: Context, tokenId: number): Promise<AgentRow | null> {
  requireAdmin(ctx.actor);
  await loadRow(ctx.db, 'agentTokens', tokenId, 'Agent token');
  return (await ctx.db.selectFrom('agents').selectAll().where('tokenId', '=', tokenId).executeTakeFirst()) ?? null;
}

/** The agents that connected with `tokenIds`, by token id (the tokens page). Administrators only. */
export async function agentsOfTokens(ctx: Context, tokenIds: readonly number[]): Promise<Map<number, AgentRow>> {
  requireAdmin(ctx.actor);
  if (tokenIds.length === 0) return new Map();
  const rows = await ctx.db.selectFrom('agents').selectAll().where('tokenId', 'in', tokenIds).execute();
  return new Map(rows.map((row) => [row.tokenId, row]));
}

/** Get Attributes (GET `/~api/agents/{id}/attributes`): `{name: value}`, by name. Administrators only. */
export async function getAgentAttributes(ctx: Context, agentId: number): Promise<Record<string, string>> {
  await loadAgent(ctx, agentId);
  const rows = await ctx.db.selectFrom('agentAttributes').select(['name', 'value']).where('agentId', '=', agentId).orderBy('name').execute();
  return Object.fromEntries(rows.map((row) => [row.name, row.value]));
}

/**
 * Update Attributes (POST `/~api/agents/{id}/attributes`): the agent's attributes become
 * `attributes` (OneDev `syncAttributes`), in one transaction; the agent hears of them with its
 * next heartbeat. Administrators only.
 *
 * @throws BadRequest `Unable to update attributes as agent is offline` (`GITLOOM_ERR_AGENT_OFFLINE`),
 *   or a refused attribute name ({@link checkAgentAttributes}); NotFound for an unknown agent.
 */
export async function updateAgentAttributes(ctx: Context, agentId: number, attributes: Readonly<Record<string, string>>): Promise<void> {
  const agent = await loadAgent(ctx, agentId);
  if (!isAgentOnline(agent, ctx.now())) throw new BadRequest('Unable to update attributes as agent is offline', { code: 'GITLOOM_ERR_AGENT_OFFLINE' });
  checkAgentAttributes(attributes);
  const rows = Object.entries(attributes).map(([name, value]) => ({ agentId, name, value }));
  await ctx.db.transaction().execute(async (tx) => {
    const before = await tx.selectFrom('agentAttributes').select(['name', 'value']).where('agentId', '=', agentId).execute();
    await tx.deleteFrom('agentAttributes').where('agentId', '=', agentId).execute();
    if (rows.length > 0) await tx.insertInto('agentAttributes').values(rows).execute();
    await recordAudit(ctx, tx, {
      action: 'agent.updateAttributes',
      targetType: 'agent',
      targetId: agentId,
      targetName: agent.name,
      ...auditChanges(Object.fromEntries(before.map((a) => [a.name, a.value])), { ...attributes }),
    });
  });
}

/**
 * Pauses (`paused` true) or resumes an agent (the Agents page; OneDev `pause`/`resume`): a paused
 * agent is given no new job; its running ones go on. Administrators only; NotFound for an unknown agent.
 */
export async function setAgentPaused(ctx: Context, agentId: number, paused: boolean): Promise<void> {
  const agent = await loadAgent(ctx, agentId);
  await ctx.db.transaction().execute(async (tx) => {
    await tx
      .updateTable('agents')
      .set({ paused: paused ? 1 : 0 })
      .where('id', '=', agentId)
      .execute();
    await recordAudit(ctx, tx, { action: paused ? 'agent.pause' : 'agent.resume', targetType: 'agent', targetId: agentId, targetName: agent.name });
  });
}

/**
 * Removes an agent (the Agents page; OneDev `DefaultAgentManager.delete`): with its token, so
 * the agent cannot connect again, and its attributes and job tokens; the builds it ran keep
 * their history but no longer name it (`agentId` null), as OneDev's `removeReferences` does. A
 * connected agent's next call is refused and the builds it was running end when their leases
 * expire. Administrators only; NotFound for an unknown agent.
 */
export async function removeAgent(ctx: Context, agentId: number): Promise<void> {
  const agent = await loadAgent(ctx, agentId);
  await deleteTokenAndAgent(ctx, agent.tokenId);
}

/** The name of agent `agentId`, or null when it was removed (a build's `agentId` stays as history). */
export async function agentName(ctx: Pick<Context, 'db'>, agentId: number): Promise<string | null> {
  return (await ctx.db.selectFrom('agents').select('name').where('id', '=', agentId).executeTakeFirst())?.name ?? null;
}

/**
 * The ids of the agents named `name` (exactly), for the build query's `ran on "name"`
 * (docs/compatibility.md#builds-query-language; OneDev `RanOnCriteria`): empty when none is.
 */
export async function agentIdsNamed(ctx: Pick<Context, 'db'>, name: string): Promise<number[]> {
  return (await ctx.db.selectFrom('agents').select('id').where('name', '=', name).execute()).map((row) => row.id);
}
