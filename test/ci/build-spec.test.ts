import { describe, expect, it } from 'vitest';
import { BuildSpecError, parseBuildSpec } from '../../src/ci/build-spec.js';
import { evaluateCondition, parseCondition } from '../../src/ci/conditions.js';
import { QuerySyntaxError } from '../../src/query/index.js';

/** Spec in the shape of OneDev's example (OneDev's own CI/Release jobs), shell-executor form. */
const REFERENCE_SPEC = `
version: 25
properties:
- name: registry
  value: example.org
jobs:
- name: CI
  steps:
  - !CheckoutStep
    name: checkout
    cloneCredential: !DefaultCredential {}
    withLfs: false
    withSubmodules: false
    cloneDepth: 1
    condition: ALL_PREVIOUS_STEPS_WERE_SUCCESSFUL
  - !CommandStep
    name: detect build version
    runInContainer: false
    interpreter: !DefaultInterpreter
      commands:
      - echo "1.0.@build_number@" > buildVersion
    useTTY: false
    condition: ALL_PREVIOUS_STEPS_WERE_SUCCESSFUL
  - !SetBuildVersionStep
    name: set build version
    buildVersion: '@file:buildVersion@'
    condition: ALL_PREVIOUS_STEPS_WERE_SUCCESSFUL
  - !CommandStep
    name: test
    runInContainer: false
    interpreter: !ShellInterpreter
      shell: bash
      commands: |
        set -e
        echo testing @param:flavor@ against @property:registry@
        echo token @secret:deploy-token@ @@literal
    envVars:
    - name: FLAVOR
      value: '@param:flavor@'
    condition: ALWAYS
  paramSpecs:
  - !ChoiceParam
    name: flavor
    allowMultiple: false
    allowEmpty: false
    choiceProvider: !SpecifiedChoices
      choices:
      - value: debug
        color: '#0d87e9'
      - value: release
        color: '#0d87e9'
    defaultValueProvider: !SpecifiedDefaultValue
      value: debug
  - !BooleanParam
    name: verbose
    defaultValueProvider: !TrueDefaultValue {}
  - !TextParam
    name: note
    allowEmpty: true
  triggers:
  - !BranchUpdateTrigger
    branches: main
    projects: onedev/server
  - !PullRequestUpdateTrigger
    branches: main
  retryCondition: never
  maxRetries: 3
  retryDelay: 30
  caches:
  - key: maven-cache
    path: /root/.m2/repository
  timeout: 3600
- name: Release
  jobDependencies:
  - jobName: CI
    requireSuccessful: true
    jobParams:
    - name: flavor
      secret: false
      valuesProvider: !SpecifiedValues
        values:
        - - release
  steps:
  - !PublishArtifactStep
    name: publish
    artifacts: '*.zip *.tar.gz'
    condition: ALL_PREVIOUS_STEPS_WERE_SUCCESSFUL
  triggers:
  - !TagCreateTrigger
    tags: v*
  postBuildActions:
  - !RunJobAction
    condition: successful and on branch "main"
    jobName: CI
    jobParams:
    - name: flavor
      secret: false
      valuesProvider: !SpecifiedValues
        values:
        - - debug
  timeout: 600
`;

function errorsOf(text: string): string[] {
  try {
    parseBuildSpec(text);
  } catch (e) {
    expect(e).toBeInstanceOf(BuildSpecError);
    return [...(e as BuildSpecError).messages];
  }
  throw new Error('expected the spec to be invalid');
}

const job = (body: string): string => `version: 25\njobs:\n- name: J\n${body}`;

