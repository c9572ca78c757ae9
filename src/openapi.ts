import type { SwaggerTransform, SwaggerTransformObject } from "@fastify/swagger";
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type RouteOptions } from "fastify";
import { $ZodType, globalRegistry } from "zod/v4/core";
import { API_PREFIX } from "./paths.ts";
import { Problem, PROBLEM_CONTENT_TYPE, PROBLEMS, type ProblemTable } from "./problem.ts";

/** The version of the queue API the document describes (info.version). */
export const QUEUE_API_VERSION = "0.1.0";

export const OPENAPI_PATHS = {
  /** The OpenAPI 3.1 document, generated from the routes' zod schemas. */
  document: `${API_PREFIX}/openapi.json`,
  /** Swagger UI over that document; its assets are served from `${docs}/static/`, nothing from a CDN. */
  docs: `${API_PREFIX}/docs`,
} as const;

/** A document's problem codes and their statuses: by status, then as declared (Array.prototype.sort is stable). */
type ProblemCodes = ReadonlyArray<[code: string, status: number]>;

const problemCodes = (table: ProblemTable): ProblemCodes => Object.entries(table).map(([code, row]): [string, number] => [code, row.status]).sort(([, a], [, b]) => a - b);

/**
 * Problem tables added to an app by what registers routes on it besides the runtime (a dev stack's dev
 * routes): its document lists their codes beside the runtime's own, an operator's lists only its own.
 */
const addedProblems = new WeakMap<FastifyInstance, ProblemTable>();

/** Lists `table`'s codes in `app`'s OpenAPI document (call it before the document's first request). */
export function documentProblems(app: FastifyInstance, table: ProblemTable): void {
  addedProblems.set(app, { ...addedProblems.get(app), ...table });
}

const description = (codes: ProblemCodes) => [
  "The queue runtime of the private-payment system: its deployment configuration, supported chains, funding assets, proof files, and relaying of private sends and withdrawals with their status.",
  "",
  "Every error is an [RFC 9457](https://www.rfc-editor.org/rfc/rfc9457) `application/problem+json` body with a stable `code` member (the `type` is `urn:queue-devstack:problem:<code>`). Clients switch on `code`:",
  "",
  "| code | status |",
  "| --- | --- |",
  ...codes.map(([code, status]) => `| \`${code}\` | ${status} |`),
  "",
  "This document is generated from the runtime's zod schemas: the schemas that validate requests and serialize responses.",
].join("\n");

const isZodSchema = (value: unknown): value is $ZodType => value instanceof $ZodType;

/** Schemas that say nothing about the body (z.any(), z.unknown()): the body is whatever the content type says. */
const isOpaque = (schema: $ZodType): boolean => schema._zod.def.type === "any" || schema._zod.def.type === "unknown";

function problemDescription(status: string, all: ProblemCodes): string {
  const codes = all.filter(([, s]) => String(s) === status).map(([code]) => `\`${code}\``);
  return codes.length > 0
    ? `Problem details (RFC 9457); \`code\`: ${codes.join(", ")}`
    : "An error, as problem details (RFC 9457); `code` says which (the codes are listed in the API description)";
}

/** "GET /api/queue/send-status" -> "getSendStatus": stable names for generated clients. */
function operationIdOf(method: string | string[], url: string): string {
  const words = url
    .replace(/^\/api\/queue\//, "/")
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  const verb = (Array.isArray(method) ? method[0] : method)?.toLowerCase() ?? "get";
  return verb + words.map((w) => w[0]?.toUpperCase() + w.slice(1)).join("");
}

/**
 * Before fastify-type-provider-zod turns the zod schemas into JSON Schema, give every response an
 * explicit media type and a description: a response declared as `Problem` is documented as
 * application/problem+json (what sendProblem sends), others as application/json with the schema's own
 * description. Only the document changes; the routes' serializers still see their zod schemas.
 */
type ZodProvider = typeof import("fastify-type-provider-zod");

const transformWith = ({ jsonSchemaTransform }: ZodProvider, codes: ProblemCodes): SwaggerTransform => (withoutId) => {
  const document = { ...withoutId, schema: { operationId: operationIdOf(withoutId.route.method, withoutId.url), ...withoutId.schema } } as typeof withoutId;
  const response = document.schema?.response as Record<string, unknown> | undefined;
  if (response === undefined || document.schema.hide) return jsonSchemaTransform(document as never);
  const responses: Record<string, unknown> = {};
  for (const [status, schema] of Object.entries(response)) {
    if (!isZodSchema(schema)) {
      responses[status] = schema; // already { description?, content }, or not ours to touch
    } else if (schema === Problem) {
      responses[status] = { description: problemDescription(status, codes), content: { [PROBLEM_CONTENT_TYPE]: { schema } } };
    } else {
      responses[status] = {
        description: globalRegistry.get(schema)?.description ?? "Success",
        content: { [isOpaque(schema) ? "*/*" : "application/json"]: { schema } },
      };
    }
  }
  return jsonSchemaTransform({ ...document, schema: { ...document.schema, response: responses } } as never);
};

/**
 * Components from schemas registered with `.meta({ id })`. fastify-type-provider-zod emits an input
 * (`<id>Input`) and an output (`<id>`) variant of every registered schema, and the registry is
 * process-wide; keep only the components the paths actually reference (transitively).
 */
const transformObjectWith = ({ jsonSchemaTransformObject }: ZodProvider): SwaggerTransformObject => (documentObject) => {
  const openapi = jsonSchemaTransformObject(documentObject) as { components?: { schemas?: Record<string, unknown> }; paths?: unknown };
  const all = openapi.components?.schemas ?? {};
  const used = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (value === null || typeof value !== "object") return;
    for (const [key, child] of Object.entries(value)) {
      if (key === "$ref" && typeof child === "string" && child.startsWith("#/components/schemas/")) {
        const id = child.slice("#/components/schemas/".length);
        if (!used.has(id)) {
          used.add(id);
          visit(all[id]);
        }
      } else {
        visit(child);
      }
    }
  };
  visit(openapi.paths);
  const schemas = Object.fromEntries(Object.entries(all).filter(([id]) => used.has(id)).sort(([a], [b]) => a.localeCompare(b)));
  return { ...openapi, components: { ...openapi.components, schemas } } as ReturnType<SwaggerTransformObject>;
};

