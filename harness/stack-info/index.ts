// stack.json: the facts about a running stack that are not deployment configuration (its URLs, dev
// accounts, processes), and the list of URLs the summary prints. Its own door, apart from the state dir's,
// so the short commands that read it (ctl, trace, save, replay, patch) load zod and little else.
export { StackInfo } from "./stack-info.ts";
export { STACK_URLS, type StackUrlKey } from "./urls.ts";
