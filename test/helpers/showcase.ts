/**
 * A server seeded with one of everything the web UI shows, through the API and real git: the
 * `demo` project (README, code in a few languages, a build spec), a pull request with comments,
 * a review and an inline code comment with a reply, a pull request whose merge conflicts, a
 * finished build with a log and an artifact, and issues with a comment. Used by the accessibility crawl (test/web) and the
 * screenshot script (scripts/screenshots.ts).
 */
import { eventually, givenRepo, grantRole, removeWorkTrees, type Repo, runJobOnCommit } from './fixtures.js';
import { startTestServer, type TestServer } from './server.js';

const SPEC = `version: 25
jobs:
- name: CI
  steps:
  - !CommandStep
    name: test
    runInContainer: false
    interpreter: !DefaultInterpreter
      commands:
      - echo "Installing dependencies"
      - echo "Running 12 tests"
      - echo "ok - all tests passed"
      - echo "coverage 91%" > coverage.txt
  - !PublishArtifactStep
    name: publish
    artifacts: coverage.txt
`;

const README = `# demo

A small service used to show **Gitloom**'s pages.

## Usage

\`\`\`sh
npm install
npm start
\`\`\`

| Command | What it does |
|---|---|
| \`npm test\` | runs the tests |
| \`npm start\` | serves on port 8080 |

See [the guide](docs/guide.md).

## Design

A greeting takes $O(1)$ time and $$\\sum_{i=1}^{n} i = \\frac{n(n+1)}{2}$$ bytes at most[^bytes].

\`\`\`mermaid
graph LR
  Client -->|GET /?name=you| Server --> Greeting
\`\`\`

[^bytes]: Counted in UTF-8.
`;

const APP = `import { createServer } from 'node:http';
import { greet } from './greet.js';

/** Serves a greeting on every path. */
export function start(port: number): void {
  createServer((request, response) => {
    const name = new URL(request.url ?? '/', 'http://localhost').searchParams.get('name') ?? 'world';
    response.setHeader('content-type', 'text/plain');
    response.end(greet(name));
  }).listen(port);
}

start(Number(process.env.PORT ?? 8080));
`;

const GREET = `/** The greeting for a name. */
export function greet(name: string): string {
  return \`Hello, \${name}!\`;
}
`;

const GREET_FEATURE = `const GREETINGS: Record<string, string> = { en: 'Hello', fr: 'Bonjour', es: 'Hola' };

/** The greeting for a name, in a language (English by default). */
export function greet(name: string, language = 'en'): string {
  const word = GREETINGS[language] ?? GREETINGS.en;
  return \`\${word}, \${name}!\`;
}
`;

/** What {@link startShowcase} seeded: the server and the numbers of the things to visit. */
export interface Showcase {
  server: TestServer;
  repo: Repo;
  /** A second user, Code Writer on `demo`, who commented and reviewed. */
  alice: { name: string; password: string };
  pullNumber: number;
  /** A pull request (`port` into `main`) whose merge conflicts in `src/app.ts` and `docs/guide.md`. */
  conflictPullNumber: number;
  buildNumber: number;
  issueNumber: number;
  /** The head of `main`. */
  commitHash: string;
  /** Stops the server and removes the work trees. */
  close(): Promise<void>;
}

/** Throws unless a call answered 200; returns its JSON body. */
function ok(res: { status: number; text: string; json: any }, what: string): any {
  if (res.status !== 200) throw new Error(`${what}: ${res.status} ${res.text}`);
  return res.json;
}

/**
 * Starts a test server (SQLite, or PostgreSQL with GITLOOM_TEST_DATABASE_URL) and seeds it as
 * described above; waits until the build finished. Throws when any step fails.
 */
