import { describe, expect, it } from 'vitest';
import { agentSelected, parseExecutorAgentQuery, type AgentFacts } from '../../src/domain/agents/index.js';
import { AGENT_QUERY, parseQuery } from '../../src/query/index.js';

const agent: AgentFacts = {
  name: 'builder-1',
  ipAddress: '10.0.0.7',
  osName: 'Linux',
  osVersion: '6.1.0',
  osArch: 'amd64',
  attributes: { gpu: 'nvidia', 'disk size': 'big' },
};
const selects = (text: string): boolean => agentSelected(parseExecutorAgentQuery(text), agent);

/** The agent query as text (docs/compatibility.md#build-agents "Agent query"), and an executor's agent selector matched in memory. */
describe('agent query', () => {
  it('parses every criterion and sort field of the agents list', () => {
    const parsed = parseQuery(
      AGENT_QUERY,
      'online and not(offline) or paused and has running builds and has attribute "gpu" and ever used since "yesterday" and not used since "2024-01-01" ' +
        'and ran build "p#1" and "Name" is "a*" and "Ip Address" is "1.*" and "Os" is "Linux" and "Os Version" is "6*" and "Os Arch" is "amd64" ' +
        'and "rack" is "r1" and ~box~ order by "Name" and "Ip Address" desc and "Os" and "Os Version" and "Os Arch" and "Last Used Date" desc',
    );
    expect(parsed.orders.map((o) => o.field)).toEqual(['Name', 'Ip Address', 'Os', 'Os Version', 'Os Arch', 'Last Used Date']);
    expect(() => parseQuery(AGENT_QUERY, '#5')).toThrow(/Unexpected/);
    expect(() => parseQuery(AGENT_QUERY, 'order by "Cpus"')).toThrow('Can not order by field: Cpus');
  });

  it('selects agents for an executor by their fields with wildcards, their attributes exactly, and fuzzy words in any field', () => {
    expect(selects('')).toBe(true);
    expect(selects('"Name" is "BUILDER-*"')).toBe(true);
    expect(selects('"Os" is "linux" and "Os Arch" is "amd*"')).toBe(true);
    expect(selects('"gpu" is "nvidia"')).toBe(true);
    expect(selects('"gpu" is "NVIDIA"')).toBe(false);
    expect(selects('has attribute "disk size" and not(has attribute "rack")')).toBe(true);
    expect(selects('~builder~')).toBe(true);
    expect(selects('~LINUX 10.0~')).toBe(true);
    expect(selects('~linux windows~')).toBe(false);
    expect(selects('~nvidia~')).toBe(false);
  });

  it('refuses in an executor the criteria OneDev allows only when listing agents', () => {
    for (const text of ['online', 'paused', 'has running builds', 'ran build "p#1"', 'ever used since "yesterday"']) {
      expect(() => parseExecutorAgentQuery(text), text).toThrow(/is not supported here/);
    }
    expect(() => parseExecutorAgentQuery('order by "Name"')).toThrow('Order by is not supported here');
  });
});
