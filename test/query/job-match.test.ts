import { describe, expect, it } from 'vitest';
import { jobMatches, namesIn, parseJobMatch, type JobMatchSubject } from '../../src/domain/query/job-match.js';
import { JOB_MATCH, QuerySyntaxError, parseQuery } from '../../src/query/index.js';

/** The error parseJobMatch throws, for asserting message and column. */
function jobMatchError(text: string): QuerySyntaxError {
  try {
    parseJobMatch(text);
  } catch (error) {
    expect(error).toBeInstanceOf(QuerySyntaxError);
    return error as QuerySyntaxError;
  }
  throw new Error(`job match parsed: ${text}`);
}

const subject = (over: Partial<JobMatchSubject> = {}): JobMatchSubject => ({
  projectPath: 'acme/app',
  branches: ['main'],
  userName: 'alice',
  groupNames: new Set(['release']),
  ...over,
});

const matches = (text: string, over: Partial<JobMatchSubject> = {}): boolean => jobMatches(parseJobMatch(text), subject(over));

describe('job match language: definition', () => {
  it("has the value operators and fields of OneDev's JobMatch, and no order by", () => {
    expect([...JOB_MATCH.valueOperators].sort()).toEqual(['on branch', 'submitted by group', 'submitted by user']);
    expect(JOB_MATCH.bareOperators).toEqual([]);
    expect(JOB_MATCH.fields.map((f) => [f.name, f.operators])).toEqual([
      ['Project', ['is']],
      ['Job', ['is']],
    ]);
    expect(JOB_MATCH.sortFields).toEqual([]);
  });
});

describe('job match language: parsing through parseQuery', () => {
  it('reads the three-word value operators, in any case and with any whitespace', () => {
    expect(parseQuery(JOB_MATCH, 'on branch "main" or submitted by user "alice" and SUBMITTED\t BY\nGroup "ops"')).toEqual({
      criteria: {
        kind: 'or',
        left: { kind: 'operator', operator: 'on branch', value: 'main', column: 1 },
        right: {
          kind: 'and',
          left: { kind: 'operator', operator: 'submitted by user', value: 'alice', column: 21 },
          right: { kind: 'operator', operator: 'submitted by group', value: 'ops', column: 51 },
        },
      },
      orders: [],
    });
  });

  it('reads "Project" is and "Job" is, the field name in any case', () => {
    expect(parseQuery(JOB_MATCH, 'not("project" is "a/**")').criteria).toEqual({
      kind: 'not',
      operand: { kind: 'field', field: 'Project', operator: 'is', value: 'a/**', column: 5 },
    });
    expect(parseQuery(JOB_MATCH, '"Job" is "CI"').criteria).toEqual({ kind: 'field', field: 'Job', operator: 'is', value: 'CI', column: 1 });
  });

  it('turns chains into one node per operator, parentheses kept', () => {
    expect(parseJobMatch('on branch "a" or on branch "b" or (submitted by user "u" and "Project" is "p/*") or not(submitted by group "g")')).toEqual({
      type: 'or',
      operands: [
        { type: 'onBranch', branch: 'a' },
        { type: 'onBranch', branch: 'b' },
        {
          type: 'and',
          operands: [
            { type: 'user', name: 'u' },
            { type: 'project', path: 'p/*' },
          ],
        },
        { type: 'not', operand: { type: 'group', name: 'g' } },
      ],
    });
  });
});

