import { defineStackFixture, expect, test } from "queue-devstack/playwright";
import { seed, type SeedResult } from "queue-devstack";
import { dev, openApp, stateOf, track } from "./app.ts";

// An operation in every state (docs/seeding.md), seeded once per worker and restored for each test.
// The relayer is paused (the accepted send waits) and mining held (the submitted and included ones).
const demo = defineStackFixture("demo", (stack) => seed(stack, "demo"));
test.use({ stackFixture: demo });
// In order, on one worker: seeded once (3 to 4 s), then restored in milliseconds for each next test. A test
// of another file in between would reset the stack, and the next of these would seed again.
test.describe.configure({ mode: "default" });

test("renders the seeded operations, one in every state", async ({ page, stack, fixture }) => {
  const { operations } = fixture as SeedResult;
  await openApp(page, stack, { connect: false });
  for (const op of Object.values(operations)) await track(page, op.id, op.kind);
  for (const [state, op] of Object.entries(operations)) await expect(stateOf(page, op.id)).toHaveText(state);
});

test("follows an operation sent from the user's other device to confirmed", async ({ page, stack, fixture }) => {
  const { accepted } = (fixture as SeedResult).operations;
  await openApp(page, stack, { connect: false });
  await track(page, accepted.id, accepted.kind);
  await expect(stateOf(page, accepted.id)).toHaveText("accepted");
  await dev(stack, "mining", { mode: "auto" });
  await dev(stack, "relayer", { engine: "running" });
  await expect(stateOf(page, accepted.id)).toHaveText(/^(included|confirmed)$/); // another block may have confirmed it already
  await dev(stack, "mine", { blocks: 1 }); // its second confirmation
  await expect(stateOf(page, accepted.id)).toHaveText("confirmed");
});

test("notices a configuration change while an operation is pending, and settles that one first (rule 8)", async ({ page, stack, fixture }) => {
  const { accepted } = (fixture as SeedResult).operations;
  await openApp(page, stack, { connect: false });
  await track(page, accepted.id, accepted.kind);
  await expect(stateOf(page, accepted.id)).toHaveText("accepted");
  await dev(stack, "mining", { mode: "auto" }); // the alternate deployment is deployed on first use: it mines
  await stack.faults.serve("alternate");
  await expect(page.getByRole("alert")).toHaveText(`The configuration changed while ${accepted.id} was pending: checking it before preparing anything else.`);
  await expect(page.locator("#deployment")).toHaveText(`Waiting: ${accepted.id} of the previous deployment must settle first.`);
  await dev(stack, "relayer", { engine: "running" }); // the old deployment still relays it, at the same status route
  await expect(stateOf(page, accepted.id)).toHaveText(/^(included|confirmed)$/);
  await dev(stack, "mine", { blocks: 1 });
  await expect(stateOf(page, accepted.id)).toHaveText("confirmed");
  await expect(page.locator("#deployment")).toHaveText(/^Refused: the runtime serves a deployment you have not reviewed/); // rule 6 still
  await stack.faults.serve("original");
  await expect(page.locator("#deployment")).toHaveText(/^Deployment as reviewed/);
});