describe('parseBuildSpec: valid spec', () => {
  const spec = parseBuildSpec(REFERENCE_SPEC);

  it('reads version, properties and jobs', () => {
    expect(spec.version).toBe(25);
    expect(spec.properties).toEqual([{ name: 'registry', value: 'example.org' }]);
    expect(spec.jobs.map((j) => j.name)).toEqual(['CI', 'Release']);
  });

  it('reads steps with their tags and defaults', () => {
    const [checkout, detect, setVersion, test] = spec.jobs[0].steps;
    expect(checkout).toEqual({
      type: 'CheckoutStep',
      name: 'checkout',
      condition: 'ALL_PREVIOUS_STEPS_WERE_SUCCESSFUL',
      cloneCredential: { type: 'DefaultCredential' },
      withLfs: false,
      withSubmodules: false,
      cloneDepth: 1,
      checkoutPath: null,
    });
    expect(detect).toMatchObject({
      type: 'CommandStep',
      runInContainer: false,
      interpreter: { type: 'DefaultInterpreter', commands: 'echo "1.0.@build_number@" > buildVersion' },
    });
    expect(setVersion).toMatchObject({ type: 'SetBuildVersionStep', buildVersion: '@file:buildVersion@' });
    expect(test).toMatchObject({
      type: 'CommandStep',
      condition: 'ALWAYS',
      interpreter: { type: 'ShellInterpreter', shell: 'bash' },
      envVars: [{ name: 'FLAVOR', value: '@param:flavor@' }],
    });
    expect(test.type === 'CommandStep' && test.interpreter.commands).toContain('set -e\necho testing');
  });

  it('reads param specs with defaults', () => {
    expect(spec.jobs[0].paramSpecs).toEqual([
      {
        type: 'ChoiceParam',
        name: 'flavor',
        description: null,
        allowMultiple: false,
        allowEmpty: false,
        defaultValue: ['debug'],
        choices: ['debug', 'release'],
      },
      { type: 'BooleanParam', name: 'verbose', description: null, allowMultiple: false, allowEmpty: false, defaultValue: ['true'] },
      { type: 'TextParam', name: 'note', description: null, allowMultiple: false, allowEmpty: true, defaultValue: null, pattern: null, multiline: false },
    ]);
  });

  it('reads triggers, job settings and secret references', () => {
    const ci = spec.jobs[0];
    expect(ci.triggers).toEqual([
      { type: 'BranchUpdateTrigger', projects: 'onedev/server', params: [], branches: 'main', paths: null },
      { type: 'PullRequestUpdateTrigger', projects: null, params: [], branches: 'main', paths: null },
    ]);
    expect(ci).toMatchObject({ timeout: 3600, retryCondition: 'never', maxRetries: 3, retryDelay: 30, jobExecutor: null });
    expect(ci.secretRefs).toEqual(['deploy-token']);
  });

  it("reads an image build and container steps' registry logins, whose password secrets the job needs", () => {
    const parsed = parseBuildSpec(
      [
        'version: 25',
        'jobs:',
        '- name: Image',
        '  steps:',
        '  - !BuildImageStep',
        '    name: build',
        '    buildPath: docker',
        '    tags: registry.example.com/team/app:@build_number@ registry.example.com/team/app:latest',
        '    moreOptions: --build-arg A=1',
        '    registryLogins:',
        '    - registryUrl: registry.example.com',
        '      userName: ci',
        '      passwordSecret: registry-token',
        '  - !CommandStep',
        '    name: use',
        '    image: registry.example.com/team/app:latest',
        '    registryLogins:',
        '    - userName: hub-user',
        '      passwordSecret: hub-token',
        '    interpreter: !DefaultInterpreter',
        '      commands: [true]',
      ].join('\n'),
    );
    const [build, use] = parsed.jobs[0].steps;
    expect(build).toEqual({
      type: 'BuildImageStep',
      name: 'build',
      condition: 'ALL_PREVIOUS_STEPS_WERE_SUCCESSFUL',
      buildPath: 'docker',
      dockerfile: null,
      tags: 'registry.example.com/team/app:@build_number@ registry.example.com/team/app:latest',
      moreOptions: '--build-arg A=1',
      publish: true,
      removeDanglingImages: true,
      registryLogins: [{ registryUrl: 'registry.example.com', userName: 'ci', passwordSecret: 'registry-token' }],
    });
    expect(use).toMatchObject({ registryLogins: [{ registryUrl: null, userName: 'hub-user', passwordSecret: 'hub-token' }] });
    expect(parsed.jobs[0].secretRefs).toEqual(['hub-token', 'registry-token']);
  });

  it('reads dependencies, artifacts steps and post-build actions', () => {
    const release = spec.jobs[1];
    expect(release.jobDependencies).toEqual([
      {
        jobName: 'CI',
        requireSuccessful: true,
        jobParams: [{ name: 'flavor', secret: false, valuesProvider: { type: 'SpecifiedValues', values: [['release']] } }],
        artifacts: '**',
        destinationPath: null,
      },
    ]);
    expect(release.steps[0]).toEqual({
      type: 'PublishArtifactStep',
      name: 'publish',
      condition: 'ALL_PREVIOUS_STEPS_WERE_SUCCESSFUL',
      sourcePath: null,
      artifacts: '*.zip *.tar.gz',
    });
    expect(release.timeout).toBe(600);
    const action = release.postBuildActions[0];
    expect(action).toMatchObject({ type: 'RunJobAction', jobName: 'CI', condition: 'successful and on branch "main"' });
    expect(evaluateCondition(action.conditionAst, { status: 'SUCCESSFUL', branch: 'main' })).toBe(true);
    expect(evaluateCondition(action.conditionAst, { status: 'FAILED', branch: 'main' })).toBe(false);
    expect(evaluateCondition(action.conditionAst, { status: 'SUCCESSFUL', branch: 'dev' })).toBe(false);
  });

  it('fills reference defaults for a minimal job', () => {
    const s = parseBuildSpec(
      job('  steps:\n  - !CommandStep\n    name: s\n    runInContainer: false\n    interpreter: !DefaultInterpreter\n      commands: [echo hi]\n'),
    );
    expect(s.jobs[0]).toMatchObject({
      timeout: 3600,
      maxRetries: 3,
      retryDelay: 30,
      retryCondition: 'never',
      triggers: [],
      jobDependencies: [],
      postBuildActions: [],
      secretRefs: [],
    });
    expect(s.jobs[0].steps[0].condition).toBe('ALL_PREVIOUS_STEPS_WERE_SUCCESSFUL');
  });

  it('accepts the legacy !PullRequestTrigger tag and a multi-value choice default', () => {
    const s = parseBuildSpec(
      job(`  paramSpecs:
  - !ChoiceParam
    name: os
    allowMultiple: true
    choiceProvider: !SpecifiedChoices {choices: [{value: linux}, {value: mac}]}
    defaultMultiValueProvider: !SpecifiedDefaultMultiValue {value: [linux, mac]}
  triggers:
  - !PullRequestTrigger {}
  - !ScheduleTrigger {cronExpression: '0 0 1 * * ?'}
`),
    );
    expect(s.jobs[0].triggers.map((t) => t.type)).toEqual(['PullRequestUpdateTrigger', 'ScheduleTrigger']);
    expect(s.jobs[0].paramSpecs[0].defaultValue).toEqual(['linux', 'mac']);
  });
});

