// The example app's static server: the page, its script, the reviewed deployment data, and the ES
// modules of node_modules (viem and what it imports), so no bundler is needed. Loopback only, on a
// port from the OS; it prints its URL, which playwright.config.ts's webServer waits for.
import { readFile, readdir } from "node:fs/promises";
import { createServer } from "node:http";
import path from "node:path";
import { reviewedFrom } from "queue-devstack/client";

const here = import.meta.dirname;
const modules = path.join(here, "node_modules");

// Rule 6's reviewed deployment data. An app commits this after reviewing a deployment; the example
// reviews the one a dev-proof stack serves byte for byte, the manifest the package ships.
const manifest = path.join(modules, "queue-devstack", "contracts-fixtures", "genesis-dev-manifest.json");
const reviewed = JSON.stringify(reviewedFrom(JSON.parse(await readFile(manifest, "utf8"))));

/** The first export target a browser takes (conditions in the package's order, as bundlers read them). */
function browserTarget(value) {
  if (typeof value === "string") return value;
  if (Array.isArray(value)) return value.map(browserTarget).find(Boolean);
  if (value === null || typeof value !== "object") return undefined;
  for (const [condition, target] of Object.entries(value)) {
    if (["browser", "import", "module", "default"].includes(condition) && browserTarget(target)) return browserTarget(target);
  }
  return undefined;
}

/** An import map of every ES module package in `dir` (bare name → file URL), nested node_modules as scopes. */
async function importMap(dir, map = { imports: {}, scopes: {} }, scope = undefined) {
  const names = (await readdir(dir).catch(() => [])).filter((name) => !name.startsWith("."));
  const packages = (await Promise.all(names.map(async (name) => (name.startsWith("@") ? (await readdir(path.join(dir, name))).map((sub) => `${name}/${sub}`) : [name])))).flat();
  for (const name of packages) {
    const root = path.join(dir, name);
    const json = JSON.parse(await readFile(path.join(root, "package.json"), "utf8").catch(() => "{}"));
    const main = json.exports ?? json.module ?? (json.type === "module" ? json.main : undefined);
    const exports = typeof main === "object" && Object.keys(main ?? {}).some((key) => key.startsWith(".")) ? main : { ".": main };
    const url = `/${path.relative(here, root).split(path.sep).join("/")}`;
    const into = scope === undefined ? map.imports : (map.scopes[scope] ??= {});
    for (const [key, value] of Object.entries(exports)) {
      const found = browserTarget(value);
      const target = found === undefined || found.startsWith("./") ? found : `./${found}`;
      if (target === undefined || !/\.m?js$|\*$/.test(target)) continue; // CommonJS-only packages: a browser cannot load them
      if (key.endsWith("/*") && target.endsWith("*")) into[`${name}${key.slice(1, -1)}`] = `${url}${target.slice(1, -1)}`;
      else if (!key.includes("*")) into[`${name}${key.slice(1)}`] = `${url}${target.slice(1)}`;
    }
    await importMap(path.join(root, "node_modules"), map, `${url}/`);
  }
  return map;
}

const page = (await readFile(path.join(here, "index.html"), "utf8")).replace("<!-- importmap -->", `<script type="importmap">${JSON.stringify(await importMap(modules))}</script>`);
const TYPES = { ".html": "text/html", ".js": "text/javascript", ".mjs": "text/javascript", ".json": "application/json" };

const server = createServer(async (request, response) => {
  const url = new URL(request.url ?? "/", "http://localhost");
  const send = (status, type, body) => response.writeHead(status, { "content-type": `${type}; charset=utf-8` }).end(body);
  if (url.pathname === "/") return send(200, TYPES[".html"], page);
  if (url.pathname === "/reviewed.json") return send(200, TYPES[".json"], reviewed);
  // The app's script, and modules under node_modules: nothing else of the folder (the tests, this file).
  const file = path.join(here, path.normalize(decodeURIComponent(url.pathname)));
  const allowed = file === path.join(here, "app.js") || (file.startsWith(modules + path.sep) && TYPES[path.extname(file)]);
  const body = allowed ? await readFile(file).catch(() => undefined) : undefined;
  if (body === undefined) return send(404, "text/plain", "not found");
  send(200, TYPES[path.extname(file)], body);
});
server.listen(0, "127.0.0.1", () => console.log(`example app at http://127.0.0.1:${server.address().port}/`));
