import { describe, expect, it } from "vitest";
import { StatusQuery } from "../src/schemas/operation.ts";
import { keptPerId } from "../src/routes/status.ts";

type Verdict = { value?: unknown; error?: unknown };
const validatorOf = () => keptPerId({ schema: StatusQuery, httpPart: "querystring", method: "GET", url: "/api/queue/send-status" } as never) as (data: unknown) => Verdict;

describe("the status routes' query validator", () => {
  it("keeps an accepted id's verdict: the same frozen value for every poll of it", () => {
    const validate = validatorOf();
    const first = validate({ id: "op_1" });
    expect(first.value).toEqual({ id: "op_1" });
    expect(Object.isFrozen(first.value)).toBe(true);
    expect(validate({ id: "op_1" })).toBe(first);
  });

  it("keeps no refused id (one may be any 16 KB a client sends): each is judged again, with the same answer", () => {
    const validate = validatorOf();
    const long = "x".repeat(16_000);
    const first = validate({ id: long });
    expect(first.value).toBeUndefined();
    expect(first.error).toBeDefined();
    const again = validate({ id: long });
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
  });

  it("judges a query of other fields as the schema does", () => {
    const validate = validatorOf();
    expect(validate({ id: "op_1", extra: "1" }).error).toBeDefined();
    expect(validate({ id: ["a", "b"] }).error).toBeDefined();
  });
});