describe('parseBuildSpec: invalid specs', () => {
  const cases: [string, string, RegExp][] = [
    ['bad YAML', 'version: 25\njobs: [\n', /line \d+, column \d+/],
    ['empty text', '', /Build spec is empty/],
    ['not a mapping', '- a\n- b\n', /expected a mapping/],
    ['missing version', 'jobs: []\n', /'version' is required/],
    ['duplicate job names', 'version: 25\njobs:\n- name: A\n- name: A\n', /duplicate job name 'A'/],
    ['job without name', 'version: 25\njobs:\n- timeout: 5\n', /'name' is required/],
    ['unknown job property', job('  foo: 1\n'), /unknown property 'foo'/],
    ['step without tag', job('  steps:\n  - name: x\n'), /step needs a type tag such as !CommandStep/],
    ['unsupported step', job('  steps:\n  - !PublishSiteStep\n    name: x\n'), /unsupported step type '!PublishSiteStep'/],
    ['an image build without tags', job('  steps:\n  - !BuildImageStep\n    name: x\n'), /'tags' is required/],
    ['container step without image', job('  steps:\n  - !RunContainerStep\n    name: x\n'), /'image' is required/],
    [
      'relative container working directory',
      job('  steps:\n  - !RunContainerStep\n    name: x\n    image: alpine\n    workingDir: src\n'),
      /workingDir must be an absolute path in the container: 'src'/,
    ],
    [
      'container command step without image',
      job('  steps:\n  - !CommandStep\n    name: x\n    interpreter: !DefaultInterpreter {commands: [ls]}\n'),
      /image is required when runInContainer is true/,
    ],
    ['missing interpreter', job('  steps:\n  - !CommandStep\n    name: x\n    runInContainer: false\n'), /'interpreter' is required/],
    [
      'unsupported interpreter',
      job('  steps:\n  - !CommandStep\n    name: x\n    runInContainer: false\n    interpreter: !PowerShellInterpreter {commands: [ls]}\n'),
      /unsupported interpreter '!PowerShellInterpreter'/,
    ],
    [
      'bad step condition',
      job('  steps:\n  - !SetBuildVersionStep\n    name: x\n    buildVersion: "1"\n    condition: SOMETIMES\n'),
      /unknown step condition 'SOMETIMES'/,
    ],
    ['publish without artifacts', job('  steps:\n  - !PublishArtifactStep\n    name: x\n'), /'artifacts' is required/],
    ['unknown variable', job('  steps:\n  - !SetBuildVersionStep\n    name: x\n    buildVersion: "@foo@"\n'), /Unknown variable '@foo@'/],
    ['unterminated variable', job('  steps:\n  - !SetBuildVersionStep\n    name: x\n    buildVersion: "me@host"\n'), /Unterminated variable/],
    ['undeclared param variable', job('  steps:\n  - !SetBuildVersionStep\n    name: x\n    buildVersion: "@param:nope@"\n'), /undeclared param 'nope'/],
    ['undeclared property', job('  steps:\n  - !SetBuildVersionStep\n    name: x\n    buildVersion: "@property:nope@"\n'), /undeclared property 'nope'/],
    ['unsupported param type', job('  paramSpecs:\n  - !IntegerParam\n    name: n\n'), /unsupported param type '!IntegerParam'/],
    ['duplicate params', job('  paramSpecs:\n  - !TextParam {name: a}\n  - !TextParam {name: a}\n'), /duplicate param name 'a'/],
    [
      'choice default not a choice',
      job(
        '  paramSpecs:\n  - !ChoiceParam\n    name: c\n    choiceProvider: !SpecifiedChoices {choices: [{value: x}]}\n    defaultValueProvider: !SpecifiedDefaultValue {value: y}\n',
      ),
      /default value 'y' is not one of the choices/,
    ],
    ['text param multiple', job('  paramSpecs:\n  - !TextParam {name: t, allowMultiple: true}\n'), /cannot allow multiple values/],
    ['missing dependency', job('  jobDependencies:\n  - jobName: Other\n'), /dependency job 'Other' not found/],
    [
      'circular dependencies',
      'version: 25\njobs:\n- name: A\n  jobDependencies: [{jobName: B}]\n- name: B\n  jobDependencies: [{jobName: A}]\n',
      /circular job dependencies: A → B → A/,
    ],
    ['self dependency', job('  jobDependencies: [{jobName: J}]\n'), /circular job dependencies: J → J/],
    ['duplicate dependency', 'version: 25\njobs:\n- name: A\n- name: B\n  jobDependencies: [{jobName: A}, {jobName: A}]\n', /duplicate dependency 'A'/],
    ['unsupported trigger', job('  triggers:\n  - !IssueInStateTrigger {state: Open}\n'), /unsupported trigger type '!IssueInStateTrigger'/],
    [
      'trigger with undeclared param',
      job('  triggers:\n  - !BranchUpdateTrigger\n    params:\n    - name: p\n      valuesProvider: !SpecifiedValues {values: [[x]]}\n'),
      /undeclared param 'p'/,
    ],
    ['bad pattern', job("  triggers:\n  - !BranchUpdateTrigger {branches: '\"main'}\n"), /unterminated quote/],
    [
      'invalid text param pattern',
      job('  paramSpecs:\n  - !TextParam {name: t, pattern: "v[0-9"}\n'),
      /jobs\[0\] "J" › paramSpecs\[0\] › pattern: invalid regular expression 'v\[0-9'/,
    ],
    // RE2 syntax: no lookaround or backreferences (they need a backtracking engine)
    ['lookahead in a text param pattern', job('  paramSpecs:\n  - !TextParam {name: t, pattern: "(?=a)a+"}\n'), /invalid regular expression '\(\?=a\)a\+'/],
    ['backreference in a text param pattern', job('  paramSpecs:\n  - !TextParam {name: t, pattern: "(a)\\\\1"}\n'), /invalid regular expression '\(a\)\\1'/],
    [
      'text param pattern over 1,000 characters',
      job(`  paramSpecs:\n  - !TextParam {name: t, pattern: "${'a'.repeat(1001)}"}\n`),
      /pattern: regular expression is longer than 1000 characters \(1001\)/,
    ],
    [
      'text param pattern too complex',
      job('  paramSpecs:\n  - !TextParam {name: t, pattern: "\\\\w{0,999}\\\\w{0,999}"}\n'),
      /pattern: regular expression is too complex: it compiles to (about )?\d+ instructions, at most 2000/,
    ],
    [
      'branch pattern over 1,000 characters',
      job(`  triggers:\n  - !BranchUpdateTrigger {branches: "main ${'b'.repeat(1001)}"}\n`),
      /a pattern is longer than 1000 characters \(1001\)/,
    ],
    [
      'on-branch condition over 1,000 characters',
      job(`  postBuildActions:\n  - !RunJobAction {condition: 'on branch "${'b'.repeat(1001)}"', jobName: J}\n`),
      /Branch pattern is longer than 1000 characters/,
    ],
    ['bad cron', job('  triggers:\n  - !ScheduleTrigger {cronExpression: "* *"}\n'), /Quartz cron expression/],
    ['negative timeout', job('  timeout: -1\n'), /timeout: expected an integer ≥ 1/],
    ['bad retry condition', job('  retryCondition: sometimes\n'), /invalid condition 'sometimes'/],
    ['status criterion in retry condition', job('  retryCondition: successful\n'), /not applicable to a retry condition/],
    [
      'unsupported post-build action',
      job('  postBuildActions:\n  - !SendNotificationAction {condition: always}\n'),
      /unsupported post-build action '!SendNotificationAction'/,
    ],
    [
      'run job action to missing job',
      job('  postBuildActions:\n  - !RunJobAction {condition: always, jobName: Nope}\n'),
      /job 'Nope' of !RunJobAction not found/,
    ],
    ['bad action condition', job('  postBuildActions:\n  - !RunJobAction {condition: "successful and", jobName: J}\n'), /invalid condition/],
    ['project dependencies', job('  projectDependencies:\n  - projectPath: x\n'), /'projectDependencies' is not supported/],
    ['imports', 'version: 25\nimports:\n- projectPath: x\njobs: []\n', /'imports' is not supported/],
    [
      'escaping destination path',
      'version: 25\njobs:\n- name: A\n- name: B\n  jobDependencies: [{jobName: A, destinationPath: ../x}]\n',
      /must be a relative path inside the workspace/,
    ],
  ];
  it('accepts the text param patterns OneDev users write (the controls of the pattern cases)', () => {
    for (const pattern of ['^(a+)+$', String.raw`[0-9]+\.[0-9]+`, String.raw`(?i)release-\d{1,3}`, String.raw`\Q1.0\E|v\p{L}+`, '.{1,255}', 'x'.repeat(1000)]) {
      const spec = parseBuildSpec(job(`  paramSpecs:\n  - !TextParam {name: t, pattern: '${pattern}'}\n`));
      expect(spec.jobs[0].paramSpecs[0]).toMatchObject({ type: 'TextParam', pattern });
    }
  });

  for (const [title, text, pattern] of cases) {
    it(`rejects ${title}`, () => {
      const messages = errorsOf(text);
      expect(messages.join('\n')).toMatch(pattern);
    });
  }

  it('reports every problem at once, with line numbers', () => {
    const messages = errorsOf(job('  timeout: x\n  maxRetries: -2\n  bogus: 1\n'));
    expect(messages).toHaveLength(3);
    expect(messages[0]).toMatch(/^line 4: jobs\[0\] "J" › timeout/);
    const err = new BuildSpecError(messages);
    expect(err.message.split('\n')[0]).toBe('Invalid build spec:');
  });

  it('refuses alias bombs without exhausting memory', () => {
    let text = 'version: 25\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n';
    for (let i = 1; i < 8; i++)
      text += `a${i}: &a${i} [${Array(10)
        .fill(`*a${i - 1}`)
        .join(', ')}]\n`;
    text += 'jobs: []\n';
    expect(errorsOf(text).join()).toMatch(/too large|unknown property/);
  });
});

