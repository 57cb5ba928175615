import type { TestServer } from '../helpers/server.js';

/** Opens a pull request through the API; returns the response. */
export function openRequest(server: TestServer, body: Record<string, unknown>, auth?: string) {
  return server.call('POST', '/pulls', { body: { title: 'Change', ...body }, auth });
}
