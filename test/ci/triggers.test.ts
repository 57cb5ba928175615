import { describe, expect, it } from 'vitest';
import { parseBuildSpec } from '../../src/ci/build-spec.js';
import { matchesPatterns, matchPath, parsePatternSet } from '../../src/ci/patterns.js';
import { expandParams, isSkipCommitMessage, matchTriggers, type TriggerEvent } from '../../src/ci/triggers.js';

describe('path patterns', () => {
  const table: [string, string, boolean][] = [
    ['main', 'main', true],
    ['main', 'main2', false],
    ['*', 'feature', true],
    ['*', 'feature/x', false],
    ['feature/*', 'feature/x', true],
    ['feature/*', 'feature/x/y', false],
    ['feature/**', 'feature/x/y', true],
    ['feature/**', 'feature', true],
    ['**/*.ts', 'a/b/c.ts', true],
    ['**/*.ts', 'c.ts', true],
    ['src/**/test/*.js', 'src/test/a.js', true],
    ['src/**/test/*.js', 'src/a/b/test/a.js', true],
    ['src/**/test/*.js', 'src/a/b/tests/a.js', false],
    ['v?.0', 'v1.0', true],
    ['v?.0', 'v10.0', false],
    ['docs/', 'docs/a/b.md', true],
    ['Main', 'main', false],
    ['/abs', 'abs', false],
  ];
  for (const [pattern, value, expected] of table) {
    it(`${pattern} ${expected ? 'matches' : 'does not match'} ${value}`, () => {
      expect(matchPath(pattern, value)).toBe(expected);
    });
  }

  it('parses quoted patterns and excludes', () => {
    expect(parsePatternSet('main "with space" -"-odd" -dev\\ x rel/**')).toEqual({ includes: ['main', 'with space', 'rel/**'], excludes: ['-odd', 'dev x'] });
  });

  it('applies includes and excludes like OneDev', () => {
    expect(matchesPatterns('release/** -release/old', 'release/new')).toBe(true);
    expect(matchesPatterns('release/** -release/old', 'release/old')).toBe(false);
    expect(matchesPatterns('-dev', 'main')).toBe(true);
    expect(matchesPatterns('-dev', 'dev')).toBe(false);
    expect(matchesPatterns('', 'main')).toBe(false);
    expect(matchesPatterns(null, 'anything')).toBe(true);
  });
});

const SPEC = parseBuildSpec(`
version: 25
jobs:
- name: any-branch
  triggers:
  - !BranchUpdateTrigger {}
- name: main-only
  triggers:
  - !BranchUpdateTrigger {branches: main release/** -release/old}
- name: docs
  triggers:
  - !BranchUpdateTrigger {paths: "docs/** -docs/draft/**"}
- name: server-project
  triggers:
  - !BranchUpdateTrigger {projects: onedev/server}
- name: matrix
  paramSpecs:
  - !ChoiceParam
    name: os
    choiceProvider: !SpecifiedChoices {choices: [{value: linux}, {value: mac}]}
  - !ChoiceParam
    name: jdk
    choiceProvider: !SpecifiedChoices {choices: [{value: '11'}, {value: '17'}]}
  - !TextParam
    name: note
    defaultValueProvider: !SpecifiedDefaultValue {value: hello}
  triggers:
  - !TagCreateTrigger
    tags: v*
    params:
    - name: os
      valuesProvider: !SpecifiedValues {values: [[linux], [mac]]}
    - name: jdk
      valuesProvider: !SpecifiedValues {values: [['11'], ['17']]}
- name: release-tags
  triggers:
  - !TagCreateTrigger {tags: 'v*', branches: main}
- name: pr
  triggers:
  - !PullRequestUpdateTrigger {branches: main, paths: src/**}
- name: pr-merge
  triggers:
  - !PullRequestMergeTrigger {}
- name: downstream
  jobDependencies:
  - jobName: any-branch
    requireSuccessful: true
  triggers:
  - !DependencyFinishedTrigger {}
`);

const names = (event: TriggerEvent): string[] => matchTriggers(SPEC, event).map((m) => m.job.name);
const push = (branch: string, extra: Partial<Extract<TriggerEvent, { kind: 'branch-update' }>> = {}): TriggerEvent => ({
  kind: 'branch-update',
  branch,
  changedFiles: ['src/a.ts'],
  commitMessage: 'Fix things',
  ...extra,
});