describe('conditions', () => {
  it('parses and evaluates boolean combinations', () => {
    const c = parseCondition('not(failed) and ("Log" contains "BUILD OK" or "env" is "prod") and previous is timed out', 'action');
    const ctx = {
      status: 'SUCCESSFUL' as const,
      previousStatus: 'TIMED_OUT' as const,
      logContains: (t: string) => 'xx BUILD OK'.includes(t),
      params: { env: ['dev'] },
    };
    expect(evaluateCondition(c, ctx)).toBe(true);
    expect(evaluateCondition(c, { ...ctx, logContains: () => false })).toBe(false);
    expect(evaluateCondition(c, { ...ctx, logContains: () => false, params: { env: ['prod'] } })).toBe(true);
    expect(evaluateCondition(parseCondition('"env" is empty', 'retry'), { params: { env: [''] } })).toBe(true);
    expect(evaluateCondition(parseCondition('on branch "release/**"', 'action'), { branch: 'release/1/2' })).toBe(true);
  });

  it('says where a condition is malformed', () => {
    expect(() => parseCondition('successful or or failed', 'action')).toThrow("Unexpected 'or' at column 15");
    expect(() => parseCondition('"Log" contains', 'action')).toThrow('Unexpected end of condition');
  });

  it.each([
    ['"Log" contains', 'Unexpected end of condition at column 15'],
    ['successful and', 'Unexpected end of condition at column 15'],
    ['sometimes', "Unexpected 'sometimes' at column 1"],
    ['previous is', 'Unexpected end of condition at column 12'],
    ['previous is done', "Unexpected 'done' at column 13"],
    ['always "x"', `Unexpected '"x"' at column 8`],
    ['on branch main', "Unexpected 'main' at column 11"],
    ['not failed', "Unexpected 'not' at column 1"],
    ['"env" is "prod', 'Unterminated quoted string at column 10'],
    ['"Other" contains "x"', "Field 'Other' is not applicable for operator 'contains'"],
    ['"env" is "x" order by "env"', "Unexpected 'order' at column 14"],
    ['~x~', "Unexpected '~x~' at column 1"],
    ['', 'Condition is empty'],
  ])('%j → %s', (text, message) => {
    expect(() => parseCondition(text, 'action')).toThrow(QuerySyntaxError);
    expect(() => parseCondition(text, 'action')).toThrow(message);
  });

  it('reads keywords in any case, params by any name as written, and long chains', () => {
    expect(parseCondition('SUCCESSFUL\tAND  on Branch "main" or Previous IS timed\nout', 'action')).toEqual({
      type: 'or',
      operands: [
        {
          type: 'and',
          operands: [
            { type: 'status', status: 'SUCCESSFUL' },
            { type: 'onBranch', branch: 'main' },
          ],
        },
        { type: 'previous', status: 'TIMED_OUT' },
      ],
    });
    expect(parseCondition('"Build Flavor" is "a\\"b" and "EMPTY" is empty', 'retry')).toEqual({
      type: 'and',
      operands: [
        { type: 'paramIs', param: 'Build Flavor', value: 'a"b' },
        { type: 'paramIsEmpty', param: 'EMPTY' },
      ],
    });
    const long = parseCondition([...Array(4_000).fill('"Log" contains "x"'), 'on branch "main"'].join(' or '), 'action');
    expect(evaluateCondition(long, { branch: 'main' })).toBe(true);
    expect(evaluateCondition(long, { branch: 'dev' })).toBe(false);
    expect(() => parseCondition(Array(50_000).fill('always').join(' or '), 'action')).toThrow('Condition is nested too deeply');
  });

  it('allows only always, never, "Log" contains and param criteria in a retry condition', () => {
    expect(parseCondition('"Log" contains "flaky" or always and not(never)', 'retry')).toMatchObject({ type: 'or' });
    for (const [text, criterion] of [
      ['successful', 'successful'],
      ['previous is failed', 'previous is failed'],
      ['never or on branch "x"', 'on branch'],
    ]) {
      expect(() => parseCondition(text, 'retry')).toThrow(
        `Criterion '${criterion}' at column ${text.indexOf(criterion) + 1} is not applicable to a retry condition`,
      );
      expect(() => parseCondition(text, 'action')).not.toThrow();
    }
  });
});
