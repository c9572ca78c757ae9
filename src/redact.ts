/**
 * Removes credentials from an RPC URL before it is shown, logged or written: userinfo, the query, and
 * path segments that look like API keys (Infura's /v3/<key>, Alchemy's /v2/<key>, ...).
 */
export function redactUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "<invalid url>";
  }
  const secretPath = url.pathname.split("/").some(looksLikeKey);
  if (!url.username && !url.password && !url.search && !url.hash && !secretPath) return raw;
  if (url.username || url.password) {
    url.username = "***";
    url.password = "";
  }
  if (url.search) url.search = "?***";
  url.pathname = url.pathname
    .split("/")
    .map((segment) => (looksLikeKey(segment) ? "***" : segment))
    .join("/");
  url.hash = "";
  return url.toString();
}

function looksLikeKey(segment: string): boolean {
  // Long runs of letters, digits, - and _ with at least one digit: keys, tokens, project ids.
  return segment.length >= 16 && /^[A-Za-z0-9_-]+$/.test(segment) && /[0-9]/.test(segment);
}

/** Replaces every credential-bearing part of a secret URL wherever it appears in a text (logs, errors). */
export function redactText(text: string, secretUrl: string | undefined): string {
  if (!secretUrl) return text;
  let url: URL;
  try {
    url = new URL(secretUrl);
  } catch {
    return text.split(secretUrl).join("<redacted url>");
  }
  const secrets = [
    secretUrl,
    url.username,
    url.password,
    url.search.slice(1),
    ...url.pathname.split("/").filter(looksLikeKey),
  ].filter((s) => s.length >= 4);
  let out = text;
  for (const secret of secrets.sort((a, b) => b.length - a.length)) {
    out = out.split(secret).join(secret === secretUrl ? redactUrl(secretUrl) : "***");
  }
  return out;
}
