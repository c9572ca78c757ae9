import { createConfig, lintFromString } from "@redocly/openapi-core";
import { describe, expect, it } from "vitest";
import type { DevStack } from "../harness/index.ts";
import { DeploymentConfig } from "../src/config/deployment-config.ts";
import { HEALTH_PATH, METRICS_PATH, QUEUE_PATHS } from "../src/paths.ts";
import { PROBLEM_CONTENT_TYPE, PROBLEMS } from "../src/problem.ts";
import { DEV_PROBLEMS, STACK_PROBLEM_STATUS as PROBLEM_STATUS } from "../harness/dev/problems/index.ts";
import { CIRCUIT_BUILD_DIR, manifestBytes } from "../harness/deployment/index.ts";
import { buildQueueRuntime } from "../src/server.ts";
import { RELAYER_KEY } from "./support/chain.ts";
import { withQueueStack } from "./support/queue-stack.ts";

type Json = Record<string, any>;

let stack: DevStack;
let doc: Json;
withQueueStack({ client: false }, async (started) => {
  ({ stack } = started);
  const response = await fetch(`${stack.queueUrl}/api/queue/openapi.json`);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  doc = (await response.json()) as Json;
});

const get = (path: string, init?: RequestInit) => fetch(`${stack.queueUrl}${path}`, init);

const HTTP_METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
const PATH_ITEM_FIELDS = ["$ref", "summary", "description", "servers", "parameters", ...HTTP_METHODS];

/** Every path the runtime serves, in OpenAPI's template syntax; artifacts is a prefix of /{name}. */
// The spec's routes, and (this document is a dev stack's) the development-only controls.
/** An operation's replay (issue 33, item 2): its answer is a component of its own. */
const REPLAY_PATHS = ["/api/dev/operations/{id}/replay", "/api/dev/operations/{id}/replays"];
const DEV_PATHS = ["/api/dev/mine", "/api/dev/time", "/api/dev/mining", "/api/dev/drop", "/api/dev/reorg", "/api/dev/trace", "/api/dev/bundle", "/api/dev/relayer", "/api/dev/faults", "/api/dev/rpc", "/api/dev/revert-next", "/api/dev/config", "/api/dev/reset", "/api/dev/patch", "/api/dev/unpatch", "/api/dev/patches"];
const expectedPaths = [...Object.entries(QUEUE_PATHS).map(([key, path]) => (key === "artifacts" ? `${path}/{name}` : path)), HEALTH_PATH, METRICS_PATH, ...DEV_PATHS, ...REPLAY_PATHS];

function operations(): [path: string, method: string, operation: Json][] {
  return Object.entries(doc.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json)
      .filter(([key]) => HTTP_METHODS.includes(key))
      .map(([method, operation]) => [path, method, operation as Json] as [string, string, Json]),
  );
}

function refs(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v) => refs(v, found));
  else if (value !== null && typeof value === "object") {
    for (const [key, child] of Object.entries(value)) {
      if (key === "$ref" && typeof child === "string") found.push(child);
      else refs(child, found);
    }
  }
  return found;
}

