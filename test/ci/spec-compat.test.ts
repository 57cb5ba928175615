import { describe, expect, it } from 'vitest';
import { BuildSpecError, MAX_SPEC_VERSION, parseBuildSpec } from '../../src/ci/build-spec.js';
import { createVariableResolver, interpolate, scanVariables } from '../../src/ci/variables.js';

function specError(text: string): string[] {
  try {
    parseBuildSpec(text);
  } catch (error) {
    if (error instanceof BuildSpecError) return [...error.messages];
    throw error;
  }
  throw new Error('spec was accepted');
}

/** A spec as OneDev 11+ writes it: `version: 53`, steps as `type: CommandStep`, imports. */
const NEWER_SPEC = `version: 53
imports:
- projectPath: common
  revision: main
jobs:
- name: CI
  steps:
  - type: CheckoutStep
    name: checkout
  - type: CommandStep
    name: build
    runInContainer: true
    image: alpine
    interpreter:
      type: DefaultInterpreter
      commands: echo hi
  - type: CommandStep
    name: test
    interpreter:
      type: DefaultInterpreter
      commands: echo test
`;

describe('build spec forms of newer OneDev', () => {
  it('says once that the version is too new, and nothing about each step', () => {
    expect(specError(NEWER_SPEC)).toEqual([`Build spec version 53 is newer than this server supports (max ${MAX_SPEC_VERSION})`]);
  });

  it("says 'imports' is not supported first and alone", () => {
    const messages = specError(NEWER_SPEC.replace('version: 53', 'version: 25'));
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(/'imports' is not supported$/);
  });

  it('reads a command step without runInContainer as a container step of its image, as OneDev does', () => {
    const spec = parseBuildSpec(
      'version: 25\njobs:\n- name: CI\n  steps:\n  - !CommandStep\n    name: build\n    image: alpine\n    interpreter: !DefaultInterpreter {commands: [ls]}\n',
    );
    expect(spec.jobs[0].steps[0]).toMatchObject({ type: 'CommandStep', runInContainer: true, image: 'alpine' });
  });
});

describe('@secrets:name@', () => {
  it('is an alias of @secret:name@', () => {
    const resolve = createVariableResolver({
      projectName: 'p',
      projectPath: 'p',
      jobName: 'CI',
      ref: 'refs/heads/main',
      commitHash: 'a'.repeat(40),
      buildNumber: 1,
      params: {},
      secrets: { token: 's3cr3t' },
      properties: {},
    });
    expect(interpolate('[@secrets:token@] [@secret:token@]', resolve)).toBe('[s3cr3t] [s3cr3t]');
    expect(scanVariables('@secrets:token@')).toEqual([{ kind: 'secret', name: 'token' }]);
  });
});
