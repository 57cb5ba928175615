/**
 * The outbound address policy of the server's own connections to addresses users choose —
 * webhook deliveries and repository mirrors (docs/security.md#outbound-connections): a target
 * must resolve to public unicast addresses only (not loopback, private, link-local, CGNAT,
 * unique-local, reserved…) unless the administrator allows private targets
 * (`GITLOOM_WEBHOOK_ALLOW_PRIVATE=true`). The check is made on the addresses the connection then
 * uses, after DNS resolution, so a name that resolves differently the second time (DNS rebinding)
 * cannot slip through.
 */
import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

/** A target refused by the outbound policy before any byte was sent. */
export class OutboundTargetRefused extends Error {}

/** Whether an address is a public unicast one (not loopback, private, link-local, reserved…). */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  return ipaddr.process(address).range() === 'unicast';
}

/**
 * A `lookup` for `http.request` that refuses ({@link OutboundTargetRefused}) a name resolving to
 * any non-public address unless `allowPrivate`: the connection then goes to the addresses checked.
 */
export function guardedLookup(allowPrivate: boolean): net.LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return (callback as (e: Error) => void)(error);
      const refused = allowPrivate ? undefined : addresses.find((a) => !isPublicAddress(a.address));
      if (refused) return (callback as (e: Error) => void)(new OutboundTargetRefused(`${hostname} resolves to a non-public address (${refused.address})`));
      if ((options as { all?: boolean }).all) return (callback as (e: null, a: dns.LookupAddress[]) => void)(null, addresses);
      return callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

/**
 * The addresses a URL's host stands for, checked by the policy: an IP literal as it is, a name
 * resolved now (every address, IPv4 and IPv6). For a caller that hands the addresses to the
 * connection itself (a git process: `http.curloptResolve`), so it connects to what was checked.
 *
 * @param host the URL's host name or IP literal (IPv6 without brackets).
 * @throws OutboundTargetRefused when an address is not public and `allowPrivate` is false.
 * @throws Error (`ENOTFOUND`, …) when the name does not resolve.
 */
export async function resolveOutboundHost(host: string, allowPrivate: boolean): Promise<string[]> {
  const addresses = net.isIP(host) ? [host] : (await dns.promises.lookup(host, { all: true, verbatim: true })).map((a) => a.address);
  const refused = allowPrivate ? undefined : addresses.find((a) => !isPublicAddress(a));
  if (refused !== undefined) {
    throw new OutboundTargetRefused(refused === host ? `${host} is not a public address` : `${host} resolves to a non-public address (${refused})`);
  }
  return addresses;
}