/**
 * GET /api/queue/openapi.json and the Swagger UI docs page at GET /api/queue/docs. Both are made on their
 * first request (issue 32: nothing on the start path that the first requests do not need): @fastify/swagger
 * and @fastify/swagger-ui, their modules loaded then, in an app of their own that holds the routes as
 * declared here (recorded through onRoute, so call this before the route plugins), each with its schema
 * and a handler never called. Their answers are this app's, through its hooks (security headers, CORS,
 * problems): a path the docs app does not serve is this app's 404.
 */
export function registerOpenApi(app: FastifyInstance): void {
  const routes: RouteOptions[] = [];
  let docs: Promise<FastifyInstance> | undefined;
  const docsApp = () =>
    (docs ??= buildDocsApp(routes, problemCodes({ ...PROBLEMS, ...addedProblems.get(app) })).catch((error: unknown) => {
      docs = undefined; // the next request tries again
      throw error;
    }));
  app.addHook("onClose", async () => {
    await (await docs?.catch(() => undefined))?.close();
  });
  app.get(OPENAPI_PATHS.document, { schema: { hide: true } }, async (_request, reply) =>
    reply.type("application/json; charset=utf-8").send((await docsApp()).swagger()),
  );
  const forward = async (request: FastifyRequest, reply: FastifyReply) => {
    // Asked as a GET for a HEAD too: this app's HEAD answer then says the length of the body it leaves out.
    const answer = await (await docsApp()).inject({ method: "GET", url: request.url, headers: request.headers });
    if (answer.statusCode === 404) return reply.callNotFound();
    for (const [name, value] of Object.entries(answer.headers)) if (!HOP_HEADERS.has(name) && value !== undefined) reply.header(name, value);
    return reply.code(answer.statusCode).send(answer.rawPayload);
  };
  app.get(OPENAPI_PATHS.docs, { schema: { hide: true } }, forward);
  app.get(`${OPENAPI_PATHS.docs}/*`, { schema: { hide: true } }, forward);

  // Every route declared from here on, as the docs app declares it again.
  app.addHook("onRoute", (route) => {
    if (route.method !== "HEAD") routes.push(route);
  });
}

/** Set by the docs app's own answer, or by this app's. */
const HOP_HEADERS = new Set(["content-length", "transfer-encoding", "connection", "keep-alive", "date"]);

/** The routes declared as they were (the docs app makes their HEAD routes again), under @fastify/swagger and its UI. */
async function buildDocsApp(routes: readonly RouteOptions[], codes: ProblemCodes): Promise<FastifyInstance> {
  const [{ default: fastifySwagger }, { default: fastifySwaggerUi }, provider] = await Promise.all([import("@fastify/swagger"), import("@fastify/swagger-ui"), import("fastify-type-provider-zod")]);
  const docs = Fastify({ logger: false });
  // Its handlers never run: no schema is compiled (the zod ones would need the runtime's compilers).
  docs.setValidatorCompiler(() => () => true);
  docs.setSerializerCompiler(() => (data) => JSON.stringify(data));
  await docs.register(fastifySwagger, {
    openapi: {
      openapi: "3.1.0",
      info: { title: "queue runtime", version: QUEUE_API_VERSION, description: description(codes), license: { name: "MIT", identifier: "MIT" } },
      // Relative: the runtime that serves this document.
      servers: [{ url: "/", description: "this queue runtime" }],
      // No route needs credentials (spec §5): stated, not left out.
      security: [],
    },
    transform: transformWith(provider, codes),
    transformObject: transformObjectWith(provider),
  });
  for (const { method, url, schema, config } of routes) docs.route({ method, url, schema, config, handler: async () => null });
  await docs.register(fastifySwaggerUi, {
    routePrefix: OPENAPI_PATHS.docs,
    theme: { title: "queue runtime API" },
    uiConfig: { deepLinking: true, defaultModelsExpandDepth: 0 },
    // The page's own CSP (hashes of its inline code) replaces the API's strict one, for it alone.
    staticCSP: true,
    transformStaticCSP: (header: string) => header,
  });
  await docs.ready();
  return docs;
}
