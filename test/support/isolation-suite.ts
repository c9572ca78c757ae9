import { erc20Abi, parseUnits, type Address } from "viem";
import { closeProvers, createAccountKeys, recipientOf } from "../../harness/client/index.ts";
import { afterAll, defineStackFixture, describe, expect, test } from "../../harness/vitest/index.ts";
import { poolFixture } from "./pool.ts";

/**
 * Tests that collide unless each starts from a clean stack — the same nonce, the same exact balance, the
 * same nullifier spent through the queue — in shuffled order. Two files run it, so two workers run it
 * side by side, each on its own stack.
 */
export function isolationSuite(name: string): void {
  const PAYEE = "0x00000000000000000000000000000000000be11e" as Address;

  // A note deposited and a private send of it proven, once per stack: every test that names this
  // fixture starts with the note unspent and the same proof in hand.
  const provenSend = defineStackFixture("a proven send", async (stack) => {
    const pool = await poolFixture(stack);
    const alice = createAccountKeys();
    const { state, input } = await pool.fundedNote(3, alice, pool.usdc("10"));
    const fee = BigInt(stack.manifest.relayFees.fees.find((f) => f.asset === pool.asset)?.send ?? "0");
    const { transaction } = await pool.prove({
      tree: state.tree, keys: alice, inputs: [input],
      outputs: [{ amount: pool.usdc("10") - fee, to: recipientOf(createAccountKeys()) }],
      fee, relayer: stack.relayer.address,
    });
    return transaction;
  });
  afterAll(async () => {
    await closeProvers();
  });

  describe.shuffle(`isolation (${name})`, () => {
    test("the wallet's first transaction has nonce 0", async ({ walletClient, publicClient }) => {
      expect(await publicClient.getTransactionCount({ address: walletClient.account.address })).toBe(0);
      const hash = await walletClient.sendTransaction({ to: PAYEE, value: 1n });
      expect((await publicClient.getTransaction({ hash })).nonce).toBe(0);
    });

    for (const round of [1, 2]) {
      test(`an account impersonated through the testClient is not impersonated in the next test (${round})`, async ({ testClient, publicClient }) => {
        const send = () => testClient.request({ method: "eth_sendTransaction", params: [{ from: PAYEE, to: PAYEE, value: "0x0" }] } as never);
        await testClient.setBalance({ address: PAYEE, value: 10n ** 18n });
        await expect(send()).rejects.toThrow(); // funded, but not impersonated at the start of the test
        await testClient.impersonateAccount({ address: PAYEE });
        const hash = (await send()) as `0x${string}`;
        expect((await publicClient.waitForTransactionReceipt({ hash })).status).toBe("success");
      });
    }

    test("the payee holds exactly what this test paid it", async ({ walletClient, publicClient, manifest }) => {
      const usdc = manifest.assets.find((a) => a.decimals === 6)?.address as Address;
      const hash = await walletClient.writeContract({ address: usdc, abi: erc20Abi, functionName: "transfer", args: [PAYEE, parseUnits("1", 6)] });
      await publicClient.waitForTransactionReceipt({ hash });
      expect(await publicClient.readContract({ address: usdc, abi: erc20Abi, functionName: "balanceOf", args: [PAYEE] })).toBe(parseUnits("1", 6));
      expect(await publicClient.getBalance({ address: PAYEE })).toBe(0n);
    });

    for (const round of [1, 2]) {
      describe(`spending the fixture's note (${round})`, () => {
        test.override({ stackFixture: provenSend });
        test("the queue relays it to confirmed: the nullifier is unspent at the start of every test", async ({ queue, fixture }) => {
          const config = await queue.beforePrepare();
          const op = await queue.waitFor("send", (await queue.submit("send", config, fixture as never)).id);
          expect(op.state).toBe("confirmed");
        });
      });
    }
  });
}
