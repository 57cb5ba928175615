import { execFile } from 'node:child_process';
import { mkdtemp, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVariableResolver, interpolate, scanVariables, VariableError, type VariableContext } from '../../src/ci/variables.js';
import { BadRequest } from '../../src/errors.js';

const run = promisify(execFile);

let dir: string;
let workspace: string;
let ctx: VariableContext;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'gitloom-vars-'));
  workspace = path.join(dir, 'ws');
  await mkdir(workspace);
  await writeFile(path.join(workspace, 'buildVersion'), '1.2.3\n');
  await writeFile(path.join(dir, 'outside.txt'), 'secret stuff');
  await symlink(path.join(dir, 'outside.txt'), path.join(workspace, 'link'));
  ctx = {
    projectName: 'server',
    projectPath: 'onedev/server',
    jobName: 'CI',
    ref: 'refs/heads/main',
    commitHash: 'a'.repeat(40),
    buildNumber: 42,
    params: { flavor: ['debug'], os: ['linux', 'mac'], empty: [] },
    secrets: { token: 's3cr3t' },
    properties: { registry: 'example.org' },
    workspaceDir: workspace,
  };
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('interpolate', () => {
  it('replaces job variables and prefixed forms', () => {
    const r = createVariableResolver(ctx);
    expect(interpolate('#@build_number@ @project_path@/@project_name@ @job_name@ @ref@ @branch@ [@tag@] @commit_hash@', r)).toBe(
      `#42 onedev/server/server CI refs/heads/main main [] ${'a'.repeat(40)}`,
    );
    expect(interpolate('@param:flavor@ @param:os@ [@param:empty@] @secret:token@ @property:registry@ v@file:buildVersion@', r)).toBe(
      'debug linux,mac [] s3cr3t example.org v1.2.3',
    );
    expect(interpolate('[@build_version@] [@pull_request_number@] [@issue_number@]', r)).toBe('[] [] []');
    expect(interpolate('@build_version@ #@pull_request_number@', createVariableResolver({ ...ctx, buildVersion: '2.0', pullRequestNumber: 5 }))).toBe('2.0 #5');
    expect(interpolate('@tag@', createVariableResolver({ ...ctx, ref: 'refs/tags/v1' }))).toBe('v1');
  });

  it('treats @@ as a literal @', () => {
    const r = createVariableResolver(ctx);
    expect(interpolate('mail me@@example.org, @@@build_number@@@', r)).toBe('mail me@example.org, @42@');
    expect(interpolate('no variables', r)).toBe('no variables');
  });

  it('rejects unknown, unsupported and unterminated variables', () => {
    const r = createVariableResolver(ctx);
    expect(() => interpolate('@nope@', r)).toThrow("Unknown variable '@nope@'");
    expect(() => interpolate('@script:builtin:x@', r)).toThrow('is not supported');
    expect(() => interpolate('@pause@', r)).toThrow('is not supported');
    expect(() => interpolate('user@host', r)).toThrow('Unterminated variable');
    expect(() => interpolate('@param:@', r)).toThrow('needs a name');
    const err = (() => {
      try {
        interpolate('@nope@', r);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(VariableError);
    expect(err).toBeInstanceOf(BadRequest);
  });

  it('reports variables without a value', () => {
    const r = createVariableResolver(ctx);
    expect(() => interpolate('@param:missing@', r)).toThrow('Variable @param:missing@ has no value here');
    expect(() => interpolate('@secret:missing@', r)).toThrow('@secret:missing@');
    expect(() => interpolate('@property:missing@', r)).toThrow('@property:missing@');
    expect(() => interpolate('@file:buildVersion@', createVariableResolver({ ...ctx, workspaceDir: undefined }))).toThrow('has no value');
  });

  it('keeps @file: inside the workspace', () => {
    const r = createVariableResolver(ctx);
    expect(() => interpolate('@file:../outside.txt@', r)).toThrow('must be a relative path inside the workspace');
    expect(() => interpolate(`@file:${path.join(dir, 'outside.txt')}@`, r)).toThrow('must be a relative path inside the workspace');
    expect(() => interpolate('@file:link@', r)).toThrow('points outside the workspace');
    expect(() => interpolate('@file:missing@', r)).toThrow('File not found');
  });

  it('reads only regular files for @file: (a FIFO left by a job would block the server)', async () => {
    await run('mkfifo', [path.join(workspace, 'fifo')]);
    expect(() => interpolate('@file:fifo@', createVariableResolver(ctx))).toThrow('not a regular file');
  });

  it('scans references without resolving', () => {
    expect(scanVariables('@secret:a@ and @param:b@ @@ @commit_hash@')).toEqual([
      { kind: 'secret', name: 'a' },
      { kind: 'param', name: 'b' },
      { kind: 'job', name: 'commit_hash' },
    ]);
  });
});
