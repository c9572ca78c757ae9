/**
 * Whether If-None-Match names this ETag (RFC 9110 §13.1.2): `*`, or a list of entity tags compared weakly,
 * so `W/"x"` (a proxy that compressed the answer weakens its ETag) and `"a", "x"` match `"x"`.
 */
export function noneMatch(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  if (ifNoneMatch === etag) return true; // what a client sends back, checked first
  return ifNoneMatch.trim() === "*" || ifNoneMatch.split(",").some((tag) => tag.trim().replace(/^W\//, "") === etag);
}
