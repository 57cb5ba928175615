import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitFiles, git, gitUrl, makeWorkTree, startTestServer, ADMIN, type TestServer } from '../helpers/server.js';

/**
 * The authorization matrix: every route below is called by every kind of caller, and the
 * expected status is derived from the route's required privilege (docs/compatibility.md#platform-permissions,
 * docs/compatibility.md#gitloom-differs-errors: 401 anonymous, 404 invisible project, 403 visible but lacking).
 */
type Persona = 'anonymousOff' | 'anonymousOn' | 'noRole' | 'reader' | 'writer' | 'owner' | 'group' | 'admin';
type Level = 'any' | 'user' | 'access' | 'readCode' | 'writeCode' | 'manageIssues' | 'manage' | 'adminOnProject' | 'admin';

interface Route {
  method: 'GET' | 'POST' | 'DELETE';
  level: Level;
  /** Builds the call (run as administrator first when it needs fresh data). */
  call(persona: Persona): Promise<{ path: string; body?: unknown; text?: string }> | { path: string; body?: unknown; text?: string };
  success?: number;
}

const PRIVILEGES: Record<Persona, Level[]> = {
  anonymousOff: [],
  anonymousOn: ['any'],
  noRole: ['any', 'user'],
  reader: ['any', 'user', 'access', 'readCode'],
  writer: ['any', 'user', 'access', 'readCode', 'writeCode'],
  group: ['any', 'user', 'access', 'readCode', 'writeCode'],
  owner: ['any', 'user', 'access', 'readCode', 'writeCode', 'manageIssues', 'manage'],
  admin: ['any', 'user', 'access', 'readCode', 'writeCode', 'manageIssues', 'manage', 'adminOnProject', 'admin'],
};

const PROJECT_LEVELS: Level[] = ['access', 'readCode', 'writeCode', 'manageIssues', 'manage', 'adminOnProject'];

function expected(persona: Persona, route: Route): number {
  const held = PRIVILEGES[persona];
  const anonymous = persona === 'anonymousOff' || persona === 'anonymousOn';
  if (persona === 'anonymousOff') return 401;
  if (anonymous && route.method !== 'GET') return 401;
  if (held.includes(route.level)) return route.success ?? 200;
  if (PROJECT_LEVELS.includes(route.level) && !held.includes('access')) return 404;
  return anonymous ? 401 : 403;
}

let server: TestServer;
let projectId: number;
let milestoneId: number;
let authorizationId: number;
let membershipId: number;
let groupId: number;
let groupAuthorizationId: number;
let requestId: number;
let issueId: number;
let specId: number;
const auth: Partial<Record<Persona, string | null>> = { anonymousOff: null, anonymousOn: null };
let counter = 0;
const unique = (prefix: string) => `${prefix}-${++counter}`;

