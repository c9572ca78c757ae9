import { GENESIS_TIMESTAMP } from "./genesis.ts";

/** The committed genesis's blocks are mined this far apart from GENESIS_TIMESTAMP (buildGenesis's mineFrom, deploy.ts). */
const GENESIS_BLOCK_SECONDS = 12n;

/**
 * Whether a block is one of the committed genesis's (the genesis block and the fixtures' deployments), by
 * its fixed date: such a block is dated 2026-01-01 whenever the stack runs, so its age says nothing (a fresh
 * stack's head was "mined 330 d ago"). A block mined since, or a reorg's replacement, is dated by the clock.
 */
export function isGenesisBlock(number: number | bigint, timestamp: number | bigint): boolean {
  return BigInt(timestamp) === GENESIS_TIMESTAMP + GENESIS_BLOCK_SECONDS * BigInt(number);
}
