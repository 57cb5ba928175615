/**
 * The agents area (docs/architecture.md#domain-areas, docs/compatibility.md#build-agents): build
 * agents, their tokens, attributes and connections, and the agent query.
 */
export { agentSelected, parseExecutorAgentQuery, type AgentFacts } from './agent-selection.js';
export { agentOfBuild, agentsRunningBuilds } from './agent-query.js';
export { type AgentToken, createAgentToken, deleteAgentToken, getAgentToken, queryAgentTokens } from './agent-tokens.js';
export {
  agentIdsNamed,
  agentName,
  agentsOfTokens,
  checkAgentAttributes,
  getAgent,
  getAgentAttributes,
  getTokenAgent,
  isAgentOnline,
  queryAgents,
  removeAgent,
  setAgentPaused,
  updateAgentAttributes,
} from './agents.js';
export { agentTokenId, connectAgent, disconnectAgent, touchAgent, type ConnectedAgent } from './connections.js';