describe("GET /api/queue/openapi.json", () => {
  it("is an OpenAPI 3.1 document, structurally", () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info.title).toBe("queue runtime");
    expect(doc.info.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(doc.info.description).toContain("private-payment system");
    expect(doc.info.description).toContain("RFC 9457");
    for (const code of Object.keys(PROBLEM_STATUS)) expect(doc.info.description).toContain(`\`${code}\``);
    expect(doc.swagger).toBeUndefined();

    expect(doc.paths).toBeTypeOf("object");
    for (const [path, item] of Object.entries(doc.paths as Json)) {
      expect(path).toMatch(/^\//);
      for (const key of Object.keys(item)) expect(PATH_ITEM_FIELDS).toContain(key);
    }
    const ops = operations();
    expect(ops.length).toBeGreaterThan(0);
    for (const [path, method, operation] of ops) {
      const where = `${method.toUpperCase()} ${path}`;
      expect(operation.summary, where).toBeTypeOf("string");
      expect(Object.keys(operation.responses ?? {}).length, where).toBeGreaterThan(0);
      for (const [status, response] of Object.entries(operation.responses as Json)) {
        expect(status, where).toMatch(/^(default|[1-5](\d\d|XX))$/);
        expect((response as Json).description, `${where} ${status}`).toBeTypeOf("string");
        for (const media of Object.values(((response as Json).content ?? {}) as Json)) expect(media, `${where} ${status}`).toHaveProperty("schema");
      }
      // Every {template} of the path is a required path parameter, and vice versa.
      const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      const pathParams = ((operation.parameters ?? []) as Json[]).filter((p) => p.in === "path");
      expect(pathParams.map((p) => p.name).sort(), where).toEqual(templated.sort());
      for (const p of pathParams) expect(p.required, where).toBe(true);
      for (const p of (operation.parameters ?? []) as Json[]) {
        expect(["query", "header", "path", "cookie"], where).toContain(p.in);
        expect(p.name, where).toBeTypeOf("string");
      }
    }
    // Every $ref points at something in the document.
    for (const ref of refs(doc)) {
      expect(ref).toMatch(/^#\/components\/schemas\/[^/]+$/);
      expect(doc.components.schemas, ref).toHaveProperty(ref.slice("#/components/schemas/".length));
    }
  });

  it("lists the dev routes' problem codes on a dev stack; an operator's runtime lists only its own (issue 42, item 4)", async () => {
    const listed = (description: string) => [...description.matchAll(/^\| `(\w+)` \| (\d+) \|$/gm)].map(([, code, status]) => [code, Number(status)]);
    expect(Object.fromEntries(listed(doc.info.description))).toEqual(PROBLEM_STATUS);
    const operator = await buildQueueRuntime({ manifest: manifestBytes(stack.manifest), rpcUrl: stack.rpcUrl, relayerPrivateKey: RELAYER_KEY, artifactsDir: CIRCUIT_BUILD_DIR });
    try {
      const own = (await operator.inject({ url: "/api/queue/openapi.json" })).json() as Json;
      expect(listed(own.info.description).map(([code]) => code).sort()).toEqual(Object.keys(PROBLEMS).sort());
      const described = JSON.stringify(own.paths);
      for (const code of Object.keys(DEV_PROBLEMS)) expect(described).not.toContain(`\`${code}\``);
    } finally {
      await operator.close();
    }
  });

  it("lists exactly the routes the runtime serves (not itself, not the docs page)", () => {
    expect(Object.keys(doc.paths).sort()).toEqual([...expectedPaths].sort());
    const methods = Object.fromEntries(Object.entries(doc.paths as Json).map(([path, item]) => [path, Object.keys(item).filter((k) => HTTP_METHODS.includes(k))]));
    expect(methods[QUEUE_PATHS.config]).toEqual(["get"]);
    expect(methods[QUEUE_PATHS.sendRelay]).toEqual(["post"]);
    expect(methods[QUEUE_PATHS.sendStatus]).toEqual(["get"]);
    // HEAD routes Fastify adds for GET are not listed.
    for (const list of Object.values(methods)) expect(list).not.toContain("head");
  });

  it("documents the zod schemas as components, referenced by the responses", () => {
    const schemas = doc.components.schemas as Json;
    expect(Object.keys(schemas)).toEqual(expect.arrayContaining(["DeploymentConfig", "Problem", "NetworkList", "AssetsSnapshot", "Operation"]));
    // Only what the paths use: an <id>Input variant only for a request body.
    expect(Object.keys(schemas).filter((id) => id.endsWith("Input")).sort()).toEqual(["FinalizeRequestInput", "QuoteRequestInput", "RelayRequestInput"]);
    const body = doc.paths[QUEUE_PATHS.sendRelay].post.requestBody.content["application/json"].schema;
    expect(body).toEqual({ $ref: "#/components/schemas/RelayRequestInput" });

    // Generated from the zod schema itself.
    expect(schemas.DeploymentConfig.type).toBe("object");
    expect([...schemas.DeploymentConfig.required].sort()).toEqual(Object.keys(DeploymentConfig.shape).sort());
    expect(schemas.DeploymentConfig.additionalProperties).toBe(false);
    expect(schemas.Problem.required).toEqual(expect.arrayContaining(["type", "title", "status", "detail", "code"]));
    // Status answers say which head their confirmations are counted from, and how old it is.
    expect(schemas.Operation.required).toEqual(expect.arrayContaining(["confirmations", "observedHead"]));
    expect(JSON.stringify(schemas.Operation.properties.observedHead)).toContain("ageMs");

    const config = doc.paths[QUEUE_PATHS.config].get;
    expect(config.description).toContain("spec §2.1");
    expect(config.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/DeploymentConfig" });
    expect(doc.paths[QUEUE_PATHS.networks].get.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/NetworkList" });
    expect(doc.paths["/api/dev/operations/{id}/replay"].post.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/ReplayAnswer" });
    expect(doc.paths[QUEUE_PATHS.assets].get.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/AssetsSnapshot" });

    const blockNumber = (doc.paths[QUEUE_PATHS.assets].get.parameters as Json[]).find((p) => p.name === "blockNumber");
    expect(blockNumber).toMatchObject({ in: "query", required: false, schema: { type: "string" } });
  });

  it("documents every problem response as application/problem+json with the Problem schema", () => {
    let problems = 0;
    for (const [path, method, operation] of operations()) {
      for (const [status, response] of Object.entries(operation.responses as Json)) {
        if (status !== "default" && Number(status) < 400) continue;
        problems++;
        expect(Object.keys(response.content), `${method} ${path} ${status}`).toEqual([PROBLEM_CONTENT_TYPE]);
        expect(response.content[PROBLEM_CONTENT_TYPE].schema).toEqual({ $ref: "#/components/schemas/Problem" });
      }
    }
    expect(problems).toBeGreaterThanOrEqual(expectedPaths.length);
    expect(doc.paths[QUEUE_PATHS.config].get.responses.default).toBeDefined();
    expect(doc.paths[QUEUE_PATHS.quote].post.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/Quote" });
  });

  it("does not break the 405/404 problems", async () => {
    const post = await get("/api/queue/openapi.json", { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET");
    expect(post.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(((await post.json()) as Json).code).toBe("method_not_allowed");

    const config = await get("/api/queue/config", { method: "DELETE" });
    expect(config.status).toBe(405);
    expect(((await config.json()) as Json).code).toBe("method_not_allowed");

    const missing = await get("/api/queue/docs/static/no-such-file.js");
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as Json).code).toBe("route_not_found");
  });
});

describe("GET /api/queue/docs", () => {
  it("answers an HTML page whose assets are all served locally (no CDN)", async () => {
    for (const path of ["/api/queue/docs", "/api/queue/docs/"]) {
      const response = await get(path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get("content-type"), path).toMatch(/^text\/html/);
      const html = await response.text();
      const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string);
      expect(assets.some((a) => a.endsWith("/swagger-ui-bundle.js")), path).toBe(true);
      for (const asset of assets) {
        const url = new URL(asset, `${stack.queueUrl}${path}`);
        expect(url.origin, asset).toBe(new URL(stack.queueUrl).origin);
        const served = await fetch(url);
        expect(served.status, url.pathname).toBe(200);
        if (asset.endsWith(".js")) expect(served.headers.get("content-type"), url.pathname).toMatch(/javascript/);
        await served.arrayBuffer();
      }
    }
  });

  it("shows the same document as /openapi.json", async () => {
    const response = await get("/api/queue/docs/json");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(doc);
  });
});

describe("the OpenAPI document, linted", () => {
  it("passes Redocly's recommended rules with no errors", async () => {
    const config = await createConfig({ extends: ["recommended"] });
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: "openapi.json", config });
    const show = (severity: string) =>
      problems.filter((p) => p.severity === severity).map((p) => `${p.ruleId}: ${p.message} (${p.location[0]?.pointer ?? ""})`);
    const warnings = show("warn");
    if (warnings.length > 0) console.log(`redocly: ${warnings.length} warning(s)\n  ${warnings.slice(0, 20).join("\n  ")}`);
    expect(show("error")).toEqual([]);
  });
});
