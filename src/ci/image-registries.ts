/**
 * Image registries of container steps (docs/compatibility.md#builds-images): which registry an
 * image reference names, which login of a job applies to it, and whether it is reached over TLS.
 * References follow the distribution spec's naming (the Docker reference grammar): the first
 * component is a registry host when it holds a `.` or a `:` or is `localhost`; otherwise the
 * image lives on Docker Hub (`docker.io`).
 */
import ipaddr from 'ipaddr.js';

/**
 * A login to a registry (OneDev's `RegistryLogin`): `registryUrl` is a host with an optional
 * port, with or without a scheme and path (`https://registry.example.com/v2/`), or null for
 * Docker Hub; `password` is the password or access token in clear.
 */
export interface RegistryLogin {
  readonly registryUrl: string | null;
  readonly userName: string;
  readonly password: string;
}

const DOCKER_HUB = 'docker.io';
const DOCKER_HUB_ALIASES = new Set(['docker.io', 'index.docker.io', 'registry-1.docker.io', 'registry.hub.docker.com']);

/** The registry of an image reference: its host and port (`127.0.0.1:5000`), or `docker.io`. */
export function registryOf(image: string): string {
  const slash = image.indexOf('/');
  if (slash < 0) return DOCKER_HUB;
  const first = image.slice(0, slash);
  if (!first.includes('.') && !first.includes(':') && first !== 'localhost') return DOCKER_HUB;
  return normalizeRegistry(first);
}

/** A registry URL as a login or the administrator gives it, as {@link registryOf} names registries. */
export function normalizeRegistry(url: string | null): string {
  const host = (url ?? '')
    .trim()
    .replace(/^[a-z][a-z0-9+.-]*:\/\//i, '')
    .replace(/\/.*$/, '')
    .toLowerCase();
  return host === '' || DOCKER_HUB_ALIASES.has(host) ? DOCKER_HUB : host;
}

/** The first of `logins` for the registry of `image`, or null. */
export function loginFor(image: string, logins: readonly RegistryLogin[]): RegistryLogin | null {
  const registry = registryOf(image);
  return logins.find((l) => normalizeRegistry(l.registryUrl) === registry) ?? null;
}

/**
 * The value of the Docker Engine API's `X-Registry-Auth` header for `login` at `registry`: the
 * JSON auth configuration in base64url with padding (what Docker and Podman decode).
 */
export function registryAuthHeader(login: RegistryLogin, registry: string): string {
  const json = JSON.stringify({ username: login.userName, password: login.password, serveraddress: registry });
  return Buffer.from(json, 'utf8').toString('base64').replaceAll('+', '-').replaceAll('/', '_');
}

/**
 * Whether `registry` is reached over TLS: not for a loopback host (`localhost`, `127.0.0.0/8`,
 * `::1`), as Docker does, nor for one listed in `insecure` (`GITLOOM_CONTAINER_INSECURE_REGISTRIES`).
 */
export function verifiesTls(registry: string, insecure: readonly string[]): boolean {
  if (insecure.some((r) => normalizeRegistry(r) === registry)) return false;
  const host = registry.startsWith('[') ? registry.slice(1, registry.indexOf(']')) : registry.replace(/:\d+$/, '');
  if (host === 'localhost') return false;
  return !(ipaddr.isValid(host) && ipaddr.process(host).range() === 'loopback');
}
