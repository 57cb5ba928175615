import { Type } from '@sinclair/typebox';
import type { AgentRow } from '../db/schema.js';

/**
 * Build agents and their tokens on the wire (docs/compatibility.md#build-agents; OneDev 8.6
 * `Agent` and `AgentToken`, fields in their declaration order).
 */

/** An agent token: its id and value (OneDev `AgentToken`). */
export const AgentTokenSchema = Type.Object(
  {
    id: Type.Integer(),
    value: Type.String({ description: 'the token an agent connects with' }),
  },
  { $id: 'AgentToken' },
);

/** Maps a token (its value decrypted) to {@link AgentTokenSchema}. */
export function toWireAgentToken(token: { id: number; value: string }) {
  return { id: token.id, value: token.value };
}

/** An agent: what it reported when it last connected, and whether it is paused (OneDev `Agent`). */
export const AgentSchema = Type.Object(
  {
    id: Type.Integer(),
    tokenId: Type.Integer(),
    name: Type.String(),
    ipAddress: Type.String(),
    osName: Type.String(),
    osVersion: Type.String(),
    osArch: Type.String(),
    cpus: Type.Integer(),
    temporal: Type.Boolean(),
    paused: Type.Boolean(),
  },
  { $id: 'Agent' },
);

/** Maps an agent's row to {@link AgentSchema}. */
export function toWireAgent(agent: AgentRow) {
  return {
    id: agent.id,
    tokenId: agent.tokenId,
    name: agent.name,
    ipAddress: agent.ipAddress,
    osName: agent.osName,
    osVersion: agent.osVersion,
    osArch: agent.osArch,
    cpus: agent.cpus,
    temporal: Boolean(agent.temporal),
    paused: Boolean(agent.paused),
  };
}

/** An agent's attributes: name → value. */
export const AgentAttributesSchema = Type.Record(Type.String(), Type.String(), { description: 'attribute name → value' });
