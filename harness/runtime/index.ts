// The stack's queue runtime: its log kept in memory.
export { RecentLines } from "./recent-lines.ts";
