import type { FastifySchemaCompiler, FastifySchemaValidationError } from "fastify";
import { safeParse, type $ZodType } from "zod/v4/core";

/**
 * Validates a request part (body, query, params, headers) with its zod schema. An exception thrown
 * inside a schema (a refinement that throws) is bad input all the same: it becomes a 400 naming the
 * request part, never a 500. The schemas themselves must not throw; this is the safety net.
 */
export const validatorCompiler: FastifySchemaCompiler<$ZodType> =
  ({ schema }) =>
  (data) => {
    try {
      const result = safeParse(schema, data);
      if (result.success) return { value: result.data };
      return {
        error: result.error.issues.map(
          (issue): FastifySchemaValidationError => ({
            keyword: issue.code,
            instancePath: `/${issue.path.join("/")}`,
            schemaPath: `#/${issue.path.join("/")}/${issue.code}`,
            message: issue.message,
            params: {},
          }),
        ),
      };
    } catch {
      return { error: [{ keyword: "custom", instancePath: "/", schemaPath: "#/", message: "could not be validated", params: {} }] };
    }
  };
