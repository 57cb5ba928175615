import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  createAgentToken,
  deleteAgentToken,
  getAgent,
  getAgentAttributes,
  getAgentToken,
  getTokenAgent,
  queryAgents,
  queryAgentTokens,
  updateAgentAttributes,
} from '../../domain/agents/index.js';
import { AgentAttributesSchema, AgentSchema, AgentTokenSchema, toWireAgent, toWireAgentToken } from '../../wire/agents.js';
import { basicInfoQueryRoute, itemActionRoutes, itemDeleteRoute, itemGetRoute, itemParams, jsonAction, queryRoute } from '../resource-routes.js';
import { CreatedId } from '../schemas/common.js';

const Tokens = { path: '/agent-tokens', idParam: 'tokenId', tags: ['Agent Token'] };
const Agents = { path: '/agents', idParam: 'agentId', tags: ['Agent'] };

/**
 * Agent tokens and agents (docs/compatibility.md#build-agents "Tokens and agents"; OneDev 8.6
 * `AgentTokenResource` and `AgentResource`): administrators only.
 */
export const agentRoutes: FastifyPluginAsyncTypebox = async (app) => {
  itemGetRoute(app, Tokens, 'Get Basic Info', AgentTokenSchema, getAgentToken, toWireAgentToken);

  app.get(
    '/agent-tokens/:tokenId/agent',
    {
      schema: {
        tags: Tokens.tags,
        summary: 'Get Agent',
        description: 'The agent that connected with the token; no body (204) when none has.',
        params: itemParams(Tokens),
        response: { 200: AgentSchema, 204: Type.Null() },
      },
    },
    async (request, reply) => {
      const agent = await getTokenAgent(request.ctx, request.params.tokenId as number);
      return agent ? toWireAgent(agent) : reply.code(204).send(null);
    },
  );

  queryRoute(app, {
    path: Tokens.path,
    tags: Tokens.tags,
    summary: 'Query Basic Info',
    params: { value: Type.Optional(Type.String({ description: 'the token with this value only' })) },
    schema: AgentTokenSchema,
    run: (ctx, params, offset, count) => queryAgentTokens(ctx, params.value, offset, count),
    toWire: toWireAgentToken,
  });

  app.post(
    '/agent-tokens',
    {
      schema: {
        tags: Tokens.tags,
        summary: 'Create',
        description: 'Creates a token with a random value (36 characters); returns its id.',
        response: { 200: CreatedId },
      },
    },
    async (request) => createAgentToken(request.ctx),
  );

  itemDeleteRoute(app, Tokens, deleteAgentToken);

  itemGetRoute(app, Agents, 'Get Basic Info', AgentSchema, getAgent, toWireAgent);

  app.get(
    '/agents/:agentId/attributes',
    { schema: { tags: Agents.tags, summary: 'Get Attributes', params: itemParams(Agents), response: { 200: AgentAttributesSchema } } },
    async (request) => getAgentAttributes(request.ctx, request.params.agentId as number),
  );

  basicInfoQueryRoute(app, Agents.path, Agents.tags, AgentSchema, queryAgents, toWireAgent);

  itemActionRoutes(app, Agents, [
    jsonAction('attributes', 'Update Attributes', AgentAttributesSchema, (ctx, id, attributes) => updateAgentAttributes(ctx, id, attributes)),
  ]);
};
