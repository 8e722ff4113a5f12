/**
 * Which webhook URLs and addresses Milepost may call. Pure: no DNS here; the sender applies
 * `addressAllowed` to every address a hostname resolves to, at delivery time.
 */

/** What an IP address is, for the purpose of server-side request forgery protection. */
export type AddressCategory =
  'public' | 'loopback' | 'private' | 'link-local' | 'unspecified' | 'multicast' | 'reserved';

export interface UrlPolicy {
  /** Refuse `http:`. */
  readonly requireHttps: boolean;
  /** Allow loopback and private (RFC 1918, CGNAT, ULA) addresses, for integrators testing locally. */
  readonly allowPrivate: boolean;
}

export const STRICT_URL_POLICY: UrlPolicy = { requireHttps: true, allowPrivate: false };
const LOCAL_URL_POLICY: UrlPolicy = { requireHttps: false, allowPrivate: true };

/**
 * Production endpoints are always https and public. Sandbox endpoints may be http and private when
 * the operator allows it (`WEBHOOKS_ALLOW_PRIVATE`, off by default; on for a service run locally to
 * test against a local receiver).
 */
export function urlPolicyFor(environment: 'sandbox' | 'production', allowPrivate: boolean): UrlPolicy {
  return environment === 'sandbox' && allowPrivate ? LOCAL_URL_POLICY : STRICT_URL_POLICY;
}

/**
 * Whether a connection to an address of this category is allowed. Link-local (where cloud metadata
 * services such as 169.254.169.254 live), unspecified, multicast and reserved addresses never are.
 */
export function addressAllowed(category: AddressCategory, policy: UrlPolicy): boolean {
  if (category === 'public') return true;
  if (category === 'loopback' || category === 'private') return policy.allowPrivate;
  return false;
}

/** Dotted-quad IPv4 to its four octets; undefined for anything else (including shorthand forms). */
export function parseIpv4(text: string): [number, number, number, number] | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  const octets = parts.map((p) => (/^(0|[1-9]\d{0,2})$/.test(p) ? Number(p) : NaN));
  if (octets.some((o) => !(o >= 0 && o <= 255))) return undefined;
  return octets as [number, number, number, number];
}

/** IPv6 text (with `::`, an embedded dotted quad, or a `%zone`) to eight 16-bit groups. */
export function parseIpv6(text: string): number[] | undefined {
  let body = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const zone = body.indexOf('%');
  if (zone >= 0) body = body.slice(0, zone);
  if (!/^[0-9a-fA-F:.]+$/.test(body)) return undefined;
  if (body.includes('.')) {
    // An embedded dotted quad (::ffff:127.0.0.1) becomes its two hex groups.
    const lastColon = body.lastIndexOf(':');
    const v4 = parseIpv4(body.slice(lastColon + 1));
    if (v4 === undefined || lastColon < 0) return undefined;
    const high = ((v4[0] << 8) | v4[1]).toString(16);
    const low = ((v4[2] << 8) | v4[3]).toString(16);
    body = `${body.slice(0, lastColon + 1)}${high}:${low}`;
  }
  const halves = body.split('::');
  if (halves.length > 2) return undefined;
  const groups = (part: string | undefined): number[] =>
    part === undefined || part === ''
      ? []
      : part.split(':').map((g) => (/^[0-9a-fA-F]{1,4}$/.test(g) ? parseInt(g, 16) : NaN));
  const head = groups(halves[0]);
  const tail = groups(halves[1]);
  if ([...head, ...tail].some(Number.isNaN)) return undefined;
  if (halves.length === 1) return head.length === 8 ? head : undefined;
  const missing = 8 - head.length - tail.length;
  return missing >= 1 ? [...head, ...Array<number>(missing).fill(0), ...tail] : undefined;
}

function classifyIpv4([a, b, c]: readonly [number, number, number, number]): AddressCategory {
  if (a === 0) return 'unspecified'; // "this network"; 0.0.0.0 reaches the local host on Linux
  if (a === 127) return 'loopback';
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return 'private';
  if (a === 100 && b >= 64 && b <= 127) return 'private'; // carrier-grade NAT, RFC 6598
  if (a === 169 && b === 254) return 'link-local';
  if (a >= 224 && a <= 239) return 'multicast';
  if (a >= 240) return 'reserved'; // includes 255.255.255.255
  if (a === 192 && b === 0 && (c === 0 || c === 2)) return 'reserved'; // IETF assignments, TEST-NET-1
  if (a === 192 && b === 88 && c === 99) return 'reserved'; // 6to4 relay anycast
  if (a === 198 && (b === 18 || b === 19)) return 'reserved'; // benchmarking
  if ((a === 198 && b === 51 && c === 100) || (a === 203 && b === 0 && c === 113)) return 'reserved';
  return 'public';
}

