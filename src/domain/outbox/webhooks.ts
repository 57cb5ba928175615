/**
 * Webhook deliveries (docs/compatibility.md#gitloom-differs-webhooks-and-notifications): the
 * signed POST of one delivery with its SSRF guard (the setting is src/domain/projects/webhook-settings.ts).
 */
import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { guardedLookup, isPublicAddress, OutboundTargetRefused } from '../outbound.js';

/** A webhook target refused before any byte was sent (SSRF guard): the outbound policy's refusal (src/domain/outbound.ts). */
export { OutboundTargetRefused as WebhookTargetRefused };

/** Outcome of one POST: the HTTP status and the start of the response body. */
export interface PostResult {
  status: number;
  excerpt: string;
}

/**
 * POSTs a webhook body with the headers of docs/compatibility.md#gitloom-differs-webhooks-and-notifications: `Content-Type: application/json`,
 * `X-OneDev-Signature: <secret>`, `X-Gitloom-Signature-256: sha256=<hex HMAC-SHA256 of the body>`,
 * `X-Gitloom-Event`, `X-Gitloom-Delivery`. Targets resolving to non-public addresses are refused
 * after DNS resolution ({@link WebhookTargetRefused}) unless `allowPrivate`; redirects are not
 * followed. Resolves with the response status and its first 1000 characters; rejects on network
 * errors and after `timeoutMs` milliseconds.
 */
export async function postWebhook(
  target: { url: string; secret: string; eventType: string; deliveryId: string; body: string },
  options: { allowPrivate: boolean; timeoutMs: number },
): Promise<PostResult> {
  const url = new URL(target.url);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(host) && !options.allowPrivate && !isPublicAddress(host)) throw new OutboundTargetRefused(`${host} is not a public address`);
  const signature = createHmac('sha256', target.secret).update(target.body).digest('hex');
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<PostResult>((resolve, reject) => {
    const request = client.request(
      url,
      {
        method: 'POST',
        lookup: guardedLookup(options.allowPrivate),
        timeout: options.timeoutMs,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(target.body),
          'user-agent': 'Gitloom-Hookshot',
          'x-onedev-signature': target.secret,
          'x-gitloom-signature-256': `sha256=${signature}`,
          'x-gitloom-event': target.eventType,
          'x-gitloom-delivery': target.deliveryId,
        },
      },
      (response) => {
        let excerpt = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          if (excerpt.length < 1000) excerpt += chunk;
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, excerpt: excerpt.slice(0, 1000) }));
        response.on('error', reject);
      },
    );
    request.on('timeout', () => request.destroy(new Error(`No response within ${options.timeoutMs} ms`)));
    request.on('error', reject);
    request.end(target.body);
  });
}
