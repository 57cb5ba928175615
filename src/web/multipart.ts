/**
 * `multipart/form-data` bodies of the pages (the file upload form): the request is read as a
 * stream and refused with 413 as soon as it passes the server's body limit (`GITLOOM_BODY_LIMIT`,
 * the limit of the files API's JSON bodies), then parsed by Node's own `FormData` reader
 * (undici's `Response.formData()`). The text fields become the page's `form` (the CSRF token
 * among them); the files are read with {@link uploadedFiles}.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyRequest } from 'fastify';
import { BadRequest, PayloadTooLarge } from '../errors.js';

/** One uploaded file: its name as the browser sent it (no directory) and its bytes. */
export interface UploadedFile {
  name: string;
  content: Buffer;
}

const FILES = Symbol('uploaded files');

/** A parsed multipart body: the text fields by name (the first of each), the files under a symbol. */
type MultipartBody = Record<string, string> & { [FILES]?: UploadedFile[] };

/**
 * The Fastify content type parser of `multipart/form-data`, refusing bodies over `limit` bytes.
 *
 * @throws PayloadTooLarge past `limit`; BadRequest `Invalid multipart body` when it does not parse.
 */
export function multipartParser(limit: number) {
  return async (request: FastifyRequest, payload: IncomingMessage): Promise<MultipartBody> => {
    const declared = Number(request.headers['content-length'] ?? 0);
    if (declared > limit) throw new PayloadTooLarge(`The upload is larger than the limit of ${limit} bytes`);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of payload as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) throw new PayloadTooLarge(`The upload is larger than the limit of ${limit} bytes`);
      chunks.push(chunk);
    }
    let form: FormData;
    try {
      form = await new Response(Buffer.concat(chunks), { headers: { 'content-type': String(request.headers['content-type']) } }).formData();
    } catch {
      throw new BadRequest('Invalid multipart body');
    }
    const body: MultipartBody = {};
    const files: UploadedFile[] = [];
    for (const [name, value] of form) {
      if (typeof value === 'string') {
        if (value.includes('\0')) throw new BadRequest('A form field contains a NUL byte');
        if (!(name in body)) body[name] = value;
      } else if (value.name !== '' || value.size > 0) {
        files.push({ name: value.name, content: Buffer.from(await value.arrayBuffer()) });
      }
    }
    body[FILES] = files;
    return body;
  };
}

/** The files of a request's multipart body, in the order sent (none for other bodies). */
export function uploadedFiles(request: FastifyRequest): UploadedFile[] {
  const body = request.body as MultipartBody | undefined;
  return (body && typeof body === 'object' && body[FILES]) || [];
}
