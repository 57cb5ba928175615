import { hash } from 'node:crypto';

/**
 * SHA-256 hex of an access token's value, as stored and as looked up: tokens are 40 random
 * characters (docs/compatibility.md#gitloom-differs-authentication), so a fast hash suffices.
 */
export function hashToken(value: string): string {
  return hash('sha256', value, 'hex');
}