async function adminCreate(path: string, body: unknown): Promise<number> {
  const res = await server.call('POST', path, { body });
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.text}`);
  return res.json as number;
}

const P = () => projectId;
const ROUTES: Record<string, Route> = {
  'GET /projects': { method: 'GET', level: 'any', call: () => ({ path: '/projects' }) },
  'GET /users/me': { method: 'GET', level: 'user', call: () => ({ path: '/users/me' }) },
  'GET /projects/{id}': { method: 'GET', level: 'access', call: () => ({ path: `/projects/${P()}` }) },
  'GET /projects/{id}/setting': { method: 'GET', level: 'manage', call: () => ({ path: `/projects/${P()}/setting` }) },
  'POST /projects/{id}/setting': { method: 'POST', level: 'manage', call: () => ({ path: `/projects/${P()}/setting`, body: {} }) },
  'GET /projects/{id}/forks': { method: 'GET', level: 'access', call: () => ({ path: `/projects/${P()}/forks` }) },
  'GET /projects/{id}/user-authorizations': { method: 'GET', level: 'manage', call: () => ({ path: `/projects/${P()}/user-authorizations` }) },
  'GET /projects/{id}/group-authorizations': { method: 'GET', level: 'adminOnProject', call: () => ({ path: `/projects/${P()}/group-authorizations` }) },
  'GET /projects/{id}/labels': { method: 'GET', level: 'access', call: () => ({ path: `/projects/${P()}/labels` }) },
  'GET /projects/{id}/milestones': { method: 'GET', level: 'access', call: () => ({ path: `/projects/${P()}/milestones` }) },
  'GET /projects/{id}/top-contributors': {
    method: 'GET',
    level: 'access',
    call: () => ({ path: `/projects/${P()}/top-contributors?type=COMMITS&sinceDate=2000-01-01&untilDate=2100-01-01&count=10` }),
  },
  'GET /repositories/{id}/default-branch': { method: 'GET', level: 'readCode', call: () => ({ path: `/repositories/${P()}/default-branch` }) },
  'POST /repositories/{id}/default-branch': { method: 'POST', level: 'writeCode', call: () => ({ path: `/repositories/${P()}/default-branch`, text: 'main' }) },
  'GET /repositories/{id}/branches': { method: 'GET', level: 'readCode', call: () => ({ path: `/repositories/${P()}/branches` }) },
  'GET /repositories/{id}/branches/{name}': { method: 'GET', level: 'readCode', call: () => ({ path: `/repositories/${P()}/branches/main` }) },
  'POST /repositories/{id}/branches': {
    method: 'POST',
    level: 'writeCode',
    call: () => ({ path: `/repositories/${P()}/branches`, body: { branchName: unique('b'), revision: 'main' } }),
  },
  'GET /repositories/{id}/tags': { method: 'GET', level: 'readCode', call: () => ({ path: `/repositories/${P()}/tags` }) },
  'POST /repositories/{id}/tags': {
    method: 'POST',
    level: 'writeCode',
    call: () => ({ path: `/repositories/${P()}/tags`, body: { tagName: unique('t'), revision: 'main' } }),
  },
  'GET /repositories/{id}/commits': { method: 'GET', level: 'readCode', call: () => ({ path: `/repositories/${P()}/commits?query=branch(main)` }) },
  'GET /repositories/{id}/directories/{revision}': { method: 'GET', level: 'readCode', call: () => ({ path: `/repositories/${P()}/directories/main` }) },
  'GET /repositories/{id}/files/{revision}/{path}': { method: 'GET', level: 'readCode', call: () => ({ path: `/repositories/${P()}/files/main/README.md` }) },
  'GET /milestones/{id}': { method: 'GET', level: 'access', call: () => ({ path: `/milestones/${milestoneId}` }) },
  'POST /milestones': { method: 'POST', level: 'manageIssues', call: () => ({ path: '/milestones', body: { projectId: P(), name: unique('m') } }) },
  'POST /milestones/{id}': { method: 'POST', level: 'manageIssues', call: () => ({ path: `/milestones/${milestoneId}`, body: { description: unique('d') } }) },
  'DELETE /milestones/{id}': {
    method: 'DELETE',
    level: 'manageIssues',
    call: async () => ({ path: `/milestones/${await adminCreate('/milestones', { projectId: P(), name: unique('gone') })}` }),
  },
  'GET /user-authorizations/{id}': { method: 'GET', level: 'manage', call: () => ({ path: `/user-authorizations/${authorizationId}` }) },
  'POST /user-authorizations': {
    method: 'POST',
    level: 'manage',
    call: async () => ({ path: '/user-authorizations', body: { projectId: P(), userId: (await server.createUser(unique('u'))).id, roleId: 3 } }),
  },
  'DELETE /user-authorizations/{id}': {
    method: 'DELETE',
    level: 'manage',
    call: async () => ({
      path: `/user-authorizations/${await adminCreate('/user-authorizations', { projectId: P(), userId: (await server.createUser(unique('v'))).id, roleId: 3 })}`,
    }),
  },
  'POST /project-labels': {
    method: 'POST',
    level: 'manage',
    call: async () => ({ path: '/project-labels', body: { projectId: P(), specId: await adminCreate('/label-specs', { name: unique('l') }) } }),
  },
  'DELETE /project-labels/{id}': {
    method: 'DELETE',
    level: 'manage',
    call: async () => ({
      path: `/project-labels/${await adminCreate('/project-labels', { projectId: P(), specId: await adminCreate('/label-specs', { name: unique('k') }) })}`,
    }),
  },
  'GET /roles': { method: 'GET', level: 'admin', call: () => ({ path: '/roles' }) },
  'GET /roles/{id}': { method: 'GET', level: 'admin', call: () => ({ path: '/roles/1' }) },
  'POST /roles': { method: 'POST', level: 'admin', call: () => ({ path: '/roles', body: { name: unique('role') } }) },
  'GET /groups': { method: 'GET', level: 'admin', call: () => ({ path: '/groups' }) },
  'POST /groups': { method: 'POST', level: 'admin', call: () => ({ path: '/groups', body: { name: unique('group') } }) },
  'GET /label-specs': { method: 'GET', level: 'admin', call: () => ({ path: '/label-specs' }) },
  'GET /label-specs/{id}': { method: 'GET', level: 'admin', call: () => ({ path: `/label-specs/${specId}` }) },
  'GET /memberships/{id}': { method: 'GET', level: 'admin', call: () => ({ path: `/memberships/${membershipId}` }) },
  'GET /group-authorizations/{id}': { method: 'GET', level: 'adminOnProject', call: () => ({ path: `/group-authorizations/${groupAuthorizationId}` }) },
  'GET /groups/{id}/authorizations': { method: 'GET', level: 'admin', call: () => ({ path: `/groups/${groupId}/authorizations` }) },
  'GET /groups/{id}/memberships': { method: 'GET', level: 'admin', call: () => ({ path: `/groups/${groupId}/memberships` }) },
  'POST /label-specs': { method: 'POST', level: 'admin', call: () => ({ path: '/label-specs', body: { name: unique('spec') } }) },
  'GET /projects/{id}/clone-url': { method: 'GET', level: 'access', call: () => ({ path: `/projects/${P()}/clone-url` }) },
  'POST /projects (child)': { method: 'POST', level: 'manage', call: () => ({ path: '/projects', body: { name: unique('child'), parentId: P() } }) },
  'DELETE /projects/{id} (child)': {
    method: 'DELETE',
    level: 'manage',
    call: async () => ({ path: `/projects/${await adminCreate('/projects', { name: unique('doomed'), parentId: P() })}` }),
  },
  'GET /pulls/{id}': { method: 'GET', level: 'readCode', call: () => ({ path: `/pulls/${requestId}` }) },
  'GET /pulls/{id}/labels': { method: 'GET', level: 'readCode', call: () => ({ path: `/pulls/${requestId}/labels` }) },
  'GET /pulls/{id}/merge-preview': { method: 'GET', level: 'readCode', call: () => ({ path: `/pulls/${requestId}/merge-preview` }) },
  'GET /pulls/{id}/assignments': { method: 'GET', level: 'readCode', call: () => ({ path: `/pulls/${requestId}/assignments` }) },
  'GET /pulls/{id}/reviews': { method: 'GET', level: 'readCode', call: () => ({ path: `/pulls/${requestId}/reviews` }) },
  'GET /pulls/{id}/comments': { method: 'GET', level: 'readCode', call: () => ({ path: `/pulls/${requestId}/comments` }) },
  'GET /pulls/{id}/watches': { method: 'GET', level: 'readCode', call: () => ({ path: `/pulls/${requestId}/watches` }) },
  'GET /pulls/{id}/updates': { method: 'GET', level: 'readCode', call: () => ({ path: `/pulls/${requestId}/updates` }) },
  'GET /pulls/{id}/changes': { method: 'GET', level: 'readCode', call: () => ({ path: `/pulls/${requestId}/changes` }) },
  'GET /pulls/{id}/fixed-issue-ids': { method: 'GET', level: 'readCode', call: () => ({ path: `/pulls/${requestId}/fixed-issue-ids` }) },
  'GET /issues/{id}': { method: 'GET', level: 'access', call: () => ({ path: `/issues/${issueId}` }) },
  'GET /issues/{id}/fields': { method: 'GET', level: 'access', call: () => ({ path: `/issues/${issueId}/fields` }) },
  'GET /issues/{id}/changes': { method: 'GET', level: 'access', call: () => ({ path: `/issues/${issueId}/changes` }) },
  'GET /issues/{id}/comments': { method: 'GET', level: 'access', call: () => ({ path: `/issues/${issueId}/comments` }) },
  'GET /issues/{id}/votes': { method: 'GET', level: 'access', call: () => ({ path: `/issues/${issueId}/votes` }) },
  'GET /issues/{id}/watches': { method: 'GET', level: 'access', call: () => ({ path: `/issues/${issueId}/watches` }) },
  'GET /issues/{id}/milestones': { method: 'GET', level: 'access', call: () => ({ path: `/issues/${issueId}/milestones` }) },
  'GET /pulls': { method: 'GET', level: 'any', call: () => ({ path: '/pulls' }) },
  'GET /issues': { method: 'GET', level: 'any', call: () => ({ path: '/issues' }) },
  'GET /builds': { method: 'GET', level: 'any', call: () => ({ path: '/builds' }) },
  'GET /code-comments?projectId': { method: 'GET', level: 'readCode', call: () => ({ path: `/code-comments?projectId=${P()}` }) },
  'POST /issues': { method: 'POST', level: 'access', call: () => ({ path: '/issues', body: { projectId: P(), title: unique('issue') } }) },
  'GET /projects/{id}/path': { method: 'GET', level: 'access', call: () => ({ path: `/projects/${P()}/path` }) },
  'POST /projects/{id}': { method: 'POST', level: 'manage', call: () => ({ path: `/projects/${P()}`, body: { description: unique('desc') } }) },
  'GET /users/{admin}/authorizations': { method: 'GET', level: 'admin', call: () => ({ path: '/users/1/authorizations' }) },
  'GET /users/{admin}/memberships': { method: 'GET', level: 'admin', call: () => ({ path: '/users/1/memberships' }) },
  'GET /users/{admin}/ssh-keys': { method: 'GET', level: 'admin', call: () => ({ path: '/users/1/ssh-keys' }) },
  'GET /users/{admin}/pull-request-reviews': { method: 'GET', level: 'admin', call: () => ({ path: '/users/1/pull-request-reviews' }) },
};

beforeAll(async () => {
  server = await startTestServer();
  projectId = await adminCreate('/projects', { name: 'matrix' });
  const work = await makeWorkTree();
  await git(work, ['push', '-q', gitUrl(server, 'matrix', ADMIN), 'main']);
  await commitFiles(work, { 'topic.txt': 'topic\n' }, 'topic');
  await git(work, ['push', '-q', gitUrl(server, 'matrix', ADMIN), 'main:topic']);
  requestId = await adminCreate('/pulls', {
    targetProjectId: projectId,
    sourceProjectId: projectId,
    targetBranch: 'main',
    sourceBranch: 'topic',
    title: 'Topic',
  });
  issueId = await adminCreate('/issues', { projectId, title: 'An issue' });
  milestoneId = await adminCreate('/milestones', { projectId, name: 'v1' });
  specId = await adminCreate('/label-specs', { name: 'backend' });
  const personas: [Persona, number | null][] = [
    ['noRole', null],
    ['reader', 3],
    ['writer', 2],
    ['owner', 1],
    ['group', null],
  ];
  for (const [persona, roleId] of personas) {
    const user = await server.createUser(persona.toLowerCase());
    auth[persona] = user.auth;
    if (roleId !== null) {
      const id = await adminCreate('/user-authorizations', { projectId, userId: user.id, roleId });
      if (persona === 'reader') authorizationId = id;
    }
    if (persona === 'group') {
      groupId = await adminCreate('/groups', { name: 'writers' });
      membershipId = await adminCreate('/memberships', { userId: user.id, groupId });
      groupAuthorizationId = await adminCreate('/group-authorizations', { projectId, groupId, roleId: 2 });
    }
  }
  const admin2 = await server.createUser('admin2');
  const adminGroup = await adminCreate('/groups', { name: 'admins', administrator: true });
  await adminCreate('/memberships', { userId: admin2.id, groupId: adminGroup });
  auth.admin = admin2.auth;
});

afterAll(async () => {
  await server.close();
});

async function check(persona: Persona, name: string, route: Route): Promise<void> {
  const { path, body, text } = await route.call(persona);
  const res = await server.call(route.method, path, { body, text, auth: auth[persona] ?? null });
  expect({ route: name, persona, status: res.status, detail: res.status >= 400 ? res.json?.detail : undefined }).toMatchObject({
    route: name,
    persona,
    status: expected(persona, route),
  });
  if (res.status === 401) expect(res.headers.get('www-authenticate')).toContain('Basic');
}

describe('authorization matrix', () => {
  const users: Persona[] = ['anonymousOff', 'noRole', 'reader', 'writer', 'owner', 'group', 'admin'];
  for (const [name, route] of Object.entries(ROUTES)) {
    it(`${name}`, async () => {
      for (const persona of users) await check(persona, name, route);
    });
  }

  it('anonymous with anonymous access on', async () => {
    expect((await server.call('POST', '/settings/security', { body: { enableAnonymousAccess: true } })).status).toBe(200);
    try {
      for (const [name, route] of Object.entries(ROUTES)) await check('anonymousOn', name, route);
    } finally {
      await server.call('POST', '/settings/security', { body: { enableAnonymousAccess: false } });
    }
  });
});