const v4Of = (high: number, low: number): [number, number, number, number] => [
  high >> 8,
  high & 0xff,
  low >> 8,
  low & 0xff,
];

function classifyIpv6(g: readonly number[]): AddressCategory {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const firstFiveZero = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (firstFiveZero && g5 === 0) {
    if (g6 === 0 && g7 === 0) return 'unspecified';
    if (g6 === 0 && g7 === 1) return 'loopback';
    return 'reserved'; // IPv4-compatible (deprecated): not routed
  }
  // NOTE: IPv4-mapped (::ffff:a.b.c.d) connects to the IPv4 address on dual-stack sockets, so
  // ::ffff:127.0.0.1 is loopback; NAT64 (64:ff9b::/96) reaches the embedded IPv4 address through a gateway.
  if (firstFiveZero && g5 === 0xffff) return classifyIpv4(v4Of(g6, g7));
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0)
    return classifyIpv4(v4Of(g6, g7));
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 1) return 'private'; // local-use NAT64, RFC 8215
  if (g0 === 0x2002) return classifyIpv4(v4Of(g1, g2)); // 6to4 embeds the IPv4 address
  if ((g0 & 0xfe00) === 0xfc00) return 'private'; // unique local, fc00::/7
  if ((g0 & 0xffc0) === 0xfe80) return 'link-local';
  if ((g0 & 0xffc0) === 0xfec0) return 'private'; // site-local (deprecated)
  if ((g0 & 0xff00) === 0xff00) return 'multicast';
  if (g0 === 0x2001 && g1 === 0x0db8) return 'reserved'; // documentation
  if (g0 === 0x2001 && g1 < 0x0200) return 'reserved'; // IETF protocol assignments, Teredo
  if (g0 === 0x0100 && g1 === 0 && g2 === 0 && g3 === 0) return 'reserved'; // discard-only
  if ((g0 & 0xe000) === 0x2000) return 'public'; // global unicast, 2000::/3
  return 'reserved';
}

/** The category of an IP address given as text; undefined when the text is not an IP address. */
export function classifyAddress(text: string): AddressCategory | undefined {
  const v4 = parseIpv4(text);
  if (v4 !== undefined) return classifyIpv4(v4);
  const v6 = text.includes(':') ? parseIpv6(text) : undefined;
  return v6 === undefined ? undefined : classifyIpv6(v6);
}

export type UrlCheck =
  { readonly ok: true; readonly url: URL } | { readonly ok: false; readonly reason: string };

export const MAX_URL_LENGTH = 2048;

/**
 * Checks an endpoint URL before any DNS lookup: scheme, credentials, and hosts that are addresses
 * (or `localhost`) in themselves. A hostname that passes still has every resolved address checked
 * when it is called.
 */
export function checkEndpointUrl(raw: string, policy: UrlPolicy): UrlCheck {
  if (raw.length > MAX_URL_LENGTH)
    return { ok: false, reason: `must be at most ${MAX_URL_LENGTH} characters` };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'is not a valid absolute URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return { ok: false, reason: 'must be an https URL' };
  if (url.protocol === 'http:' && policy.requireHttps) return { ok: false, reason: 'must use https' };
  if (url.username !== '' || url.password !== '')
    return {
      ok: false,
      reason: 'must not contain credentials; receivers authenticate deliveries by their signature',
    };
  // NOTE: port 0 names no port: a connection to it went to the scheme's default port instead.
  if (url.port === '0') return { ok: false, reason: 'must not name port 0' };
  // The WHATWG parser has already normalised IPv4 shorthand (0x7f.1, 2130706433) to dotted quads.
  // NOTE: node does no DNS lookup for an address literal, so this is the only check such a URL gets.
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  const category = host === 'localhost' || host.endsWith('.localhost') ? 'loopback' : classifyAddress(host);
  if (category !== undefined && !addressAllowed(category, policy))
    return { ok: false, reason: `must not point to a ${category} address` };
  return { ok: true, url };
}
