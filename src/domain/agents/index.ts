/**
 * The agents area (docs/architecture.md#domain-areas, docs/compatibility.md#build-agents): build
 * agents, their tokens, attributes and connections, and the agent query.
 */
export { agentSelected, parseExecutorAgentQuery, type AgentFacts } from './agent-selection.js';
export { agentTokenId, connectAgent, touchAgent, type ConnectedAgent } from './connections.js';
