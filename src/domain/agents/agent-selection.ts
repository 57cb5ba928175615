import { AGENT_QUERY, chainOperands, parseQuery, QuerySyntaxError, wildcardMatcher, type Criteria } from '../../query/index.js';

/**
 * Which agents a remote executor's `agentQuery` selects (docs/compatibility.md#build-agents,
 * OneDev 8.6 `AgentQuery.parse(…, forExecutor=true)` and `Criteria.matches`): the agent's own
 * fields with `*` wildcards, case-insensitively — the same as the agent query's SQL — and its
 * attributes by exact value, combined with `and`, `or` and `not`.
 */

/** What an executor's agent query reads of an agent. */
export interface AgentFacts {
  readonly name: string;
  readonly ipAddress: string;
  readonly osName: string;
  readonly osVersion: string;
  readonly osArch: string;
  readonly attributes: Readonly<Record<string, string>>;
}

/** The agent columns of the query's fields. */
const FIELDS: Record<string, keyof Omit<AgentFacts, 'attributes'>> = {
  Name: 'name',
  'Ip Address': 'ipAddress',
  Os: 'osName',
  'Os Version': 'osVersion',
  'Os Arch': 'osArch',
};

/**
 * Parses an executor's `agentQuery`: null (or blank) selects every agent.
 *
 * @throws QuerySyntaxError for a query that does not parse, `order by`, or a criterion OneDev
 *   allows only when listing agents (`Criteria 'online' is not supported here`).
 */
export function parseExecutorAgentQuery(text: string | null): Criteria | null {
  if (text === null || text.trim() === '') return null;
  const parsed = parseQuery(AGENT_QUERY, text);
  if (parsed.orders.length > 0) throw new QuerySyntaxError('Order by is not supported here');
  if (parsed.criteria) checkForExecutor(parsed.criteria);
  return parsed.criteria;
}

function checkForExecutor(criteria: Criteria): void {
  switch (criteria.kind) {
    case 'and':
    case 'or':
      chainOperands(criteria).forEach(checkForExecutor);
      return;
    case 'not':
      checkForExecutor(criteria.operand);
      return;
    case 'operator':
      if (criteria.operator !== 'has attribute') throw new QuerySyntaxError(`Criteria '${criteria.operator}' is not supported here`);
      return;
    case 'fuzzy':
    case 'field':
      return;
    default:
      throw new QuerySyntaxError(`Criteria is not supported here`);
  }
}

/** Whether an agent is selected by a query of {@link parseExecutorAgentQuery} (null: every agent). */
export function agentSelected(criteria: Criteria | null, agent: AgentFacts): boolean {
  if (criteria === null) return true;
  switch (criteria.kind) {
    case 'and':
      return chainOperands(criteria).every((operand) => agentSelected(operand, agent));
    case 'or':
      return chainOperands(criteria).some((operand) => agentSelected(operand, agent));
    case 'not':
      return !agentSelected(criteria.operand, agent);
    case 'operator':
      return criteria.operator === 'has attribute' && Object.hasOwn(agent.attributes, criteria.value ?? '');
    case 'fuzzy': {
      // OneDev's FuzzyCriteria, as the agent query's SQL: each word in any of the agent's fields
      const fields = Object.values(FIELDS).map((column) => agent[column].toLowerCase());
      return criteria.text
        .split(/\s+/)
        .filter(Boolean)
        .every((word) => fields.some((field) => field.includes(word.toLowerCase())));
    }
    case 'field': {
      const column = FIELDS[criteria.field];
      if (column) return wildcardMatcher(criteria.value ?? '').test(agent[column]);
      return Object.hasOwn(agent.attributes, criteria.field) && agent.attributes[criteria.field] === criteria.value;
    }
    default:
      return false;
  }
}
