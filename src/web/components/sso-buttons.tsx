/**
 * The single sign-on buttons of the sign-in page (docs/security.md#openid-connect): one "Sign in
 * with <name>" link per connector, in the administrator's order, starting the sign-in at
 * OneDev's `/~sso/initiate/<name>`, with the connector's image when it has one.
 */
export function SsoButtons({ connectors, redirect }: { connectors: { name: string; buttonImageUrl: string | null }[]; redirect: string }) {
  if (connectors.length === 0) return null;
  return (
    <nav class="sso-buttons" aria-label="Single sign-on">
      {connectors.map((c) => (
        <a class="button" href={`/~sso/initiate/${encodeURIComponent(c.name)}?${new URLSearchParams({ redirect })}`}>
          {c.buttonImageUrl && <img src={c.buttonImageUrl} alt="" width={20} height={20} />}
          {`Sign in with ${c.name}`}
        </a>
      ))}
    </nav>
  );
}
