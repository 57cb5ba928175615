import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Readable } from 'node:stream';
import { downloadArtifact, getArtifactInfo, removeArtifact, uploadArtifact } from '../../domain/builds/index.js';
import { ArtifactInfoSchema } from '../../wire/builds.js';
import { PayloadTooLarge, RangeNotSatisfiable } from '../../errors.js';
import { userContentHeaders } from '../../plugins/user-content.js';

const tags = ['Artifact'];
const BuildParams = Type.Object({ buildId: Type.Integer() });
const PathParams = Type.Object({ buildId: Type.Integer(), '*': Type.String() });

/**
 * `/~api/artifacts` (docs/compatibility.md#builds-artifacts, docs/compatibility.md#gitloom-differs-improved-behaviour). Encapsulated: uploads get
 * the raw request stream (any content type), written to disk without buffering, at most
 * `GITLOOM_ARTIFACT_MAX_MB` per file (413 `GITLOOM_ERR_ARTIFACT_TOO_LARGE`).
 */
export const artifactRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
  app.addHook('onError', async (_request, reply, error) => {
    // RFC 9110 §15.5.17: a 416 names the current length.
    if (error instanceof RangeNotSatisfiable) reply.header('content-range', `bytes */${error.size}`);
    // the rest of a refused upload is not read: the connection cannot carry another request
    if (error instanceof PayloadTooLarge) reply.header('connection', 'close');
  });
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser(['application/json', 'text/plain'], (_request, payload, done) => done(null, payload));

  const info = async (request: { ctx: any; params: { buildId: number; '*'?: string } }, reply: any) => {
    const result = await getArtifactInfo(request.ctx, request.params.buildId, request.params['*'] ?? '');
    return result ?? reply.code(204).send();
  };
  app.get(
    '/artifacts/:buildId/infos',
    { schema: { tags, summary: 'Get Artifact Info (root)', params: BuildParams, response: { 200: ArtifactInfoSchema } } },
    info,
  );
  app.get('/artifacts/:buildId/infos/*', { schema: { tags, summary: 'Get Artifact Info', params: PathParams, response: { 200: ArtifactInfoSchema } } }, info);

  // never active content of our origin (docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input): the headers of every user-content download
  app.get('/artifacts/:buildId/contents/*', { schema: { tags, summary: 'Download Artifact', params: PathParams } }, async (request, reply) => {
    const file = await downloadArtifact(request.ctx, request.params.buildId, request.params['*'], request.headers.range);
    reply
      .headers(userContentHeaders(request.params['*'].split('/').pop() ?? '', file.mediaType))
      .header('content-length', String(file.length))
      .header('accept-ranges', 'bytes')
      .header('last-modified', new Date(file.lastModified).toUTCString());
    if (file.range) reply.code(206).header('content-range', `bytes ${file.range.start}-${file.range.end}/${file.size}`);
    return reply.send(file.stream);
  });

  app.post('/artifacts/:buildId/*', { schema: { tags, summary: 'Upload Artifact', params: PathParams } }, async (request) => {
    await uploadArtifact(request.ctx, request.params.buildId, request.params['*'], request.body as Readable, request.headers['content-length']);
    return '';
  });

  const remove = async (request: { ctx: any; params: { buildId: number; '*'?: string } }) => {
    await removeArtifact(request.ctx, request.params.buildId, request.params['*'] ?? '');
    return '';
  };
  app.delete('/artifacts/:buildId', { schema: { tags, summary: 'Delete Artifacts', params: BuildParams } }, remove);
  app.delete('/artifacts/:buildId/*', { schema: { tags, summary: 'Delete Artifact', params: PathParams } }, remove);
};