describe('matchTriggers', () => {
  it('branch filters', () => {
    expect(names(push('main'))).toEqual(['any-branch', 'main-only']);
    expect(names(push('release/2.0'))).toEqual(['any-branch', 'main-only']);
    expect(names(push('release/old'))).toEqual(['any-branch']);
    expect(names(push('dev'))).toEqual(['any-branch']);
  });

  it('path filters (and a new branch always matches)', () => {
    expect(names(push('dev', { changedFiles: ['docs/guide.md'] }))).toEqual(['any-branch', 'docs']);
    expect(names(push('dev', { changedFiles: ['docs/draft/x.md'] }))).toEqual(['any-branch']);
    expect(names(push('dev', { changedFiles: null }))).toEqual(['any-branch', 'docs']);
  });

  it('project filter needs the project path', () => {
    expect(names(push('dev', { projectPath: 'onedev/server' }))).toContain('server-project');
    expect(names(push('dev', { projectPath: 'fork/server' }))).not.toContain('server-project');
    expect(names(push('dev'))).not.toContain('server-project');
  });

  it('skip markers in the commit message', () => {
    for (const marker of ['[skip ci]', '[CI SKIP]', '[no ci]', '[skip job]', '[job skip]', '[No Job]']) {
      expect(isSkipCommitMessage(`Update docs ${marker}`)).toBe(true);
      expect(names(push('main', { commitMessage: `Update\n\nbody ${marker}` }))).toEqual([]);
    }
    expect(isSkipCommitMessage('skip ci without brackets')).toBe(false);
  });

  it('branch match gives reason, ref and default params', () => {
    const [m] = matchTriggers(SPEC, push('main'));
    expect(m).toMatchObject({ reason: "Branch 'main' is updated", refName: 'refs/heads/main', paramSets: [{}] });
  });

  it('tag creation with a param matrix and defaults', () => {
    const matches = matchTriggers(SPEC, { kind: 'tag-create', tag: 'v1.0' });
    expect(matches.map((m) => m.job.name)).toEqual(['matrix']);
    expect(matches[0]).toMatchObject({ reason: "Tag 'v1.0' is created", refName: 'refs/tags/v1.0' });
    expect(matches[0].paramSets).toEqual([
      { os: ['linux'], jdk: ['11'], note: ['hello'] },
      { os: ['linux'], jdk: ['17'], note: ['hello'] },
      { os: ['mac'], jdk: ['11'], note: ['hello'] },
      { os: ['mac'], jdk: ['17'], note: ['hello'] },
    ]);
    expect(names({ kind: 'tag-create', tag: 'nightly' })).toEqual([]);
  });

  it('tag trigger branches: the tagged commit must be on a matching branch', () => {
    expect(names({ kind: 'tag-create', tag: 'v2', commitBranches: ['main', 'dev'] })).toEqual(['matrix', 'release-tags']);
    expect(names({ kind: 'tag-create', tag: 'v2', commitBranches: ['dev'] })).toEqual(['matrix']);
  });

  it('pull request update: target branch, paths, skip markers unless required', () => {
    const pr = (extra: Partial<Extract<TriggerEvent, { kind: 'pull-request' }>> = {}): TriggerEvent => ({
      kind: 'pull-request',
      number: 7,
      targetBranch: 'main',
      sourceBranch: 'feature',
      changedFiles: ['src/x.ts'],
      ...extra,
    });
    const [m] = matchTriggers(SPEC, pr());
    expect(m).toMatchObject({ job: { name: 'pr' }, reason: 'Pull request is opened/updated', refName: 'refs/pulls/7/merge' });
    expect(names(pr({ targetBranch: 'dev' }))).toEqual([]);
    expect(names(pr({ changedFiles: ['README.md'] }))).toEqual([]);
    expect(names(pr({ commitMessage: 'wip [skip ci]' }))).toEqual([]);
    expect(names(pr({ commitMessage: 'wip [skip ci]', requiredJobs: ['pr'] }))).toEqual(['pr']);
    expect(names(pr({ action: 'merge' }))).toEqual(['pr-merge']);
  });

  it('dependency finished honours requireSuccessful', () => {
    const ev = (status: 'SUCCESSFUL' | 'FAILED'): TriggerEvent => ({
      kind: 'dependency-finished',
      jobName: 'any-branch',
      status,
      params: {},
      refName: 'refs/heads/main',
    });
    expect(matchTriggers(SPEC, ev('SUCCESSFUL'))).toMatchObject([
      { job: { name: 'downstream' }, reason: "Dependency job 'any-branch' is finished", refName: 'refs/heads/main' },
    ]);
    expect(names(ev('FAILED'))).toEqual([]);
  });

  it('expandParams passes values through', () => {
    const job = SPEC.jobs.find((j) => j.name === 'matrix')!;
    expect(
      expandParams(job, [{ name: 'os', secret: false, valuesProvider: { type: 'PassthroughValues', paramName: 'platform' } }], { platform: ['mac'] }),
    ).toEqual([{ os: ['mac'], jdk: [], note: ['hello'] }]);
  });
});