export async function startShowcase(): Promise<Showcase> {
  const server = await startTestServer();
  try {
    const alice = await server.createUser('alice');
    const repo = await givenRepo(server, 'demo', {
      files: {
        'README.md': README,
        'src/app.ts': APP,
        'src/greet.ts': GREET,
        '.onedev-buildspec.yml': SPEC,
        'docs/guide.md': '# Guide\n\nStart the server, then open `http://localhost:8080/?name=you`.\n',
        'scripts/release.py':
          'import sys\n\n\ndef main(version: str) -> None:\n    print(f"releasing {version}")\n\n\nif __name__ == "__main__":\n    main(sys.argv[1])\n',
      },
    });
    await grantRole(server, repo.id, alice.id, 'Code Writer');
    await repo.commitOn(
      'port',
      { 'src/app.ts': APP.replace('8080', '3000'), 'docs/guide.md': '# Guide\n\nStart the server on port 3000.\n' },
      'Serve on port 3000 by default',
    );
    await repo.commitOn(
      'main',
      { 'src/app.ts': APP.replace('8080', '80'), 'docs/guide.md': '# Guide\n\nStart the server, then open `http://localhost/?name=you`.\n' },
      'Serve on port 80 by default',
    );
    const commitHash = await repo.head('main');

    const buildId = ok(await runJobOnCommit(server, { projectId: repo.id, commitHash, jobName: 'CI', reason: 'showcase' }), 'run CI');

    const head = await repo.commitOn('greetings', { 'src/greet.ts': GREET_FEATURE }, 'Greet in English, French and Spanish');
    const pullId = ok(
      await server.call('POST', '/pulls', {
        body: {
          targetProjectId: repo.id,
          sourceProjectId: repo.id,
          targetBranch: 'main',
          sourceBranch: 'greetings',
          title: 'Greet in more languages',
          description: 'Adds **French** and **Spanish** greetings.\n\n- [x] tests\n- [ ] docs',
          reviewerIds: [alice.id],
        },
      }),
      'open pull request',
    );
    ok(await server.call('POST', '/pull-request-comments', { body: { requestId: pullId, content: 'Ready for review, @alice.' } }), 'comment');
    ok(
      await server.call('POST', '/pull-request-comments', { body: { requestId: pullId, content: 'Looks good, one note on the map.' }, auth: alice.auth }),
      'comment',
    );
    const codeCommentId = ok(
      await server.call('POST', '/code-comments', {
        auth: alice.auth,
        body: {
          projectId: repo.id,
          content: 'Should unknown languages fall back to English *silently*?',
          mark: { commitHash: head, path: 'src/greet.ts', range: { fromRow: 4, fromColumn: 0, toRow: 4, toColumn: 50 } },
          compareContext: {
            pullRequestId: pullId,
            oldCommitHash: commitHash,
            newCommitHash: head,
            pathFilter: null,
            currentFile: 'src/greet.ts',
            whitespaceOption: 'DEFAULT',
          },
        },
      }),
      'code comment',
    );
    ok(
      await server.call('POST', '/code-comment-replies', {
        body: {
          commentId: codeCommentId,
          content: 'Yes, that is the intent.',
          compareContext: { pullRequestId: pullId, oldCommitHash: commitHash, newCommitHash: head },
        },
      }),
      'code comment reply',
    );
    ok(
      await server.call('POST', '/code-comments', {
        auth: alice.auth,
        body: {
          projectId: repo.id,
          content: "German too?\n```suggestion\nconst GREETINGS: Record<string, string> = { en: 'Hello', fr: 'Bonjour', es: 'Hola', de: 'Hallo' };\n```",
          mark: { commitHash: head, path: 'src/greet.ts', range: { fromRow: 0, fromColumn: 0, toRow: 0, toColumn: 10 } },
          compareContext: { pullRequestId: pullId, oldCommitHash: commitHash, newCommitHash: head, currentFile: 'src/greet.ts' },
        },
      }),
      'code comment with a suggested change',
    );

    const conflictPullId = ok(
      await server.call('POST', '/pulls', {
        body: { targetProjectId: repo.id, sourceProjectId: repo.id, targetBranch: 'main', sourceBranch: 'port', title: 'Serve on port 3000' },
        auth: alice.auth,
      }),
      'open conflicting pull request',
    );

    const issueId = ok(
      await server.call('POST', '/issues', {
        body: {
          projectId: repo.id,
          title: 'Greeting ignores the Accept-Language header',
          description: 'Requests with `Accept-Language: fr` still get **Hello**.',
        },
      }),
      'issue',
    );
    ok(await server.call('POST', '/issue-comments', { body: { issueId, content: 'Confirmed on main.' }, auth: alice.auth }), 'issue comment');
    ok(await server.call('POST', '/issues', { body: { projectId: repo.id, title: 'Document the PORT variable' } }), 'issue');

    const build = await eventually(async () => {
      const b = ok(await server.call('GET', `/builds/${buildId}`), 'build');
      return ['SUCCESSFUL', 'FAILED', 'CANCELLED', 'TIMED_OUT'].includes(b.status) ? b : null;
    }, 120_000);
    if (build?.status !== 'SUCCESSFUL') throw new Error(`showcase build: ${build?.status}`);
    const pull = ok(await server.call('GET', `/pulls/${pullId}`), 'pull request');
    const issue = ok(await server.call('GET', `/issues/${issueId}`), 'issue');
    const conflictPull = ok(await server.call('GET', `/pulls/${conflictPullId}`), 'conflicting pull request');
    return {
      server,
      repo,
      alice,
      pullNumber: pull.number,
      conflictPullNumber: conflictPull.number,
      buildNumber: build.number,
      issueNumber: issue.number,
      commitHash,
      async close() {
        await removeWorkTrees();
        await server.close();
      },
    };
  } catch (error) {
    await removeWorkTrees();
    await server.close();
    throw error;
  }
}
