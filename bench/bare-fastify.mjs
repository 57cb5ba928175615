// The limit of the request rows of `npm run bench`: a bare Fastify server (defaults, no logger,
// no hooks) whose routes return fixed JSON bodies — what Gitloom answers for the same URLs,
// passed in `BARE_ROUTES` as `{ "<url>": <body> }`. Listens on 127.0.0.1:`BARE_PORT`. Plain
// JavaScript run by node, so its memory is Fastify's alone.
import Fastify from 'fastify';

const routes = JSON.parse(process.env.BARE_ROUTES ?? '{}');
const app = Fastify();
for (const [url, body] of Object.entries(routes)) app.get(url, async () => body);
await app.listen({ port: Number(process.env.BARE_PORT), host: '127.0.0.1' });
