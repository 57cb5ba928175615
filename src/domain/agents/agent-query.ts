/**
 * The agent query (docs/compatibility.md#build-agents "Agent query"; OneDev 8.6 `AgentQuery`
 * parsed with `forExecutor=false`, and `DefaultAgentManager.query`) compiled to one SQL
 * statement: the agent's fields with `*` wildcards, case-insensitively; attributes by exact
 * value; `online` / `offline` by `online_until`; `paused`; `has attribute`; `ever used since` /
 * `not used since`; `has running builds` and `ran build "proj#N"`, answered by the builds area;
 * `~fuzzy~` words, each in any of the fields; `order by` the sort fields, by name by default.
 */
import { sql } from 'kysely';
import type { AgentRow } from '../../db/schema.js';
import { AGENT_QUERY, containsToLike, parseQuery, parseQueryDate, QuerySyntaxError, wildcardToLike } from '../../query/index.js';
import type { Context } from '../context.js';
import { Provided } from '../providers.js';
import { allWords, always, compileCriteria, compileOrders, type Condition, equals, type LeafCompiler, likeCondition, never } from '../query/index.js';

/**
 * `has running builds` (asked of the builds area): a condition true where the agent id in
 * column `agentIdColumn` (`agents.id`) runs a RUNNING build.
 */
export const agentsRunningBuilds = new Provided<(agentIdColumn: string) => Condition>('agents running builds');

/**
 * `ran build "proj#N"` (asked of the builds area): the id of the agent the referenced build ran
 * on, or null when it ran on none; QuerySyntaxError for a reference naming no build.
 */
export const agentOfBuild = new Provided<(ctx: Context, reference: string) => Promise<number | null>>('the agent a build ran on');

/** The agent's own fields and their columns (OneDev `Agent.QUERY_FIELDS`). */
const FIELD_COLUMNS: Record<string, string> = {
  Name: 'agents.name',
  'Ip Address': 'agents.ipAddress',
  Os: 'agents.osName',
  'Os Version': 'agents.osVersion',
  'Os Arch': 'agents.osArch',
};

/** The sort fields and their columns (OneDev `Agent.ORDER_FIELDS`). */
const SORT_COLUMNS: Record<string, string> = { ...FIELD_COLUMNS, 'Last Used Date': 'agents.lastUsedDate' };

/** `online`: the agent's heartbeats keep `online_until` in the future (false, never null, for an agent that never connected). */
function online(now: number): Condition {
  return (eb) => eb.and([eb('agents.onlineUntil', 'is not', null), eb('agents.onlineUntil', '>', now)]);
}

/** An attribute row of the agent: named `name`, and valued `value` when given. */
function attribute(name: string, value?: string): Condition {
  return (eb) => {
    let rows = eb
      .selectFrom('agentAttributes')
      .select('agentAttributes.id')
      .whereRef('agentAttributes.agentId', '=', 'agents.id')
      .where('agentAttributes.name', '=', name);
    if (value !== undefined) rows = rows.where('agentAttributes.value', '=', value);
    return eb.exists(rows);
  };
}

function agentLeaf(ctx: Context): LeafCompiler {
  const now = ctx.now();
  return async (c) => {
    switch (c.kind) {
      case 'fuzzy':
        // OneDev's FuzzyCriteria: each word in the name, address, OS, OS version or architecture
        return allWords(c.text, (word) => {
          const pattern = containsToLike(word, { wildcard: false });
          return (eb) => eb.or(Object.values(FIELD_COLUMNS).map((column) => likeCondition(column, pattern)(eb)));
        });
      case 'operator':
        switch (c.operator) {
          case 'online':
            return online(now);
          case 'offline': {
            const on = online(now);
            return (eb) => eb.not(on(eb));
          }
          case 'paused':
            return (eb) => eb('agents.paused', '=', 1);
          case 'has running builds':
            return agentsRunningBuilds.ask('agents.id');
          case 'has attribute':
            return attribute(c.value!);
          case 'ever used since': {
            const date = parseQueryDate(c.value!, new Date(now)).getTime();
            return (eb) => eb('agents.lastUsedDate', '>', date);
          }
          case 'not used since': {
            const date = parseQueryDate(c.value!, new Date(now)).getTime();
            return (eb) => eb('agents.lastUsedDate', '<', date);
          }
          case 'ran build': {
            const agentId = await agentOfBuild.ask(ctx, c.value!);
            return agentId === null ? never : equals('agents.id', agentId);
          }
          default:
            throw new QuerySyntaxError(`Unsupported criteria: ${c.operator}`);
        }
      case 'field': {
        const column = FIELD_COLUMNS[c.field];
        if (column) return likeCondition(column, wildcardToLike(c.value!));
        // OneDev's checkField: any other field is an attribute some agent has
        const known = await ctx.db.selectFrom('agentAttributes').select('id').where('name', '=', c.field).limit(1).executeTakeFirst();
        if (!known) throw new QuerySyntaxError(`Attribute not found: ${c.field}`, c.column);
        return attribute(c.field, c.value!);
      }
      default:
        throw new QuerySyntaxError('Unsupported criteria');
    }
  };
}

/**
 * The agents an agent query selects, `count` of them from `offset`, in the order of its
 * `order by` (by name when it has none), then by id. No permission check: the callers check.
 *
 * @throws QuerySyntaxError (400 `GITLOOM_ERR_QUERY_SYNTAX`) for a query that does not parse, an
 *   unknown attribute (`Attribute not found: x`), an unreadable date, a build reference naming no
 *   build, or an unknown sort field.
 */
export async function selectAgents(ctx: Context, text: string, offset: number, count: number): Promise<AgentRow[]> {
  const parsed = parseQuery(AGENT_QUERY, text, { now: new Date(ctx.now()) });
  const condition = parsed.criteria ? await compileCriteria(parsed.criteria, agentLeaf(ctx)) : always;
  const orders = compileOrders(parsed, SORT_COLUMNS);
  let query = ctx.db
    .selectFrom('agents')
    .selectAll('agents')
    .where((eb) => condition(eb));
  for (const order of orders.length > 0 ? orders : [{ expression: 'agents.name', direction: 'asc' as const }]) {
    query = query.orderBy(sql.ref(order.expression), order.direction);
  }
  return query.orderBy('agents.id').offset(offset).limit(count).execute();
}