describe('job match language: errors say what and where', () => {
  it.each([
    ['on branch main', "Unexpected 'main' at column 11", 11],
    ['on branch', 'Unexpected end of job match at column 10', 10],
    ['submitted by user', 'Unexpected end of job match at column 18', 18],
    ['submitted by "alice"', `Unexpected '"alice"' at column 14`, 14],
    ['submitted by admin "alice"', "Unexpected 'admin' at column 14", 14],
    ['on branch "a" or', 'Unexpected end of job match at column 17', 17],
    ['(on branch "a"', 'Unexpected end of job match at column 15', 15],
    ['on branch "a" "b"', `Unexpected '"b"' at column 15`, 15],
    ['not on branch "a"', "Unexpected 'not' at column 1", 1],
    ['on branch "main', 'Unterminated quoted string at column 11', 11],
    ['on branch ""', 'Empty quoted string at column 11', 11],
    ['"Project" contains "a"', "Unexpected 'contains' at column 11", 11],
    ['"Branch" is "main"', 'Field not found: Branch', 1],
    ['on branch "a" and "Job" is "CI"', 'Job criteria is not supported here', 19],
    ['on branch "a" order by "Project"', "Unexpected 'order' at column 15", 15],
    ['order by "Project" desc', "Unexpected 'order' at column 1", 1],
    ['~main~', "Unexpected '~main~' at column 1", 1],
    ['#12', "Unexpected '#12' at column 1", 1],
    ['fixed between branch "a" and branch "b"', "Unexpected 'fixed' at column 1", 1],
    ['any "Link" matching(on branch "a")', "Unexpected 'any' at column 1", 1],
    ['successful', "Unexpected 'successful' at column 1", 1],
    [' \t', 'Job match is empty', 1],
  ])('%j → %s', (text, message, column) => {
    const error = jobMatchError(text);
    expect(error.message).toBe(message);
    expect(error.column).toBe(column);
    expect(error.status).toBe(400);
  });

  it('refuses nesting and chains beyond the stack with a 400, and takes long chains below it', () => {
    expect(jobMatchError(`${'not('.repeat(20_000)}on branch "a"${')'.repeat(20_000)}`).message).toBe('Job match is nested too deeply');
    expect(jobMatchError(Array(50_000).fill('on branch "a"').join(' or ')).message).toBe('Job match is nested too deeply');
    const long = parseJobMatch([...Array(4_000).fill('on branch "x"'), 'on branch "main"'].join(' or '));
    expect(long).toMatchObject({ type: 'or', operands: { length: 4_001 } });
    expect(jobMatches(long, subject())).toBe(true);
    expect(jobMatches(long, subject({ branches: ['dev'] }))).toBe(false);
  });
});

describe('job match language: evaluation', () => {
  it("on branch takes path wildcards over any of the subject's branches", () => {
    expect(matches('on branch "main"')).toBe(true);
    expect(matches('on branch "main"', { branches: ['dev'] })).toBe(false);
    expect(matches('on branch "release/**"', { branches: ['release/1/2'] })).toBe(true);
    expect(matches('on branch "release/*"', { branches: ['release/1/2'] })).toBe(false);
    expect(matches('on branch "v?"', { branches: ['topic', 'v1'] })).toBe(true);
    expect(matches('on branch "**"', { branches: [] })).toBe(false);
  });

  it('submitted by user and by group compare names case-insensitively', () => {
    expect(matches('submitted by user "Alice"')).toBe(true);
    expect(matches('submitted by user "bob"')).toBe(false);
    expect(matches('submitted by user "alice"', { userName: null })).toBe(false);
    expect(matches('submitted by group "RELEASE"')).toBe(true);
    expect(matches('submitted by group "ops"')).toBe(false);
  });

  it('"Project" is takes a path wildcard', () => {
    expect(matches('"Project" is "acme/**"')).toBe(true);
    expect(matches('"Project" is "acme/app"')).toBe(true);
    expect(matches('"Project" is "other/**"')).toBe(false);
  });

  it('"Job" is, allowed in a job executor\'s requirement, takes a * wildcard of the whole job name', () => {
    const job = (text: string, jobName?: string) => jobMatches(parseJobMatch(text, { jobCriteria: true }), subject({ jobName }));
    expect(job('"Job" is "CI*"', 'CI build')).toBe(true);
    expect(job('"Job" is "ci"', 'CI')).toBe(true);
    expect(job('"Job" is "CI"', 'Release')).toBe(false);
    expect(job('"Job" is "CI"')).toBe(false);
    expect(job('"Project" is "acme/**" and not("Job" is "Deploy")', 'Build')).toBe(true);
  });

  it('combines with and (tighter), or and not', () => {
    expect(matches('on branch "dev" or on branch "main" and submitted by user "alice"')).toBe(true);
    expect(matches('on branch "dev" or on branch "main" and submitted by user "bob"')).toBe(false);
    expect(matches('(on branch "dev" or on branch "main") and submitted by user "alice"')).toBe(true);
    expect(matches('not(on branch "main")')).toBe(false);
    expect(matches('not(on branch "dev") and not(submitted by group "ops")')).toBe(true);
  });

  it('namesIn lists the users and groups named anywhere, for checking they exist', () => {
    expect(namesIn(parseJobMatch('submitted by user "a" or not(submitted by group "g" and submitted by user "b") or on branch "x"'))).toEqual({
      users: ['a', 'b'],
      groups: ['g'],
    });
  });
});
