import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { givenProject, grantRole, type TestUser } from '../helpers/fixtures.js';

describe('authorizations of a project the caller cannot see are 404 (docs/compatibility.md#gitloom-differs-errors)', () => {
  let server: TestServer;
  let outsider: TestUser;
  let member: TestUser;
  let groupAuthorizationId: number;
  let userAuthorizationId: number;
  let projectId: number;

  beforeAll(async () => {
    server = await startTestServer();
    outsider = await server.createUser('outsider');
    member = await server.createUser('member');
    projectId = await givenProject(server, { name: 'hidden' });
    await grantRole(server, projectId, member.id, 'Code Reader');
    const groupId = (await server.call('POST', '/groups', { body: { name: 'devs' } })).json as number;
    const roles = (await server.call('GET', '/roles?name=Code%20Writer')).json as { id: number }[];
    const created = await server.call('POST', '/group-authorizations', { body: { projectId, groupId, roleId: roles[0].id } });
    expect(created.status, created.text).toBe(200);
    groupAuthorizationId = created.json;
    const users = (await server.call('GET', `/projects/${projectId}/user-authorizations`)).json as { id: number }[];
    userAuthorizationId = users[0].id;
  });
  afterAll(async () => {
    await server.close();
  });

  it('GET /group-authorizations/{id}: 404 for an outsider, 403 for a member who is no administrator', async () => {
    const hidden = await server.call('GET', `/group-authorizations/${groupAuthorizationId}`, { auth: outsider.auth });
    expect(hidden.status, hidden.text).toBe(404);
    expect((await server.call('GET', `/group-authorizations/${groupAuthorizationId}`, { auth: member.auth })).status).toBe(403);
    expect((await server.call('GET', `/group-authorizations/${groupAuthorizationId}`)).status).toBe(200);
  });

  it('changing or deleting it answers the same, and a create on an invisible project is 404', async () => {
    expect((await server.call('DELETE', `/group-authorizations/${groupAuthorizationId}`, { auth: outsider.auth })).status).toBe(404);
    expect((await server.call('POST', `/group-authorizations/${groupAuthorizationId}`, { body: { roleId: 1 }, auth: outsider.auth })).status).toBe(404);
    const groupId = (await server.call('GET', `/group-authorizations/${groupAuthorizationId}`)).json.groupId;
    expect((await server.call('POST', '/group-authorizations', { body: { projectId, groupId, roleId: 1 }, auth: outsider.auth })).status).toBe(404);
  });

  it('matches /user-authorizations/{id}', async () => {
    expect((await server.call('GET', `/user-authorizations/${userAuthorizationId}`, { auth: outsider.auth })).status).toBe(404);
  });
});
